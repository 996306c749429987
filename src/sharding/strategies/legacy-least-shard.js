import { ActorTsError } from '../../errors.js';
import { allocateLeastShard, compareForAllocation, describeRegions, isGoodTimeToRebalance, membersByAddress, } from './allocation-strategy.js';
/**
 * Pekko's older least-shard allocation: rebalance moves shards off the busiest node once it holds
 * `rebalanceThreshold` more than the least busy, at most `maxSimultaneousRebalance` at a time.
 */
export class LegacyLeastShardAllocationStrategy {
    rebalanceThreshold;
    maxSimultaneousRebalance;
    cluster;
    constructor(options = {}) {
        const { rebalanceThreshold = 1, maxSimultaneousRebalance = 3, cluster } = options;
        // A threshold of 0 would make every round move min(difference, 0) = 0 shards: never useful.
        requirePositiveInteger('rebalanceThreshold', rebalanceThreshold);
        requirePositiveInteger('maxSimultaneousRebalance', maxSimultaneousRebalance);
        this.rebalanceThreshold = rebalanceThreshold;
        this.maxSimultaneousRebalance = maxSimultaneousRebalance;
        this.cluster = cluster;
    }
    allocate(shardId, candidates, currentShards) {
        return allocateLeastShard(shardId, candidates, currentShards, this.cluster);
    }
    rebalance(currentShards, candidates, rebalanceInProgress) {
        const room = this.maxSimultaneousRebalance - rebalanceInProgress.size;
        if (room <= 0)
            return new Set();
        const regions = describeRegions(candidates, currentShards, membersByAddress(this.cluster));
        if (!isGoodTimeToRebalance(regions, this.cluster))
            return new Set();
        regions.sort(compareForAllocation);
        const least = regions[0];
        if (least === undefined)
            return new Set();
        // The region with the most shards not already moving; on a tie the more suitable one, as in Pekko.
        let movable = [];
        for (const region of regions) {
            const free = [...region.shards].filter((shardId) => !rebalanceInProgress.has(shardId));
            if (free.length > movable.length)
                movable = free;
        }
        const difference = movable.length - least.shards.size;
        if (difference <= this.rebalanceThreshold)
            return new Set();
        const count = Math.min(difference - this.rebalanceThreshold, this.rebalanceThreshold, room);
        // Lowest shard ids first, as the original picks by sorted id rather than by age.
        return new Set(movable.sort((a, b) => a - b).slice(0, count));
    }
    toString() {
        return `LegacyLeastShardAllocationStrategy(${this.rebalanceThreshold}, ${this.maxSimultaneousRebalance})`;
    }
}
function requirePositiveInteger(name, value) {
    if (!Number.isSafeInteger(value) || value < 1) {
        throw new ActorTsError('invalid_argument', `${name} must be a positive integer, got ${String(value)}`);
    }
}
//# sourceMappingURL=legacy-least-shard.js.map