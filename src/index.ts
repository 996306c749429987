// Public surface of @actor-ts/placement's runtime: cluster membership and transports, sharding with its
// allocation strategies, external allocation, the management API and node wiring. The placement store
// itself is `crdt/index.ts` (re-exported here for one-stop imports).
export * from '../crdt/index.js';

export { ActorTsError, type ErrorCode } from './errors.js';
/** The Standard Schema interface (zod, valibot, arktype, Effect Schema implement it) that `defineEntityType` takes. */
export type { StandardSchemaV1 } from '@standard-schema/spec';
export { createLogger, silentLogger, type Logger, type LogOptions } from './logging.js';
export {
  MESSAGE_FAMILIES,
  PROTOCOL_VERSION,
  parseMessage,
  type PlacementSyncMessage,
  type ProtocolMessage,
} from './protocol.js';

export { NodeAddress } from './cluster/address.js';
export type { ClusterView, MemberInfo, MemberStatus, Membership } from './cluster/member.js';
export {
  isFamilyMessage,
  type MessageFamily,
  type MessageListener,
  type RawMessage,
  type Transport,
  type WireMessage,
} from './cluster/transport/transport.js';
export { Cluster, type ClusterOptions, type SelfDownCause } from './cluster/membership/cluster.js';
export {
  DEFAULT_CLUSTER_CONFIG,
  DEFAULT_FAILURE_DETECTOR_CONFIG,
  resolveClusterConfig,
  type ClusterConfig,
  type ClusterConfigInput,
  type FailureDetectorConfig,
} from './cluster/membership/config.js';
export { oldestUpMember } from './cluster/member-order.js';
export {
  MemoryNetwork,
  MemoryTransport,
  type MemoryNetworkOptions,
  type NetworkFaults,
} from './cluster/transport/memory-transport.js';
export { TcpTransport, type TcpTransportOptions, type TcpTransportStats } from './cluster/transport/tcp-transport.js';

export * from './sharding/index.js';
export {
  PlacementReplication,
  type PlacementReplicationOptions,
  type ReplicatedPlacements,
} from './placement-replication/placement-replication.js';
export {
  EntityStoreError,
  parseEntityStore,
  type CommitResult,
  type EntityStore,
  type EntityStoreConfig,
  type EntityWrite,
  type EpochCheck,
  type ShardKey,
} from './entity-store/entity-store.js';
export {
  GroupCommit,
  type GroupCommitOptions,
  type GroupCommitStats,
  type WriteOutcome,
} from './entity-store/group-commit.js';
export { openEntityStore } from './entity-store/open-entity-store.js';
export { openLmdbEntityStore } from './entity-store/lmdb-entity-store.js';
export { openPostgresEntityStore, type PostgresEntityStoreOptions } from './entity-store/postgres-entity-store.js';
export { PLACEMENT_SYNC_MESSAGES } from './placement-replication/sync-messages.js';

export {
  createManagementServer,
  type ManagementApiOptions,
  type ManagementServerOptions,
} from './management/server.js';
export { managementPlugin, type ManagementPluginOptions } from './management/plugin.js';
export type { ManagementBackend, WriteAccess } from './management/backend.js';
export { DEFAULT_HTTP_CONFIG, type HttpConfig } from './management/limits.js';
export {
  MetricsEventHub,
  NodeMetrics,
  metricsPlugin,
  type MetricsEvents,
  type MetricsSource,
} from './management/metrics.js';
export { consolePlugin, type ConsolePluginOptions } from './management/console/plugin.js';
export { replicationHealth, type ReplicationHealth } from './management/replication-health.js';
export { startNode, type RunningNode, type StartNodeInput, type StopReason } from './node/node.js';
export type { NodeApplication, NodeEntityType, NodeHttpRoutes } from './node/application.js';
export { NodeManagementBackend } from './node/management-backend.js';
export { nodeMetricsSource, type NodeMetricsSource } from './node/metrics-source.js';
export { runNode, type RunNodeOptions } from './node/run.js';
export { DEFAULT_NODE_CONFIG, resolveNodeConfig, type NodeConfig, type NodeConfigInput } from './node/config.js';
export { ManagementClient, ApiError } from './cli/client.js';
