// Hash allocation: a shard's home is a pure function of the shard id and the candidate set, so every
// coordinator incarnation agrees without any state; rebalance moves shards whose hash home changed.
import type { NodeAddress } from '../../cluster/address.js';
import {
  compareStrings,
  requireCandidates,
  requireShardId,
  type AllocationStrategy,
  type ShardAllocations,
} from './allocation-strategy.js';

/**
 * Hash allocation: a shard's home is the candidate at `shardId mod n` over the sorted candidates, so every
 * coordinator agrees without state; rebalance moves the shards whose hash home changed.
 */
export class HashAllocationStrategy implements AllocationStrategy {
  allocate(shardId: number, candidates: ReadonlyArray<NodeAddress>, _currentShards: ShardAllocations): NodeAddress {
    requireShardId(shardId);
    requireCandidates(candidates);
    const sorted = sortedDistinct(candidates);
    // Non-empty by requireCandidates, so the index is always in range.
    return sorted[shardId % sorted.length] as NodeAddress;
  }

  rebalance(
    currentShards: ShardAllocations,
    candidates: ReadonlyArray<NodeAddress>,
    rebalanceInProgress: ReadonlySet<number>,
  ): ReadonlySet<number> {
    const moves = new Set<number>();
    if (candidates.length === 0) return moves;
    const homes = sortedDistinct(candidates).map((address) => address.toString());
    for (const [home, shards] of currentShards) {
      for (const shardId of shards) {
        if (rebalanceInProgress.has(shardId)) continue;
        if (homes[shardId % homes.length] !== home) moves.add(shardId);
      }
    }
    return moves;
  }

  toString(): string {
    return 'HashAllocationStrategy';
  }
}

/** Candidates sorted by address string, duplicates dropped (a duplicate would double a node's share). */
function sortedDistinct(candidates: ReadonlyArray<NodeAddress>): NodeAddress[] {
  const byKey = new Map<string, NodeAddress>();
  for (const address of candidates) byKey.set(address.toString(), address);
  return [...byKey.entries()].sort(([a], [b]) => compareStrings(a, b)).map(([, address]) => address);
}
