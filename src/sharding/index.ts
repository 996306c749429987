// Public surface of the sharding runtime: the per-node ClusterSharding, entity types, configuration, the
// message family it speaks, external allocation's controller, and the allocation strategies.
export { ClusterSharding, type ClusterShardingOptions, type ShardingStats, type TypeStats } from './cluster-sharding.js';
export type { RebalanceNowResult, ShardLocations } from './coordinator-client.js';
export type { ShardedTypeOptions } from './sharded-type.js';
export {
  ExternalAllocationController,
  RebalanceError,
  explicitPlacementState,
  placementRecords,
  type PlacementRecord,
  type PlacementRequest,
} from './external-allocation-controller.js';
export { DEFAULT_SHARDING_CONFIG, resolveShardingConfig, type ShardingConfig } from './config.js';
export type { AskOptions, EntityBehavior, EntityContext, EntityInstance, EntityRef } from './entity.js';
export {
  SHARDING_MESSAGES,
  SHARDING_MESSAGE_TYPES,
  SHARDING_ROUTES,
  parseShardingMessage,
  type ShardingMessage,
  type ShardingRoute,
} from './messages.js';
export { coordinatorNode, type CoordinatorStats } from './shard-coordinator.js';
export type { RegionStats } from './shard-region.js';
export { fnv1a32, shardIdFor } from './shard-id.js';
export * from './strategies/index.js';
