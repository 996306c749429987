// Public surface of the allocation strategies: the contract, the built-in strategies and the
// external (explicit placement) strategy, and the fallbacks a node can be started with.
export type { AllocationStrategy, ShardAllocations } from './allocation-strategy.js';
export { compareAppVersions } from './allocation-strategy.js';
export { HashAllocationStrategy } from './hash.js';
export { RingAllocationStrategy, type RingAllocationOptions } from './ring.js';
export {
  FALLBACK_STRATEGIES,
  fallbackStrategy,
  isFallbackStrategyName,
  requireFallbackStrategyName,
  type FallbackStrategyName,
} from './fallback-choice.js';
export { LeastShardAllocationStrategy, type LeastShardAllocationOptions } from './least-shard.js';
export { LegacyLeastShardAllocationStrategy, type LegacyLeastShardAllocationOptions } from './legacy-least-shard.js';
export { externalAllocationStrategy, type ExternalAllocationOptions, type PlacementProblem } from './external.js';
export {
  PlacementPin,
  activePin,
  asPin,
  type ExternalAllocationState,
  type PinLike,
} from '../placements/placement-pin.js';
export {
  asActorTsStrategy,
  type ActorTsAddress,
  type ActorTsAllocationStrategy,
  type ActorTsStrategyOptions,
} from './actor-ts.js';
