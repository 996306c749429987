// One cluster node, wired end to end: TCP transport, membership, sharding with the placement-store replica,
// the application's entity types under external allocation (or, without any, the demo Counter with its
// routes), the management HTTP API and the application's own routes on the same server.
import type { FastifyInstance } from 'fastify';
import { Cluster } from '../cluster/membership/cluster.js';
import { parseProtocolRange, type ProtocolRange } from '../cluster/transport/protocol-versions.js';
import { TcpTransport } from '../cluster/transport/tcp-transport.js';
import { isGone } from '../cluster/member.js';
import { createLogger, type Logger } from '../logging.js';
import {
  DurablePlacementStore,
  PlacementStore,
  openLmdbPersistence,
  type PlacementPersistence,
} from '../../crdt/index.js';
import { PlacementReplication, placementLogOf } from '../placement-replication/placement-replication.js';
import { ClusterSharding } from '../sharding/cluster-sharding.js';
import { fallbackStrategy, requireFallbackStrategyName } from '../sharding/strategies/index.js';
import type { ExternalAllocationController } from '../sharding/api/external-allocation-controller.js';
import { checkApplication, controllerOf, initEntityTypes, type NodeApplication } from './application.js';
import { registerAppRoutes } from './app-routes.js';
import type { RunningNode } from './running-node.js';
import { lifecycleOf } from './node-lifecycle.js';

export type { RunningNode, StopReason } from './running-node.js';
import { resolveNodeConfig, type NodeConfig, type NodeConfigInput } from './config.js';
import { COUNTER_TYPE, demoTypes, registerCounterRoutes } from './counter.js';
import { failoverTimeline, followFailovers } from './failover-wiring.js';
import { nodeMetricsSource } from './metrics-source.js';
import { startPauseDetector } from './pause-detector.js';
import { loadTokensFile } from '../management/tokens-file.js';
import { checkEntityStoreConfig } from '../entity-store/entity-store.js';
import { NodeEntityStore } from './node-entity-store.js';
import { FollowedTls } from '../tls/followed-tls.js';
import { loadTlsMaterial } from '../tls/tls-files.js';
import { clusterTlsFiles, managementTlsFiles, tlsSubjectOf } from './node-security.js';
import { serveManagement } from './node-management.js';

/** A node's settings and the application it runs (see NodeApplication). */
export type StartNodeInput = NodeConfigInput &
  NodeApplication & {
    /**
     * Leave the cluster gracefully on SIGTERM and SIGINT (the shards move with their state, then the node closes),
     * as the CLI does; default false: an embedding application usually handles signals itself and calls `stop()`.
     * The process exits once nothing else keeps it alive.
     */
    readonly handleSignals?: boolean;
  };

/** StartNodeInput's keys beyond NodeConfig's. */
export const START_NODE_KEYS = ['entityTypes', 'httpRoutes', 'handleSignals'] as const;

/**
 * Starts one node wired end to end, as the CLI does: TCP transport, membership, the placement store replica (durable
 * with `dataDir`), sharding with the application's entity types (or the demo Counter) under external allocation, the
 * management API and the application's routes. Bad settings or application input reject with a typed error and
 * release every port.
 */
export async function startNode(input: StartNodeInput = {}, options: { logger?: Logger } = {}): Promise<RunningNode> {
  const { entityTypes, httpRoutes, handleSignals, ...settings } = input;
  const app: NodeApplication = {
    ...(entityTypes === undefined ? {} : { entityTypes }),
    ...(httpRoutes === undefined ? {} : { httpRoutes }),
  };
  const config = resolveNodeConfig(settings, START_NODE_KEYS);
  // Before anything is opened or bound: bad application input leaves nothing behind.
  checkApplication(app, config.entityStore !== undefined);
  if (config.entityStore !== undefined) checkEntityStoreConfig(config.entityStore);
  // Refused before anything is opened or bound, as a bad flag is.
  requireFallbackStrategyName(config.fallback);
  if (config.tokensFile !== undefined) loadTokensFile(config.tokensFile);
  // Likewise the management API's certificate and key: checked (and thrown away) before any port is bound.
  const httpsFiles = managementTlsFiles(config);
  if (httpsFiles !== undefined) loadTlsMaterial(httpsFiles);
  const tlsFiles = clusterTlsFiles(config);
  const subject = tlsSubjectOf(config);
  const baseLogger = options.logger ?? createLogger({ level: config.logLevel });
  let transport: TcpTransport | undefined;
  // Read and checked once, here, before anything is opened or bound (a bad file throws TlsFileError), then followed.
  const clusterTls =
    tlsFiles === undefined
      ? undefined
      : new FollowedTls(tlsFiles, {
          purpose: 'cluster TLS',
          logger: baseLogger,
          onChange: (m) => transport?.useTls(m),
        });
  // Before any port is bound: a directory another node holds, or data that cannot be read, stops the
  // start here (the PersistenceError names the directory and how to recover).
  const persistence = await openPersistence(config.dataDir).catch((error: unknown) => {
    clusterTls?.close();
    throw error;
  });
  const entityStore = await NodeEntityStore.open(config.entityStore, baseLogger).catch(async (error: unknown) => {
    clusterTls?.close();
    await persistence?.close().catch(() => undefined);
    throw error;
  });
  if (persistence === undefined) {
    baseLogger.warn(
      'placements are kept in memory only (no data directory): they do not survive a full-cluster restart',
    );
  }
  try {
    transport = await TcpTransport.start({
      system: config.system,
      host: config.host,
      port: config.port,
      ...(config.clusterSecret ? { secret: config.clusterSecret } : {}),
      ...(clusterTls === undefined ? {} : { tls: { current: () => clusterTls.current, subject } }),
      ...protocolRangeOverride(),
      logger: baseLogger,
    });
  } catch (error) {
    clusterTls?.close();
    await persistence?.close().catch(() => undefined);
    await entityStore?.close();
    throw error;
  }
  try {
    const node = await wire(config, app, baseLogger, transport, { persistence, clusterTls, entityStore });
    if (handleSignals === true) leaveOnSignals(node);
    return node;
  } catch (error) {
    // Invalid cluster or sharding settings surface here, after the port is bound: release it, or the
    // listening socket keeps the process alive and the port busy.
    await transport.close().catch(() => undefined);
    await persistence?.close().catch(() => undefined);
    await entityStore?.close();
    clusterTls?.close();
    throw error;
  }
}

