// Public surface of @actor-ts/placement's runtime: cluster membership and transports, sharding with its
// allocation strategies, external allocation, the management API and node wiring. The placement store
// itself is `crdt/index.ts` (re-exported here for one-stop imports).
export * from '../crdt/index.js';
export { ActorTsError } from './errors.js';
export { createLogger, silentLogger } from './logging.js';
export { MESSAGE_FAMILIES, PROTOCOL_VERSION, parseMessage } from './protocol.js';
export { NodeAddress } from './cluster/address.js';
export { isFamilyMessage } from './cluster/transport.js';
export { Cluster } from './cluster/cluster.js';
export { DEFAULT_CLUSTER_CONFIG, DEFAULT_FAILURE_DETECTOR_CONFIG, resolveClusterConfig, } from './cluster/config.js';
export { oldestUpMember } from './cluster/member-order.js';
export { MemoryNetwork, MemoryTransport } from './cluster/memory-transport.js';
export { TcpTransport } from './cluster/tcp-transport.js';
export * from './sharding/index.js';
export { PlacementReplication, } from './placement-replication/placement-replication.js';
export { PLACEMENT_SYNC_MESSAGES } from './placement-replication/sync-messages.js';
export { createManagementServer } from './management/server.js';
export { managementPlugin } from './management/plugin.js';
export { DEFAULT_HTTP_CONFIG } from './management/limits.js';
export { MetricsEventHub, NodeMetrics, metricsPlugin } from './management/metrics.js';
export { consolePlugin } from './management/console/plugin.js';
export { replicationHealth } from './management/replication-health.js';
export { startNode } from './node/node.js';
export { NodeManagementBackend } from './node/management-backend.js';
export { nodeMetricsSource } from './node/metrics-source.js';
export { runNode } from './node/run.js';
export { DEFAULT_NODE_CONFIG, resolveNodeConfig } from './node/config.js';
export { ManagementClient, ApiError } from './cli/client.js';
//# sourceMappingURL=index.js.map