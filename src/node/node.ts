// One cluster node, wired end to end: TCP transport, membership, sharding with the placement-store replica,
// the demo Counter type under external allocation (least-shard fallback), and the management HTTP API.
import type { FastifyInstance } from 'fastify';
import { Cluster } from '../cluster/cluster.js';
import { TcpTransport } from '../cluster/tcp-transport.js';
import type { NodeAddress } from '../cluster/address.js';
import { createLogger, type Logger } from '../logging.js';
import { createManagementServer } from '../management/server.js';
import { DurablePlacementStore, PlacementStore, openLmdbPersistence, type PlacementPersistence } from '../../crdt/index.js';
import { PlacementReplication, placementLogOf } from '../placement-replication/placement-replication.js';
import { ClusterSharding } from '../sharding/cluster-sharding.js';
import { ExternalAllocationController } from '../sharding/external-allocation-controller.js';
import { LeastShardAllocationStrategy, externalAllocationStrategy } from '../sharding/strategies/index.js';
import { resolveNodeConfig, type NodeConfig } from './config.js';
import { COUNTER_SHARDS, COUNTER_TYPE, counterBehavior, registerCounterRoutes } from './counter.js';
import { NodeManagementBackend } from './management-backend.js';
import { nodeMetricsSource } from './metrics-source.js';
import { startPauseDetector } from './pause-detector.js';

export interface RunningNode {
  readonly address: NodeAddress;
  /** Base URL of the management API, e.g. http://127.0.0.1:8551. */
  readonly httpUrl: string;
  readonly config: NodeConfig;
  readonly transport: TcpTransport;
  readonly cluster: Cluster;
  readonly sharding: ClusterSharding;
  readonly http: FastifyInstance;
  readonly counterPlacements: ExternalAllocationController;
  /** Graceful stop: hands this node's shards off, leaves the cluster, then closes everything. Idempotent. */
  stop(): Promise<void>;
  /** Resolves when the node stopped: by stop(), or because the cluster downed or removed it. */
  readonly stopped: Promise<StopReason>;
}

/** How a node stopped: a graceful leave, or the cluster put it out (downed, or removed by the other members). */
export type StopReason = 'left' | 'downed' | 'removed';

export async function startNode(input: Partial<NodeConfig> = {}, options: { logger?: Logger } = {}): Promise<RunningNode> {
  const config = resolveNodeConfig(input);
  const baseLogger = options.logger ?? createLogger({ level: config.logLevel });
  // Before any port is bound: a directory another node holds, or data that cannot be read, stops the
  // start here (the PersistenceError names the directory and how to recover).
  const persistence = config.dataDir === undefined ? undefined : await openLmdbPersistence(config.dataDir);
  if (persistence === undefined) {
    baseLogger.warn('placements are kept in memory only (no data directory): they do not survive a full-cluster restart');
  }
  let transport: TcpTransport;
  try {
    transport = await TcpTransport.start({
    system: config.system,
    host: config.host,
    port: config.port,
    ...(config.clusterSecret ? { secret: config.clusterSecret } : {}),
      logger: baseLogger,
    });
  } catch (error) {
    await persistence?.close().catch(() => undefined);
    throw error;
  }
  try {
    return await wire(config, baseLogger, transport, persistence);
  } catch (error) {
    // Invalid cluster or sharding settings surface here, after the port is bound: release it, or the
    // listening socket keeps the process alive and the port busy.
    await transport.close().catch(() => undefined);
    await persistence?.close().catch(() => undefined);
    throw error;
  }
}

/** The replica: rebuilt from `persistence` (before anything is served) when there is one. */
async function placementStore(
  node: string,
  config: NodeConfig,
  log: ReturnType<typeof placementLogOf>,
  persistence: PlacementPersistence | undefined,
): Promise<PlacementStore> {
  const options = { node, log, compactAfterItems: config.compactAfterItems };
  return persistence === undefined ? new PlacementStore(options) : DurablePlacementStore.open({ ...options, persistence });
}

