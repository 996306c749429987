import { ActorTsError } from '../../errors.js';
import { HashAllocationStrategy } from './hash.js';
import { LeastShardAllocationStrategy } from './least-shard.js';
import { RingAllocationStrategy } from './ring.js';
/** The names, the default first. */
export const FALLBACK_STRATEGIES = ['least-shard', 'ring', 'hash'];
export function isFallbackStrategyName(value) {
    return typeof value === 'string' && FALLBACK_STRATEGIES.includes(value);
}
/** Throws invalid_argument naming the choices: the name may come from untyped configuration (JSON, a caller's object). */
export function requireFallbackStrategyName(value) {
    if (!isFallbackStrategyName(value)) {
        throw new ActorTsError('invalid_argument', `fallback must be one of ${FALLBACK_STRATEGIES.join(', ')}, got ${String(value)}`);
    }
}
/** A new strategy of that name with its defaults, reading `cluster` for member facts; throws on another name. */
export function fallbackStrategy(name, cluster) {
    requireFallbackStrategyName(name);
    const options = cluster === undefined ? {} : { cluster };
    switch (name) {
        case 'least-shard':
            return new LeastShardAllocationStrategy(options);
        case 'ring':
            return new RingAllocationStrategy(options);
        case 'hash':
            return new HashAllocationStrategy();
    }
}
//# sourceMappingURL=fallback-choice.js.map