// Public surface of the sharding runtime: the per-node ClusterSharding, entity types, configuration, the
// protocol family it adds to the union, and the allocation strategies.
export {
  ClusterSharding,
  type ClusterShardingOptions,
  type RebalanceNowResult,
  type ShardLocations,
  type ShardedTypeOptions,
  type ShardingStats,
  type TypeStats,
} from './cluster-sharding.js';
export { DEFAULT_SHARDING_CONFIG, resolveShardingConfig, type ShardingConfig } from './config.js';
export type { AskOptions, EntityBehavior, EntityContext, EntityInstance, EntityRef } from './entity.js';
export { SHARDING_MESSAGE_TYPES, parseShardingMessage, type ShardingMessage } from './messages.js';
export { coordinatorNode, type CoordinatorStats } from './shard-coordinator.js';
export type { RegionStats } from './shard-region.js';
export { fnv1a32, shardIdFor } from './shard-id.js';
export * from './strategies/index.js';
