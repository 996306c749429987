// The `node` command: its flags, checked before anything starts (a bad value or a combination the cluster would
// refuse is a usage error, exit 2), mapped onto NodeConfigInput, and the run of the node in this process.
import type { RunningNode } from '../node/running-node.js';
import { Command, InvalidArgumentError, Option } from 'commander';
import { MAX_ATTRIBUTES, parseAttributeAssignment } from '../cluster/attributes.js';
import { DEFAULT_CLUSTER_CONFIG, resolveClusterConfig } from '../cluster/membership/config.js';
import { packageRelease } from '../cluster/transport/release.js';
import { ActorTsError } from '../errors.js';
import { clusterPortProblem, DEFAULT_NODE_CONFIG as D, type NodeConfig, type NodeConfigInput } from '../node/config.js';
import { onStopSignals } from '../node/node.js';
import { runNode } from '../node/run.js';
import type { FallbackStrategyName } from '../sharding/strategies/fallback-choice.js';
import { SHARD_ID_FUNCTIONS, type ShardIdFunction } from '../sharding/core/shard-id.js';
import { addressArg, fallbackOption, port, positiveInt, usage } from './operator-support.js';
import { parseEntityStore, type EntityStoreConfig } from '../entity-store/entity-store.js';

/** `--entity-store lmdb:DIR | postgres://...`. */
function entityStoreArg(value: string): EntityStoreConfig {
  try {
    return parseEntityStore(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

/** Runs the `node` command's node until it stops and resolves with the exit code; tests replace it. */
export type NodeCommandRunner = (input: NodeConfigInput) => Promise<number>;

/** Adds `node` to the program; it runs the node through `runNodeCommand` (default: runNodeProcess). */
export function addNodeCommand(program: Command, runNodeCommand: NodeCommandRunner = runNodeProcess): void {
  clusterOptions(securityOptions(program.command('node')))
    .description('start one cluster node (with the demo entity type Counter and the management API)')
    // No defaults here: an unset flag stays undefined and NodeConfig's default applies (help text quotes it).
    .option('--system <name>', `actor system name (default ${D.system})`)
    .option('--host <host>', `cluster transport host (default ${D.host})`)
    .option('--port <port>', `cluster transport port (default ${D.port})`, port)
    .option('--http-host <host>', `management API host (default ${D.http.host}: loopback unless you say otherwise)`)
    .option('--http-port <port>', `management API port (default ${D.http.port})`, port)
    .option(
      '--seed <address>',
      'seed node system@host:port (repeatable; default none: form a cluster of one)',
      collectAddress,
    )
    .option(
      '--app-version <version>',
      `application version (default this package's release, ${packageRelease()}: while members differ in it, new ` +
        'shards go to the newest and the fallback does not rebalance, so a rolling upgrade moves shards forward once)',
    )
    .option('--role <role>', 'node role (repeatable)', collect)
    .option(
      '--attribute <KEY=VALUE>',
      'node attribute that placement selectors match, e.g. zone=eu-west (repeatable)',
      collectAttribute,
    )
    .option('--rebalance-interval-ms <ms>', 'periodic rebalance interval', positiveInt)
    .addOption(fallbackOption())
    .option(
      '--data-dir <dir>',
      'keep placements in this directory (one node per directory) so they survive a restart (default: in memory only)',
    )
    .option(
      '--entity-store <store>',
      'where durable entity types keep their state: lmdb:DIR (one machine; node processes share the directory) or postgres://user@host:5432/db',
      entityStoreArg,
    )
    .option(
      '--compact-after-items <n>',
      `compact the placement store past this many history items (default ${D.compactAfterItems})`,
      positiveInt,
    )
    .option(
      '--http-max-connections <n>',
      `management API connections open at once (default ${D.http.maxConnections})`,
      positiveInt,
    )
    .option(
      '--http-request-timeout-ms <ms>',
      `a management request must arrive within this long (default ${D.http.requestTimeoutMs})`,
      positiveInt,
    )
    .option(
      '--restart-on-removal',
      'when the cluster downs or removes this node, restart it in-process as a new incarnation instead of exiting 1',
    )
    .option('--log-level <level>', `pino log level (default ${D.logLevel})`)
    .addOption(
      shardIdFunctionOption(
        `how the Counter type maps entity ids to shards (default ${D.shardIdFunction}); every node must agree`,
      ),
    )
    .action(async (options: NodeCliOptions, command: Command) => {
      const cluster = usage(command, () => clusterFlags(options));
      usage(command, () => {
        const problem = clusterPortProblem({
          host: options.host ?? D.host,
          clusterSecret: options.clusterSecret,
          insecureClusterPort: options.insecureClusterPort === true,
          tlsCa: options.tlsCa,
        });
        if (problem !== undefined) throw new InvalidArgumentError(`refusing to start: ${problem}`);
      });
      process.exitCode = await runNodeCommand(nodeConfigOf(options, cluster));
    });
}

/** How the membership judges its members: downing, the heartbeat ring, and how far a clock may be off. */
function clusterOptions(command: Command): Command {
  return command
    .option(
      '--down-after-ms <ms>',
      `down a member unreachable this long (default ${DEFAULT_CLUSTER_CONFIG.downAfterMs})`,
      positiveInt,
    )
    .option(
      '--stable-after-ms <ms>',
      'the leader decides a downing only once the merged reachability table has been unchanged this long ' +
        `(default: the --down-after-ms value, ${DEFAULT_CLUSTER_CONFIG.downAfterMs} when neither is given)`,
      positiveInt,
    )
    .option(
      '--monitored-by-nr-of-members <n>',
      `how many members heartbeat each member (default ${DEFAULT_CLUSTER_CONFIG.monitoredByNrOfMembers})`,
      positiveInt,
    )
    .option(
      '--max-clock-offset-ms <ms>',
      `refuse placement writes while this node's clock is further than this from its peers' median (default ${DEFAULT_CLUSTER_CONFIG.maxClockOffsetMs})`,
      positiveInt,
    );
}

/** Who may join the cluster and call the management API, and over what: the secret, tokens and certificates. */
function securityOptions(command: Command): Command {
  return command
    .addOption(new Option('--cluster-secret <secret>', 'shared secret peers must prove').env('ACTOR_TS_CLUSTER_SECRET'))
    .option(
      '--insecure-cluster-port',
      'allow a cluster port beyond loopback without --cluster-secret (a trusted network only)',
    )
    .addOption(new Option('--auth-token <token>', 'bearer token for the API write routes').env('ACTOR_TS_AUTH_TOKEN'))
    .option('--auth-reads', 'require the token for read routes too')
    .option(
      '--tls-cert <file>',
      'PEM certificate of this node for mutual TLS on the cluster port (with --tls-key, --tls-ca)',
    )
    .option('--tls-key <file>', 'PEM private key of --tls-cert')
    .option('--tls-ca <file>', "PEM certificates of the authority every peer's certificate must chain to")
    .option('--tls-subject <pattern>', "a regular expression every peer certificate's subject CN must match too")
    .option('--http-tls-cert <file>', 'PEM certificate of the management API: it then speaks HTTPS only')
    .option('--http-tls-key <file>', 'PEM private key of --http-tls-cert')
    .option(
      '--tokens-file <file>',
      'named bearer tokens with scopes (read, operate, admin), as SHA-256 hashes in JSON; every route but health then needs one',
    );
}

/** The node's configuration from its flags: an unset flag stays undefined, so NodeConfig's default applies. */
function nodeConfigOf(options: NodeCliOptions, cluster: NodeConfigInput['cluster']): NodeConfigInput {
  return {
    system: options.system,
    host: options.host,
    port: options.port,
    // The flags keep their names; the config takes them under `http`, with HttpConfig's field names.
    http: {
      host: options.httpHost,
      port: options.httpPort,
      maxConnections: options.httpMaxConnections,
      requestTimeoutMs: options.httpRequestTimeoutMs,
    },
    seeds: options.seed,
    // A CLI node's application is this package's own demo: its version is the release, so a rolling upgrade
    // steers shards toward the new release (least-shard prefers the newest) and pauses fallback rebalancing.
    appVersion: options.appVersion ?? packageRelease(),
    roles: options.role,
    attributes: options.attribute,
    clusterSecret: options.clusterSecret,
    insecureClusterPort: options.insecureClusterPort,
    authToken: options.authToken,
    authReads: options.authReads,
    tokensFile: options.tokensFile,
    tlsCert: options.tlsCert,
    tlsKey: options.tlsKey,
    tlsCa: options.tlsCa,
    tlsSubject: options.tlsSubject,
    httpTlsCert: options.httpTlsCert,
    httpTlsKey: options.httpTlsKey,
    logLevel: options.logLevel,
    cluster,
    sharding: options.rebalanceIntervalMs !== undefined ? { rebalanceIntervalMs: options.rebalanceIntervalMs } : {},
    compactAfterItems: options.compactAfterItems,
    dataDir: options.dataDir,
    entityStore: options.entityStore,
    restartOnRemoval: options.restartOnRemoval,
    fallback: options.fallback,
    shardIdFunction: options.shardIdFunction,
  };
}

/** Starts the node in this process and runs it until it is told to stop; resolves with the exit code. */
async function runNodeProcess(input: NodeConfigInput): Promise<number> {
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  onStopSignals(onSignal);
  // Started by local-cluster (an IPC channel to it): stop when that parent goes, however it goes.
  if (process.channel) process.once('disconnect', onSignal);
  // SIGHUP reads the tokens file and the TLS files again at once (they are followed on disk anyway).
  let current: RunningNode | undefined;
  const onHangUp = (): void => current?.reloadFiles();
  process.on('SIGHUP', onHangUp);
  const how = await runNode(input, { signal: stop.signal, onStarted: (node) => (current = node) });
  process.off('SIGHUP', onHangUp);
  process.channel?.unref();
  // The node logged why it stopped (one line); the exit code says whether that was asked for.
  return how === 'left' ? 0 : 1;
}

/** The flags that name a cluster setting, by ClusterConfig field. */
const CLUSTER_FLAGS = {
  downAfterMs: '--down-after-ms',
  stableAfterMs: '--stable-after-ms',
  monitoredByNrOfMembers: '--monitored-by-nr-of-members',
  maxClockOffsetMs: '--max-clock-offset-ms',
} as const;

/**
 * The cluster overrides the flags ask for, checked as the cluster will check them (some values are only
 * refused in combination: the minority's downing deadline derives from --stable-after-ms), so a refusal is a
 * usage error naming the flags before anything starts. Throws InvalidArgumentError.
 */
export function clusterFlags(options: Pick<NodeCliOptions, keyof typeof CLUSTER_FLAGS>): NodeConfig['cluster'] {
  const cluster: { -readonly [K in keyof typeof CLUSTER_FLAGS]?: number } = {};
  for (const key of Object.keys(CLUSTER_FLAGS) as Array<keyof typeof CLUSTER_FLAGS>) {
    const value = options[key];
    if (value !== undefined) cluster[key] = value;
  }
  try {
    resolveClusterConfig(cluster);
  } catch (error) {
    if (!(error instanceof ActorTsError)) throw error;
    const given = Object.entries(cluster).map(
      ([key, value]) => `${CLUSTER_FLAGS[key as keyof typeof CLUSTER_FLAGS]} ${String(value)}`,
    );
    throw new InvalidArgumentError(`${error.message} (from ${given.length > 0 ? given.join(' ') : 'the defaults'})`);
  }
  return cluster;
}

/** Every field is undefined when its flag was not given: NodeConfig's defaults apply. */
export interface NodeCliOptions {
  system?: string;
  host?: string;
  port?: number;
  httpHost?: string;
  httpPort?: number;
  seed?: string[];
  appVersion?: string;
  role?: string[];
  attribute?: Record<string, string>;
  clusterSecret?: string;
  insecureClusterPort?: boolean;
  authToken?: string;
  authReads?: boolean;
  tokensFile?: string;
  tlsCert?: string;
  tlsKey?: string;
  tlsCa?: string;
  tlsSubject?: string;
  httpTlsCert?: string;
  httpTlsKey?: string;
  downAfterMs?: number;
  stableAfterMs?: number;
  monitoredByNrOfMembers?: number;
  maxClockOffsetMs?: number;
  rebalanceIntervalMs?: number;
  compactAfterItems?: number;
  dataDir?: string;
  entityStore?: EntityStoreConfig;
  httpMaxConnections?: number;
  httpRequestTimeoutMs?: number;
  restartOnRemoval?: boolean;
  fallback?: FallbackStrategyName;
  logLevel?: string;
  shardIdFunction?: ShardIdFunction;
}

/** `--shard-id-function <name>`, one of SHARD_ID_FUNCTIONS (anything else is a usage error). */
export function shardIdFunctionOption(description: string): Option {
  return new Option('--shard-id-function <name>', description).choices(SHARD_ID_FUNCTIONS);
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

function collectAttribute(value: string, previous: Record<string, string> | undefined): Record<string, string> {
  let key: string;
  let item: string;
  try {
    [key, item] = parseAttributeAssignment(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
  const attributes = { ...previous };
  if (Object.hasOwn(attributes, key) && attributes[key] !== item)
    throw new InvalidArgumentError(`attribute ${key} is given twice with different values`);
  if (!Object.hasOwn(attributes, key) && Object.keys(attributes).length >= MAX_ATTRIBUTES) {
    throw new InvalidArgumentError(`at most ${MAX_ATTRIBUTES} attributes are allowed`);
  }
  return Object.assign(Object.create(null) as Record<string, string>, attributes, Object.fromEntries([[key, item]]));
}

function collectAddress(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), addressArg(value)];
}