/** What a node opened before it bound its ports, and hands to its wiring (which closes them when it stops). */
/** The node's runtime before any entity type: membership, the replicated placements, metrics and sharding. */
async function runtimeOf(
  config: NodeConfig,
  baseLogger: Logger,
  logger: Logger,
  transport: TcpTransport,
  { persistence, entityStore }: Omit<Opened, 'clusterTls'>,
) {
  const timeline = failoverTimeline(logger);
  const cluster = clusterOf(config, transport, baseLogger, timeline);
  trustMembers(transport, cluster);
  const placementLog = placementLogOf(logger.child({ component: 'sharding', part: 'placements' }));
  const store = await placementStore(transport.self.toString(), config, placementLog, persistence);
  logStorage(store, logger);
  let sharding: ClusterSharding | undefined;
  const placements = new PlacementReplication(store, transport, cluster, {
    antiEntropyIntervalMs: config.antiEntropyIntervalMs,
    log: placementLog,
    entityTypes: () => sharding?.entityTypes() ?? new Map(),
  });
  const metrics = nodeMetricsSource(cluster, store, () => sharding, transport, placements, entityStore);
  const failovers = followFailovers(cluster, timeline, metrics.hub);
  const created = new ClusterSharding({
    transport,
    membership: cluster,
    config: config.sharding,
    logger,
    placements,
    events: failovers.events,
    ...(entityStore === undefined ? {} : { entityStore: entityStore.context }),
  });
  sharding = created;
  return { cluster, placements, metrics, failovers, sharding: created };
}

interface Opened {
  readonly persistence: PlacementPersistence | undefined;
  readonly clusterTls: FollowedTls | undefined;
  readonly entityStore: NodeEntityStore | undefined;
}

/**
 * Without a cluster secret anyone who reaches the cluster port completes the handshake; the members' frames keep
 * room in the transport's shared inbound budget all the same (strangers holding it are disconnected for them).
 */
function trustMembers(transport: TcpTransport, cluster: Cluster): void {
  const members = new Set<string>();
  const refresh = (): void => {
    members.clear();
    for (const member of cluster.members()) if (!isGone(member.status)) members.add(member.address.toString());
  };
  refresh();
  cluster.onChange(refresh);
  transport.trustPeers((peer) => members.has(peer.toString()));
}

/** The replica: rebuilt from `persistence` (before anything is served) when there is one. */
async function placementStore(
  node: string,
  config: NodeConfig,
  log: ReturnType<typeof placementLogOf>,
  persistence: PlacementPersistence | undefined,
): Promise<PlacementStore> {
  const options = { node, log, compactAfterItems: config.compactAfterItems };
  return persistence === undefined
    ? new PlacementStore(options)
    : DurablePlacementStore.open({ ...options, persistence });
}

