// The legacy Akka/Pekko least-shard rebalance (their default while rebalance-absolute-limit is 0),
// kept for parity: move a few shards from the most loaded node while it leads the most suitable one
// by more than `rebalanceThreshold`, with at most `maxSimultaneousRebalance` moves in flight.
import type { NodeAddress } from '../../cluster/address.js';
import type { ClusterView } from '../../cluster/member.js';
import { ActorTsError } from '../../errors.js';
import {
  allocateLeastShard,
  compareForAllocation,
  describeRegions,
  isGoodTimeToRebalance,
  membersByAddress,
  type AllocationStrategy,
  type ShardAllocations,
} from './allocation-strategy.js';

/** Options of LegacyLeastShardAllocationStrategy. */
export interface LegacyLeastShardAllocationOptions {
  /** A node must hold more than this many shards above the most suitable one before any move; default 1. */
  readonly rebalanceThreshold?: number;
  /** Most hand-offs in flight at once, counting those already in progress; default 3. */
  readonly maxSimultaneousRebalance?: number;
  /** Membership facts; without it every candidate counts as up, reachable and on the same version. */
  readonly cluster?: ClusterView;
}

/**
 * Pekko's older least-shard allocation: rebalance moves shards off the busiest node once it holds
 * `rebalanceThreshold` more than the least busy, at most `maxSimultaneousRebalance` at a time.
 */
export class LegacyLeastShardAllocationStrategy implements AllocationStrategy {
  readonly rebalanceThreshold: number;
  readonly maxSimultaneousRebalance: number;
  private readonly cluster: ClusterView | undefined;

  constructor(options: LegacyLeastShardAllocationOptions = {}) {
    const { rebalanceThreshold = 1, maxSimultaneousRebalance = 3, cluster } = options;
    // A threshold of 0 would make every round move min(difference, 0) = 0 shards: never useful.
    requirePositiveInteger('rebalanceThreshold', rebalanceThreshold);
    requirePositiveInteger('maxSimultaneousRebalance', maxSimultaneousRebalance);
    this.rebalanceThreshold = rebalanceThreshold;
    this.maxSimultaneousRebalance = maxSimultaneousRebalance;
    this.cluster = cluster;
  }

  allocate(shardId: number, candidates: ReadonlyArray<NodeAddress>, currentShards: ShardAllocations): NodeAddress {
    return allocateLeastShard(shardId, candidates, currentShards, this.cluster);
  }

  rebalance(
    currentShards: ShardAllocations,
    candidates: ReadonlyArray<NodeAddress>,
    rebalanceInProgress: ReadonlySet<number>,
  ): ReadonlySet<number> {
    const room = this.maxSimultaneousRebalance - rebalanceInProgress.size;
    if (room <= 0) return new Set();
    const regions = describeRegions(candidates, currentShards, membersByAddress(this.cluster));
    if (!isGoodTimeToRebalance(regions, this.cluster)) return new Set();
    regions.sort(compareForAllocation);
    const least = regions[0];
    if (least === undefined) return new Set();

    // The region with the most shards not already moving; on a tie the more suitable one, as in Pekko.
    let movable: number[] = [];
    for (const region of regions) {
      const free = [...region.shards].filter((shardId) => !rebalanceInProgress.has(shardId));
      if (free.length > movable.length) movable = free;
    }
    const difference = movable.length - least.shards.size;
    if (difference <= this.rebalanceThreshold) return new Set();
    const count = Math.min(difference - this.rebalanceThreshold, this.rebalanceThreshold, room);
    // Lowest shard ids first, as the original picks by sorted id rather than by age.
    return new Set(movable.sort((a, b) => a - b).slice(0, count));
  }

  toString(): string {
    return `LegacyLeastShardAllocationStrategy(${this.rebalanceThreshold}, ${this.maxSimultaneousRebalance})`;
  }
}

function requirePositiveInteger(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new ActorTsError('invalid_argument', `${name} must be a positive integer, got ${String(value)}`);
  }
}
