// The modern Akka/Pekko least-shard strategy (design.md §4): new shards go to the most suitable,
// least loaded node; rebalance moves at most `limit` shards per round towards ceil(shards / regions),
// taking first from the least suitable regions (the exact reverse of allocate's order).
import {
  compareForAllocation,
  compareStrings,
  rebalanceLimit,
  requireRebalanceLimits,
  type RegionInfo,
} from './allocation-strategy.js';
import { LeastShardFamily, type LeastShardClusterOption } from './least-shard-family.js';

/** Options of LeastShardAllocationStrategy. */
export interface LeastShardAllocationOptions extends LeastShardClusterOption {
  /** Most shards moved in one rebalance round; default 20. */
  readonly absoluteLimit?: number;
  /** Most shards moved in one round as a fraction of all allocated shards; default 0.1. */
  readonly relativeLimit?: number;
}

/**
 * Pekko's least-shard allocation: a new shard goes to the healthiest, newest-version node with the fewest shards;
 * rebalance evens counts out in bounded steps, only while the cluster is settled.
 */
export class LeastShardAllocationStrategy extends LeastShardFamily {
  readonly absoluteLimit: number;
  readonly relativeLimit: number;

  constructor(options: LeastShardAllocationOptions = {}) {
    const { absoluteLimit = 20, relativeLimit = 0.1, cluster } = options;
    requireRebalanceLimits(absoluteLimit, relativeLimit);
    super(cluster);
    this.absoluteLimit = absoluteLimit;
    this.relativeLimit = relativeLimit;
  }

  /** One round at a time: the next one sees the result of this one. */
  protected override mayStartRound(rebalanceInProgress: ReadonlySet<number>): boolean {
    return rebalanceInProgress.size === 0;
  }

  protected override shardsToMove(regions: RegionInfo[]): ReadonlySet<number> {
    let shardCount = 0;
    for (const region of regions) shardCount += region.shards.size;
    if (shardCount === 0) return new Set();

    const optimal = Math.ceil(shardCount / regions.length);
    const limit = this.limitFor(shardCount);
    const phase1 = takeExcess(leastSuitableFirst(regions), optimal, limit);
    return phase1.size > 0 ? phase1 : evenOutLowRegions([...regions].sort(byLoadDescending), optimal, limit);
  }

  /** `max(1, min(floor(relativeLimit * shards), absoluteLimit))`. */
  limitFor(shardCount: number): number {
    return rebalanceLimit(shardCount, this.absoluteLimit, this.relativeLimit);
  }

  override toString(): string {
    return `LeastShardAllocationStrategy(${this.absoluteLimit}, ${this.relativeLimit})`;
  }
}

/**
 * Phase 1's order: allocate's preference (compareForAllocation) reversed, so shards leave the regions a new
 * shard would go to last: leaving before up, lower app version, more shards, then the youngest member
 * (highest upNumber), then the highest address. Equally loaded regions used to be taken from by address,
 * which made the oldest member give its shards up while a newer one kept them.
 */
export function leastSuitableFirst(regions: ReadonlyArray<RegionInfo>): RegionInfo[] {
  return [...regions].sort((a, b) => compareForAllocation(b, a));
}

/** Phase 2's order: most loaded first; equal loads by address so every coordinator picks the same shards. */
function byLoadDescending(a: RegionInfo, b: RegionInfo): number {
  return b.shards.size - a.shards.size || compareStrings(a.key, b.key);
}

/**
 * Phase 1: the oldest `size - optimal` shards of every region above optimal, regions in `regions` order,
 * first `limit` of them. A leaving region sorts first whatever its load, so a region at or below optimal
 * does not end the walk.
 */
function takeExcess(regions: ReadonlyArray<RegionInfo>, optimal: number, limit: number): Set<number> {
  const selected = new Set<number>();
  for (const region of regions) {
    let excess = region.shards.size - optimal;
    if (excess <= 0) continue;
    for (const shardId of region.shards) {
      if (excess-- <= 0 || selected.size >= limit) break;
      selected.add(shardId);
    }
    if (selected.size >= limit) break;
  }
  return selected;
}

/**
 * Phase 2: optimal is rounded up, so no region may be above it while some lie 2 or more below.
 * Take the oldest shard of each region at optimal, as many as the regions lack (capped by limit).
 */
function evenOutLowRegions(regions: ReadonlyArray<RegionInfo>, optimal: number, limit: number): Set<number> {
  let deficit = 0;
  for (const region of regions) deficit += Math.max(0, optimal - 1 - region.shards.size);
  const selected = new Set<number>();
  const wanted = Math.min(deficit, limit);
  for (const region of regions) {
    if (selected.size >= wanted || region.shards.size < optimal) break;
    const oldest = region.shards.values().next();
    if (!oldest.done) selected.add(oldest.value);
  }
  return selected;
}
