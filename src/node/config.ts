// Everything one node process is started with: one typed object, every field documented with its default.
import type { EntityStoreConfig } from '../entity-store/entity-store.js';
import { DEFAULT_COMPACT_AFTER_ITEMS } from '../../crdt/index.js';
import type { ClusterConfigInput } from '../cluster/membership/config.js';
import { DEFAULT_HTTP_CONFIG, resolveHttpLimits, type HttpConfig } from '../management/limits.js';
import type { ShardingConfig } from '../sharding/core/config.js';
import type { FallbackStrategyName } from '../sharding/strategies/fallback-choice.js';
import type { ShardIdFunction } from '../sharding/core/shard-id.js';
import { refuseUnknownKeys } from './known-keys.js';

/** Everything one node is started with (`startNode`, the CLI's `node` command); each field says its default. */
export interface NodeConfig {
  /** Actor system name, the `system` of `system@host:port`; default 'app'. */
  readonly system: string;
  /** Host the cluster transport listens on and advertises; default '127.0.0.1'. */
  readonly host: string;
  /** Cluster transport port; default 7701 (0 picks a free one). */
  readonly port: number;
  /** Seed nodes (`system@host:port`); default none: the node forms a cluster of its own. */
  readonly seeds: ReadonlyArray<string>;
  /** Application version, preferred by least-shard allocation during rolling updates; default '1.0.0'. */
  readonly appVersion: string;
  /** Roles of this node; default none. */
  readonly roles: ReadonlyArray<string>;
  /**
   * Attributes of this node (`{ zone: 'eu-west' }`), gossiped with its member record; placement selectors
   * such as `zone=eu-west` match them. Keys and values match `[A-Za-z0-9_.-]{1,64}`; default none.
   */
  readonly attributes: Readonly<Record<string, string>>;
  /** Shared secret every node must prove (HMAC) to join; default none (any peer may connect). */
  readonly clusterSecret: string | undefined;
  /**
   * Start with the cluster port bound beyond loopback and no `clusterSecret` (clusterPortProblem); default
   * false: such a node refuses to start, since anyone who reaches the port could join and speak for it.
   */
  readonly insecureClusterPort: boolean;
  /** Bearer token for the management API's write routes; default none (open: bind to loopback). */
  readonly authToken: string | undefined;
  /** With `authToken`, protect the read routes too; default false. */
  readonly authReads: boolean;
  /**
   * A JSON file of named bearer tokens with scopes (TokensFile: `read`, `operate`, `admin`; only their SHA-256 is
   * stored); default none. With it every route but `/actor-ts/health` needs a token whose scopes cover it, and what a
   * token writes names it when the request names nobody. Read at start (a bad file refuses the start) and again on
   * every change (a bad change leaves the earlier tokens in force and health degraded). `authToken` keeps working
   * beside it as one token with every scope.
   */
  readonly tokensFile: string | undefined;
  /**
   * PEM certificate and key of the management API, console and metrics: with both, that port speaks HTTPS only
   * (TLS 1.2 or later); default none (plain HTTP). Checked at start (a file that does not parse, a key that does not
   * match, a certificate not valid now refuse the start, naming the file) and read again whenever a file changes:
   * new connections get the new certificate, established ones keep theirs, and a bad change is kept out and said
   * in health.
   */
  readonly httpTlsCert: string | undefined;
  readonly httpTlsKey: string | undefined;
  /**
   * Mutual TLS on the cluster port: this node's PEM certificate and key, and the authority every peer's certificate
   * must chain to. All three or none; default none. Every connection, both directions, is then TLS 1.3 with both
   * certificates checked before any message is read; a peer without one of this authority, or speaking plain TCP,
   * is refused (logged once per peer and interval, counted). Works alone or beside `clusterSecret`. Checked at start
   * and followed on disk like the management API's (new connections take a change; a bad one is kept out and said
   * in health).
   */
  readonly tlsCert: string | undefined;
  readonly tlsKey: string | undefined;
  readonly tlsCa: string | undefined;
  /**
   * With mutual TLS: a regular expression every peer certificate's subject common name must match as well (both
   * directions), e.g. `^node-[0-9]+\\.prod$`; a certificate of the authority that does not is refused
   * (`unexpected_subject`). Default none: any certificate of the authority.
   */
  readonly tlsSubject: string | undefined;
  /**
   * The management HTTP server (HttpConfig, defaults DEFAULT_HTTP_CONFIG): `host` ('127.0.0.1') and `port` (8551),
   * `bodyLimit` (1 MiB), `headersTimeoutMs` (10 s, or requestTimeoutMs when shorter), `requestTimeoutMs` (30 s),
   * `keepAliveTimeoutMs` (5 s), `maxConnections` (128) and `maxConnectionsPerClient` (32). Given in part (as
   * NodeConfigInput), the rest takes its default; passed to the server as it is.
   */
  readonly http: HttpConfig;
  /** pino level; default 'info'. */
  readonly logLevel: string;
  /** Anti-entropy interval of placement replication; default 1000 ms. */
  readonly antiEntropyIntervalMs: number;
  /**
   * Directory where this node keeps its placements (an lmdb file, locked while the node runs): with it,
   * acknowledged writes survive a full-cluster restart; default undefined: in memory only (logged once).
   */
  readonly dataDir: string | undefined;
  /**
   * Where durable entity types (`durable: true`) keep their state: `{ kind: 'lmdb', dir }` (one machine, every
   * node process on it sharing the directory) or `{ kind: 'postgres', url }` (a real cluster); the CLI's
   * `--entity-store lmdb:DIR` or `--entity-store postgres://...`. Default undefined: a durable type is refused.
   */
  readonly entityStore: EntityStoreConfig | undefined;
  /** The placement store compacts past this many history items (see PlacementStore); default 100,000. */
  readonly compactAfterItems: number;
  /**
   * When the cluster downs or removes this node, start it again in the same process as a new incarnation
   * (fresh transport, membership and sharding on the same ports) that joins through the seeds, instead of
   * stopping for good; default false. Used by `runNode` (the CLI's `node --restart-on-removal`).
   */
  readonly restartOnRemoval: boolean;
  /**
   * Overrides of the cluster defaults (see ClusterConfig): failure detector, heartbeat and gossip intervals,
   * downing and leave timeouts. Seeds, app version, roles and attributes are the top-level fields above.
   */
  readonly cluster: Omit<ClusterConfigInput, 'seedNodes' | 'appVersion' | 'roles' | 'attributes'>;
  /** Overrides of the sharding defaults (see ShardingConfig). */
  readonly sharding: Partial<ShardingConfig>;
  /**
   * The strategy that places every shard without a pin (and pinned ones whose pin cannot be honoured):
   * 'least-shard' (the default), 'ring' (RingAllocationStrategy) or 'hash'; see README "Which fallback".
   */
  readonly fallback: FallbackStrategyName;
  /**
   * How the demo type maps entity ids to shards (see `shardIdFor`); 'actor-ts' gives actor-ts's shard ids.
   * Default 'fnv1a-utf8'. Every node of a cluster must use the same value; checked when the type starts.
   */
  readonly shardIdFunction: ShardIdFunction;
}

