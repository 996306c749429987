// Everything one node process is started with: one typed object, every field documented with its default.
import { DEFAULT_COMPACT_AFTER_ITEMS } from '../../crdt/index.js';
import { DEFAULT_HTTP_CONFIG } from '../management/limits.js';
/** The settings of a node started with no options. */
export const DEFAULT_NODE_CONFIG = Object.freeze({
    system: 'app',
    host: '127.0.0.1',
    port: 7701,
    httpHost: '127.0.0.1',
    httpPort: 8551,
    seeds: [],
    appVersion: '1.0.0',
    roles: [],
    attributes: {},
    clusterSecret: undefined,
    insecureClusterPort: false,
    authToken: undefined,
    authReads: false,
    bodyLimit: DEFAULT_HTTP_CONFIG.bodyLimit,
    httpHeadersTimeoutMs: undefined,
    httpRequestTimeoutMs: DEFAULT_HTTP_CONFIG.requestTimeoutMs,
    httpKeepAliveTimeoutMs: DEFAULT_HTTP_CONFIG.keepAliveTimeoutMs,
    httpMaxConnections: DEFAULT_HTTP_CONFIG.maxConnections,
    logLevel: 'info',
    antiEntropyIntervalMs: 1000,
    dataDir: undefined,
    compactAfterItems: DEFAULT_COMPACT_AFTER_ITEMS,
    restartOnRemoval: false,
    cluster: {},
    sharding: {},
    fallback: 'least-shard',
    shardIdFunction: 'fnv1a-utf8',
});
/**
 * Fills every field `input` leaves undefined with DEFAULT_NODE_CONFIG's; values are checked where they are used, when
 * the node starts.
 */
export function resolveNodeConfig(input = {}) {
    const defined = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined));
    return { ...DEFAULT_NODE_CONFIG, ...defined };
}
/** Whether `host` names the loopback interface only (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host) {
    const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
    if (bare === 'localhost' || bare === '::1' || bare === '0:0:0:0:0:0:0:1')
        return true;
    return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}
/**
 * Why a node must not start as configured, or undefined: secure by default, a cluster port reachable
 * beyond this machine needs the secret, or an explicit `insecureClusterPort`.
 */
export function clusterPortProblem(config) {
    if (config.clusterSecret !== undefined && config.clusterSecret !== '')
        return undefined;
    if (config.insecureClusterPort || isLoopbackHost(config.host))
        return undefined;
    return (`the cluster port binds to ${config.host}, not loopback, and no --cluster-secret is set: anyone who reaches it ` +
        'could join the cluster and speak for it. Set --cluster-secret (or ACTOR_TS_CLUSTER_SECRET), or pass ' +
        '--insecure-cluster-port when the network itself is trusted');
}
//# sourceMappingURL=config.js.map