// What the two least-shard strategies (least-shard.ts, legacy-least-shard.ts) share: a new shard goes to the
// most suitable, least loaded node, and a rebalance round runs only while no round blocks it and the cluster
// is settled; each strategy says when a round may start and which shards it moves.
import type { NodeAddress } from '../../cluster/address.js';
import type { ClusterView } from '../../cluster/member.js';
import {
  allocateLeastShard,
  describeRegions,
  isGoodTimeToRebalance,
  membersByAddress,
  type AllocationStrategy,
  type RegionInfo,
  type ShardAllocations,
} from './allocation-strategy.js';

/** The option both least-shard strategies take beside their own. */
export interface LeastShardClusterOption {
  /** Membership facts; without it every candidate counts as up, reachable and on the same version. */
  readonly cluster?: ClusterView;
}

/** The allocation and rebalance round of Pekko's least-shard strategies; subclasses choose the moves. */
export abstract class LeastShardFamily implements AllocationStrategy {
  /** Membership facts; without them every candidate counts as up, reachable and on the same version. */
  protected readonly cluster: ClusterView | undefined;

  protected constructor(cluster: ClusterView | undefined) {
    this.cluster = cluster;
  }

  allocate(shardId: number, candidates: ReadonlyArray<NodeAddress>, currentShards: ShardAllocations): NodeAddress {
    return allocateLeastShard(shardId, candidates, currentShards, this.cluster);
  }

  /**
   * The regions are the candidates (a candidate missing from `currentShards` holds 0 shards); shards
   * on nodes that are not candidates are neither counted nor picked, their hand-off is the leave or
   * downing path's job.
   */
  rebalance(
    currentShards: ShardAllocations,
    candidates: ReadonlyArray<NodeAddress>,
    rebalanceInProgress: ReadonlySet<number>,
  ): ReadonlySet<number> {
    if (!this.mayStartRound(rebalanceInProgress)) return new Set();
    const regions = describeRegions(candidates, currentShards, membersByAddress(this.cluster));
    if (!isGoodTimeToRebalance(regions, this.cluster)) return new Set();
    return this.shardsToMove(regions, rebalanceInProgress);
  }

  /** Whether a round may start while these shards are still moving. */
  protected abstract mayStartRound(rebalanceInProgress: ReadonlySet<number>): boolean;

  /** The shards this round moves, from the settled candidates' regions. */
  protected abstract shardsToMove(regions: RegionInfo[], rebalanceInProgress: ReadonlySet<number>): ReadonlySet<number>;
}