/** The settings of a node started with no options. */
export const DEFAULT_NODE_CONFIG: NodeConfig = Object.freeze({
  system: 'app',
  host: '127.0.0.1',
  port: 7701,
  http: DEFAULT_HTTP_CONFIG,
  seeds: [],
  appVersion: '1.0.0',
  roles: [],
  attributes: {},
  clusterSecret: undefined,
  insecureClusterPort: false,
  authToken: undefined,
  authReads: false,
  tokensFile: undefined,
  httpTlsCert: undefined,
  httpTlsKey: undefined,
  tlsCert: undefined,
  tlsKey: undefined,
  tlsCa: undefined,
  tlsSubject: undefined,
  logLevel: 'info',
  antiEntropyIntervalMs: 1000,
  dataDir: undefined,
  entityStore: undefined,
  compactAfterItems: DEFAULT_COMPACT_AFTER_ITEMS,
  restartOnRemoval: false,
  cluster: {},
  sharding: {},
  fallback: 'least-shard',
  shardIdFunction: 'fnv1a-utf8',
});

/** What a node is started with: any NodeConfig field may be left out, and so may any field of `http`. */
export type NodeConfigInput = { readonly [K in Exclude<keyof NodeConfig, 'http'>]?: NodeConfig[K] } & {
  readonly http?: Partial<HttpConfig>;
};

/**
 * Refuses a key no setting has (`invalid_argument` naming it and the nearest known one; `alsoKnown` are the
 * caller's own keys, offered as suggestions too). Fills every field `input` leaves undefined with DEFAULT_NODE_CONFIG's, `http` field by field (resolveHttpLimits,
 * which refuses a bad limit with `invalid_argument`); other values are checked where they are used, when the node
 * starts.
 */
export function resolveNodeConfig(input: NodeConfigInput = {}, alsoKnown: readonly string[] = []): NodeConfig {
  refuseUnknownKeys(input, [...Object.keys(DEFAULT_NODE_CONFIG), ...alsoKnown], {
    http: Object.keys(DEFAULT_HTTP_CONFIG),
  });
  const defined = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined));
  return { ...DEFAULT_NODE_CONFIG, ...defined, http: resolveHttpLimits(input.http) } as NodeConfig;
}

/** Whether `host` names the loopback interface only (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare === 'localhost' || bare === '::1' || bare === '0:0:0:0:0:0:0:1') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

/**
 * Why a node must not start as configured, or undefined: secure by default, a cluster port reachable
 * beyond this machine needs the secret, or an explicit `insecureClusterPort`.
 */
export function clusterPortProblem(
  config: Pick<NodeConfig, 'host' | 'clusterSecret' | 'insecureClusterPort'> & { readonly tlsCa?: string | undefined },
): string | undefined {
  if (config.clusterSecret !== undefined && config.clusterSecret !== '') return undefined;
  // Mutual TLS admits only holders of a certificate of the authority: as strong a gate as the secret.
  if (config.tlsCa !== undefined) return undefined;
  if (config.insecureClusterPort || isLoopbackHost(config.host)) return undefined;
  return (
    `the cluster port binds to ${config.host}, not loopback, and neither --cluster-secret nor --tls-ca is set: anyone ` +
    'who reaches it could join the cluster and speak for it. Set --cluster-secret (or ACTOR_TS_CLUSTER_SECRET) or ' +
    'mutual TLS (--tls-cert, --tls-key, --tls-ca), or pass ' +
    '--insecure-cluster-port when the network itself is trusted'
  );
}
