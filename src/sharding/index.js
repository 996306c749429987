// Public surface of the sharding runtime: the per-node ClusterSharding, entity types, configuration, the
// message family it speaks, external allocation's controller, and the allocation strategies.
export { ClusterSharding } from './cluster-sharding.js';
export { ExternalAllocationController, RebalanceError, explicitPlacementState, pinRecords, } from './placements/external-allocation-controller.js';
export { askDryRunPlacements, askDryRunRebalance, askExplain, } from './coordinator/shard-insight.js';
export { MAX_PLACEMENT_TARGET_LENGTH, ROLE_KEY, PlacementRuleError, canonicalPlacementTarget, parsePlacementTarget, printPlacementTarget, targetMatches, tryParsePlacementTarget, } from './placements/placement-target.js';
export { DEFAULT_PLACEMENT_RULE, MAX_BY_LENGTH, MAX_EXPIRES_AT_MS, MAX_REASON_LENGTH, PLACEMENT_MODES, isExpired, ruleOf, ruleToMeta, validateBy, validateExpiresAt, validatePlacementMode, validatePlacementOptions, validateReason, validateTtlMs, } from './placements/placement-options.js';
export { CORDON_NAMESPACE, CordonError, StoreCordons, entityTypeNames, isInternalNamespace } from './placements/cordons.js';
export { NO_CORDONS } from './placements/cordon-view.js';
export { DEFAULT_SHARDING_CONFIG, resolveShardingConfig } from './config.js';
export { MAX_TIMER_DELAY_MS, MAX_TIMER_KEY_LENGTH } from './region/entity-timers.js';
export { SHARDING_MESSAGES, SHARDING_MESSAGE_TYPES, SHARDING_ROUTES, parseShardingMessage, } from './protocol/messages.js';
export { coordinatorNode } from './coordinator/shard-coordinator.js';
export { DEFAULT_SHARD_ID_FUNCTION, SHARD_ID_FUNCTIONS, fnv1a32, fnv1a32Utf16Signed, shardIdFor, } from './shard-id.js';
export * from './strategies/index.js';
//# sourceMappingURL=index.js.map