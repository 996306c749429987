import { compareStrings, requireCandidates, requireShardId, } from './allocation-strategy.js';
/**
 * Hash allocation: a shard's home is the candidate at `shardId mod n` over the sorted candidates, so every
 * coordinator agrees without state; rebalance moves the shards whose hash home changed.
 */
export class HashAllocationStrategy {
    allocate(shardId, candidates, _currentShards) {
        requireShardId(shardId);
        requireCandidates(candidates);
        const sorted = sortedDistinct(candidates);
        // Non-empty by requireCandidates, so the index is always in range.
        return sorted[shardId % sorted.length];
    }
    rebalance(currentShards, candidates, rebalanceInProgress) {
        const moves = new Set();
        if (candidates.length === 0)
            return moves;
        const homes = sortedDistinct(candidates).map((address) => address.toString());
        for (const [home, shards] of currentShards) {
            for (const shardId of shards) {
                if (rebalanceInProgress.has(shardId))
                    continue;
                if (homes[shardId % homes.length] !== home)
                    moves.add(shardId);
            }
        }
        return moves;
    }
    toString() {
        return 'HashAllocationStrategy';
    }
}
/** Candidates sorted by address string, duplicates dropped (a duplicate would double a node's share). */
function sortedDistinct(candidates) {
    const byKey = new Map();
    for (const address of candidates)
        byKey.set(address.toString(), address);
    return [...byKey.entries()].sort(([a], [b]) => compareStrings(a, b)).map(([, address]) => address);
}
//# sourceMappingURL=hash.js.map