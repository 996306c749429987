// Sharding configuration: one typed object with documented defaults (Pekko's `pekko.cluster.sharding`
// settings where they exist), and the validation that turns a partial user object into a complete one.
import { ActorTsError } from '../errors.js';
/** The sharding settings used when none are given. */
export const DEFAULT_SHARDING_CONFIG = Object.freeze({
    rebalanceIntervalMs: 10_000,
    handOffTimeoutMs: 60_000,
    bufferSize: 100_000,
    retryIntervalMs: 2_000,
    coordinatorWarmupMs: 5_000,
    requestTimeoutMs: 10_000,
    askTimeoutMs: 5_000,
    maxForwardHops: 4,
    downRemovalMarginMs: 2_000,
});
/** Lower bounds per setting: 0 is allowed only where it means something (no buffering, no warm-up). */
const MINIMUM = {
    rebalanceIntervalMs: 1,
    handOffTimeoutMs: 1,
    bufferSize: 0,
    retryIntervalMs: 1,
    coordinatorWarmupMs: 0,
    requestTimeoutMs: 1,
    askTimeoutMs: 1,
    // The first forward from the sender's region is hop 0 -> 1, so 1 is the least that lets messages travel.
    maxForwardHops: 1,
    downRemovalMarginMs: 0,
};
/** Fills in defaults and validates; throws `invalid_argument` naming the first bad setting. */
export function resolveShardingConfig(partial = {}) {
    if (typeof partial !== 'object' || partial === null) {
        throw new ActorTsError('invalid_argument', 'sharding config must be an object');
    }
    const resolved = { ...DEFAULT_SHARDING_CONFIG };
    for (const [key, value] of Object.entries(partial)) {
        if (!(key in DEFAULT_SHARDING_CONFIG)) {
            throw new ActorTsError('invalid_argument', `unknown sharding config setting "${key}"`);
        }
        if (value === undefined)
            continue;
        const min = MINIMUM[key];
        // Durations feed setTimeout, which overflows above 2^31 - 1; hop counts travel in a field capped at 255.
        const max = key === 'maxForwardHops' ? 255 : 2_147_483_647;
        if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
            throw new ActorTsError('invalid_argument', `sharding config "${key}" must be an integer in ${min}..${max}, got ${String(value)}`);
        }
        resolved[key] = value;
    }
    return Object.freeze(resolved);
}
//# sourceMappingURL=config.js.map