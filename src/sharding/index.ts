// Public surface of the sharding runtime: the per-node ClusterSharding, entity types, configuration, the
// message family it speaks, external allocation's controller, and the allocation strategies.
export {
  ClusterSharding,
  type ClusterShardingOptions,
  type ShardingStats,
  type TypeStats,
} from './cluster-sharding.js';
export type { RebalanceNowResult, ShardLocations } from './coordinator-client.js';
export { DURABLE_IDLE_MS, type ShardedTypeOptions } from './core/sharded-type.js';
export type { EntityStoreContext } from './core/sharding-context.js';
export {
  defineEntityType,
  type EntityTypeDefinition,
  type RefOf,
  type TypeOrName,
  type TypedEntityContext,
  type TypedEntityInstance,
  type TypedEntityRef,
  type TypedEntityType,
} from './core/typed-entity.js';
export {
  ExternalAllocationController,
  RebalanceError,
  explicitPlacementState,
  pinRecords,
  type ExternalAllocationControllerOptions,
  type PinRecord,
  type PinRecordsOptions,
  type PinRequest,
  type PlacementsDryRun,
  type ProposedPinRecord,
} from './api/external-allocation-controller.js';
export { parsePins, type ParsedPin, type PinScope } from './placements/pin-request.js';
export { parseShardId, type ShardId, type ShardRange } from './placements/shard-range.js';
export {
  askDryRunPlacements,
  askDryRunRebalance,
  askExplain,
  type DryRunMove,
  type DryRunMoves,
  type DryRunWarning,
  type ExplainDecision,
  type ExplainNode,
  type ProposedPin,
  type ShardExplanation,
} from './api/shard-insight.js';
// The target vocabulary (parse, print, match, its typed error) is public as a whole.
export * from './placements/placement-target.js';
export {
  DEFAULT_PLACEMENT_RULE,
  MAX_BY_LENGTH,
  MAX_EXPIRES_AT_MS,
  MAX_REASON_LENGTH,
  PLACEMENT_MODES,
  isExpired,
  ruleOf,
  ruleToMeta,
  validateBy,
  validateExpiresAt,
  validatePlacementMode,
  validatePlacementOptions,
  validateReason,
  validateTtlMs,
  type PlacementMode,
  type PlacementOptions,
  type PlacementRule,
} from './placements/placement-options.js';
export {
  CORDON_NAMESPACE,
  CordonError,
  StoreCordons,
  entityTypeNames,
  isInternalNamespace,
  type CordonProvenance,
} from './placements/cordons.js';
export { NO_CORDONS, type CordonRecord, type CordonView } from './placements/cordon-view.js';
export type { DrainMove } from './protocol/drain-messages.js';
export { DEFAULT_SHARDING_CONFIG, resolveShardingConfig, type ShardingConfig } from './core/config.js';
export type {
  AskOptions,
  EntityBehavior,
  EntityContext,
  EntityInstance,
  EntityRef,
  EntityOutcome,
  EntityTimers,
  HostOutcome,
  PipeOutcome,
  SendOptions,
} from './core/entity-api.js';
export { MAX_TIMER_DELAY_MS, MAX_TIMER_KEY_LENGTH } from './region/entity-timers.js';
export { DeliveryTimeoutError } from './region/pending-asks.js';
export {
  SHARDING_MESSAGES,
  SHARDING_MESSAGE_TYPES,
  SHARDING_ROUTES,
  parseShardingMessage,
  type ShardingMessage,
  type ShardingRoute,
} from './protocol/messages.js';
export { waitingIn, withoutHome } from './coordinator/insight.js';
export { coordinatorNode, type CoordinatorStats } from './coordinator/shard-coordinator.js';
export type { RegionStats } from './region/region-stats.js';
export {
  DEFAULT_SHARD_ID_FUNCTION,
  SHARD_ID_FUNCTIONS,
  fnv1a32,
  fnv1a32Utf16Signed,
  shardIdFor,
  type ShardIdFunction,
} from './core/shard-id.js';
export * from './strategies/index.js';
