// The legacy Akka/Pekko least-shard rebalance (their default while rebalance-absolute-limit is 0),
// kept for parity: move a few shards from the most loaded node while it leads the most suitable one
// by more than `rebalanceThreshold`, with at most `maxSimultaneousRebalance` moves in flight.
import { ActorTsError } from '../../errors.js';
import { compareForAllocation, type RegionInfo } from './allocation-strategy.js';
import { LeastShardFamily, type LeastShardClusterOption } from './least-shard-family.js';

/** Options of LegacyLeastShardAllocationStrategy. */
export interface LegacyLeastShardAllocationOptions extends LeastShardClusterOption {
  /** A node must hold more than this many shards above the most suitable one before any move; default 1. */
  readonly rebalanceThreshold?: number;
  /** Most hand-offs in flight at once, counting those already in progress; default 3. */
  readonly maxSimultaneousRebalance?: number;
}

/**
 * Pekko's older least-shard allocation: rebalance moves shards off the busiest node once it holds
 * `rebalanceThreshold` more than the least busy, at most `maxSimultaneousRebalance` at a time.
 */
export class LegacyLeastShardAllocationStrategy extends LeastShardFamily {
  readonly rebalanceThreshold: number;
  readonly maxSimultaneousRebalance: number;

  constructor(options: LegacyLeastShardAllocationOptions = {}) {
    const { rebalanceThreshold = 1, maxSimultaneousRebalance = 3, cluster } = options;
    // A threshold of 0 would make every round move min(difference, 0) = 0 shards: never useful.
    requirePositiveInteger('rebalanceThreshold', rebalanceThreshold);
    requirePositiveInteger('maxSimultaneousRebalance', maxSimultaneousRebalance);
    super(cluster);
    this.rebalanceThreshold = rebalanceThreshold;
    this.maxSimultaneousRebalance = maxSimultaneousRebalance;
  }

  /** Rounds overlap while fewer than `maxSimultaneousRebalance` hand-offs are in flight. */
  protected override mayStartRound(rebalanceInProgress: ReadonlySet<number>): boolean {
    return this.maxSimultaneousRebalance - rebalanceInProgress.size > 0;
  }

  protected override shardsToMove(
    regions: RegionInfo[],
    rebalanceInProgress: ReadonlySet<number>,
  ): ReadonlySet<number> {
    const room = this.maxSimultaneousRebalance - rebalanceInProgress.size;
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

  override toString(): string {
    return `LegacyLeastShardAllocationStrategy(${this.rebalanceThreshold}, ${this.maxSimultaneousRebalance})`;
  }
}

function requirePositiveInteger(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new ActorTsError('invalid_argument', `${name} must be a positive integer, got ${String(value)}`);
  }
}