async function wire(config: NodeConfig, baseLogger: Logger, transport: TcpTransport, persistence: PlacementPersistence | undefined): Promise<RunningNode> {
  const logger = baseLogger.child({ node: transport.self.toString() });
  const cluster = new Cluster({
    transport,
    logger: baseLogger, // the cluster binds the node address itself
    config: { ...config.cluster, seedNodes: config.seeds, appVersion: config.appVersion, roles: config.roles, attributes: config.attributes },
  });
  const placementLog = placementLogOf(logger.child({ component: 'sharding', part: 'placements' }));
  const store = await placementStore(transport.self.toString(), config, placementLog, persistence);
  if (store instanceof DurablePlacementStore) {
    const { path, logRecordsSinceSnapshot } = store.storageHealth();
    logger.info({ dataDir: path, restored: store.restored, logRecordsSinceSnapshot }, store.restored ? 'placements restored from disk' : 'placements stored on disk (empty data directory)');
  }
  let sharding: ClusterSharding | undefined;
  const placements = new PlacementReplication(store, transport, cluster, {
    antiEntropyIntervalMs: config.antiEntropyIntervalMs,
    log: placementLog,
    entityTypes: () => sharding?.entityTypes() ?? new Map(),
  });
  const metrics = nodeMetricsSource(cluster, store, () => sharding);
  sharding = new ClusterSharding({ transport, membership: cluster, config: config.sharding, logger, placements, events: metrics.hub });
  // Every placement written or removed is logged with its reason and author: the audit trail of pins.
  const counterPlacements = new ExternalAllocationController(sharding, COUNTER_TYPE, { logger: logger.child({ component: 'placements' }) });
  sharding.init({
    typeName: COUNTER_TYPE,
    behavior: counterBehavior,
    numberOfShards: COUNTER_SHARDS,
    allocationStrategy: externalAllocationStrategy(
      new LeastShardAllocationStrategy({ cluster }),
      counterPlacements.getState,
      { cluster, onWarning: (message, details) => logger.warn({ ...details, typeName: COUNTER_TYPE }, message) },
    ),
  });

  // Half of downAfterMs frozen is enough for the others to start downing this node; hold writes that long again.
  const { downAfterMs } = cluster.config;
  const pauses = startPauseDetector({
    thresholdMs: downAfterMs / 2,
    holdMs: downAfterMs,
    onPause: (pausedMs) => logger.warn({ pausedMs }, 'this process was frozen; placement writes are held until the cluster is heard from'),
  });
  const http = createManagementServer({
    backend: new NodeManagementBackend(cluster, sharding, placements, new Map([[COUNTER_TYPE, counterPlacements]]), {
      logger: logger.child({ component: 'placements' }),
      holding: pauses.holding,
    }),
    logger: logger.child({ part: 'http' }),
    limits: {
      bodyLimit: config.bodyLimit,
      ...(config.httpHeadersTimeoutMs !== undefined ? { headersTimeoutMs: config.httpHeadersTimeoutMs } : {}),
      requestTimeoutMs: config.httpRequestTimeoutMs,
      keepAliveTimeoutMs: config.httpKeepAliveTimeoutMs,
      maxConnections: config.httpMaxConnections,
    },
    ...(config.authToken ? { authToken: config.authToken } : {}),
    authReads: config.authReads,
    metrics,
  });
  registerCounterRoutes(http, sharding);

  let resolveStopped!: (how: StopReason) => void;
  const stopped = new Promise<StopReason>((resolve) => (resolveStopped = resolve));
  let stopping: Promise<void> | undefined;
  const closeAll = async (): Promise<void> => {
    // Sharding first: its shutdown fails pending asks at once, so in-flight HTTP requests end and the
    // server can close without waiting out their ask timeouts.
    await sharding.shutdown();
    placements.close();
    metrics.close();
    pauses.close();
    await http.close().catch(() => undefined);
    cluster.shutdown();
    await transport.close();
    // Last: commits what is pending, then releases the directory for the next incarnation.
    await persistence?.close().catch((error: unknown) => logger.warn({ err: String(error) }, 'closing the placement storage failed'));
  };
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      logger.info('leaving the cluster');
      await cluster.leave().catch((error: unknown) => logger.warn({ err: String(error) }, 'leave did not complete'));
      await closeAll();
      resolveStopped('left');
    })();
    return stopping;
  };
  // Downed or removed, the node is outside the cluster: it must stop hosting at once (its shards run
  // elsewhere) and stop taking requests. Both take the same path; a graceful leave, which also ends in
  // removal, is already under way in stop() and is left to finish there.
  const putOut = (how: 'downed' | 'removed', why: string): void => {
    if (stopping !== undefined) return;
    logger.error({ stoppedBecause: how }, `${why}; stopping`);
    stopping = closeAll().then(() => resolveStopped(how));
  };
  cluster.onSelfDown((cause) =>
    putOut('downed', cause === 'minority-side' ? 'this node downed itself: it was on the minority side of a partition' : 'this node was downed by the cluster'),
  );
  cluster.onSelfRemoved(() => putOut('removed', 'this node was removed from the cluster by the other members'));

  try {
    cluster.start();
    await http.listen({ host: config.httpHost, port: config.httpPort });
  } catch (error) {
    await closeAll();
    throw error;
  }
  const address = http.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.httpPort;
  const httpUrl = `http://${config.httpHost.includes(':') ? `[${config.httpHost}]` : config.httpHost}:${port}`;
  logger.info({ httpUrl }, 'node started');
  return { address: transport.self, httpUrl, config, transport, cluster, sharding, http, counterPlacements, stop, stopped };
}
