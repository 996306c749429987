export { compareAppVersions } from './allocation-strategy.js';
export { HashAllocationStrategy } from './hash.js';
export { RingAllocationStrategy } from './ring.js';
export { FALLBACK_STRATEGIES, fallbackStrategy, isFallbackStrategyName, requireFallbackStrategyName } from './fallback-choice.js';
export { LeastShardAllocationStrategy } from './least-shard.js';
export { LegacyLeastShardAllocationStrategy, } from './legacy-least-shard.js';
export { externalAllocationStrategy, } from './external.js';
export { PlacementPin, activePin, asPin } from '../placements/placement-pin.js';
export { asActorTsStrategy, } from './actor-ts.js';
//# sourceMappingURL=index.js.map