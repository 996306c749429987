// Public surface of the allocation strategies: the contract, the built-in strategies and the
// external (explicit placement) strategy.
export type { AllocationStrategy, ShardAllocations } from './allocation-strategy.js';
export { compareAppVersions } from './allocation-strategy.js';
export { HashAllocationStrategy } from './hash.js';
export { LeastShardAllocationStrategy, type LeastShardAllocationOptions } from './least-shard.js';
export {
  LegacyLeastShardAllocationStrategy,
  type LegacyLeastShardAllocationOptions,
} from './legacy-least-shard.js';
export {
  externalAllocationStrategy,
  type ExternalAllocationOptions,
  type ExternalAllocationState,
  type PlacementProblem,
} from './external.js';
export { PlacementPin, activePin, asPin, type PinLike } from './placement-pin.js';
export {
  asActorTsStrategy,
  type ActorTsAddress,
  type ActorTsAllocationStrategy,
  type ActorTsStrategyOptions,
} from './actor-ts.js';