async function wire(
  config: NodeConfig,
  app: NodeApplication,
  baseLogger: Logger,
  transport: TcpTransport,
  { persistence, clusterTls, entityStore }: Opened,
): Promise<RunningNode> {
  const logger = baseLogger.child({ node: transport.self.toString() });
  const { cluster, placements, metrics, failovers, sharding } = await runtimeOf(config, baseLogger, logger, transport, {
    persistence,
    entityStore,
  });
  const fallback = (numberOfShards?: number) => fallbackStrategy(config.fallback, cluster, numberOfShards);
  const controllers = initEntityTypes(sharding, cluster, app.entityTypes ?? demoTypes(config), logger, fallback);
  const placementsOf = controllerOf(controllers);

  const pauses = detectPauses(cluster.config.downAfterMs, logger);
  const { http, security } = serveManagement(config, logger, clusterTls, {
    cluster,
    sharding,
    placements,
    controllers,
    transport,
    metrics,
    holding: pauses.holding,
    entityStore,
  });
  if (app.entityTypes === undefined) registerCounterRoutes(http, sharding);

  const { stop, stopped, closeAll } = lifecycleOf(logger, cluster, [
    // Sharding first: its shutdown fails pending asks at once, so in-flight HTTP requests end and the
    // server can close without waiting out their ask timeouts.
    () => sharding.shutdown(),
    () => placements.close(),
    () => metrics.close(),
    () => security.close(),
    () => failovers.stop(),
    () => pauses.close(),
    () => http.close().catch(() => undefined),
    () => cluster.shutdown(),
    () => transport.close(),
    async () => entityStore?.close(),
    // Last: commits what is pending, then releases the directory for the next incarnation.
    async () =>
      persistence
        ?.close()
        .catch((error: unknown) => logger.warn({ err: String(error) }, 'closing the placement storage failed')),
  ]);

  const node: RunningNode = {
    address: transport.self,
    get httpUrl(): string {
      return httpUrlOf(http, config);
    },
    config,
    transport,
    cluster,
    sharding,
    http,
    placements: placementsOf,
    get counterPlacements(): ExternalAllocationController {
      return placementsOf(COUNTER_TYPE);
    },
    stop,
    stopped,
    reloadFiles: () => security.reload(),
  };
  try {
    // Before the node joins or binds its HTTP port: routes that cannot be registered stop the start here.
    if (app.httpRoutes !== undefined) await registerAppRoutes(http, app.httpRoutes, node, security.access);
    cluster.start();
    await http.listen({ host: config.http.host, port: config.http.port });
  } catch (error) {
    await closeAll();
    throw error;
  }
  logger.info({ httpUrl: node.httpUrl }, 'node started');
  return node;
}

/** Known once the server listens (port 0 picks one): routes registered before that read it per request. */
function httpUrlOf(http: FastifyInstance, config: NodeConfig): string {
  const address = http.server.address();
  const { host } = config.http;
  const port = typeof address === 'object' && address !== null ? address.port : config.http.port;
  const scheme = config.httpTlsCert === undefined ? 'http' : 'https';
  return `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * ACTOR_TS_PROTOCOL_RANGE=min-max makes this node speak another range of protocol versions than its release's: for
 * tests that fake a node of another release (test/upgrade). A value that does not parse refuses the start.
 */
function protocolRangeOverride(): { protocolRange?: ProtocolRange } {
  const text = process.env['ACTOR_TS_PROTOCOL_RANGE'];
  return text === undefined || text === '' ? {} : { protocolRange: parseProtocolRange(text) };
}

/**
 * Calls `stop` on the first SIGTERM or SIGINT, as the CLI's node and `handleSignals` both need; returns the remover.
 * Without a listener Node.js would exit at once on either signal, with no graceful leave.
 */
export function onStopSignals(stop: () => void): () => void {
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  return () => {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
  };
}

/** SIGTERM or SIGINT makes `node` leave gracefully; the listeners go with the node. */
function leaveOnSignals(node: RunningNode): void {
  const remove = onStopSignals(() => void node.stop());
  void node.stopped.finally(remove);
}

/** Half of downAfterMs frozen is enough for the others to start downing this node; hold writes that long again. */
function detectPauses(downAfterMs: number, logger: Logger): ReturnType<typeof startPauseDetector> {
  return startPauseDetector({
    thresholdMs: downAfterMs / 2,
    holdMs: downAfterMs,
    onPause: (pausedMs) =>
      logger.warn({ pausedMs }, 'this process was frozen; placement writes are held until the cluster is heard from'),
  });
}

/** Where a durable store keeps its placements, and whether it found some there. */
function logStorage(store: PlacementStore, logger: Logger): void {
  if (store.durability === undefined) return;
  const { path, logRecordsSinceSnapshot, restored } = store.durability.storageHealth();
  logger.info(
    { dataDir: path, restored, logRecordsSinceSnapshot },
    restored ? 'placements restored from disk' : 'placements stored on disk (empty data directory)',
  );
}

/** This node's membership over `transport`, from the node's settings. */
function clusterOf(
  config: NodeConfig,
  transport: TcpTransport,
  baseLogger: Logger,
  timeline: ReturnType<typeof failoverTimeline>,
): Cluster {
  return new Cluster({
    transport,
    failoverTimeline: timeline,
    logger: baseLogger, // the cluster binds the node address itself
    config: {
      ...config.cluster,
      seedNodes: config.seeds,
      appVersion: config.appVersion,
      roles: config.roles,
      attributes: config.attributes,
    },
  });
}

/** The placement store's persistence in `dataDir`, or undefined to keep placements in memory. */
async function openPersistence(dataDir: string | undefined): Promise<PlacementPersistence | undefined> {
  return dataDir === undefined ? undefined : openLmdbPersistence(dataDir);
}
