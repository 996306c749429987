// Ring allocation (issue 28, Effect's answer to Pekko's least-shard): every candidate on a consistent-hash
// ring with `virtualNodes` points, a shard's ring home the first node clockwise from its point, loads
// bounded: no node takes a shard that would put it above ceil(loadBound * allocated / nodes). Homes are a
// function of the member set, so every node computes the same ones in every run, a node that leaves and
// comes back gets its shards back, and a membership change moves about allocated / nodes shards.
import type { NodeAddress } from '../../cluster/address.js';
import type { ClusterView } from '../../cluster/member.js';
import { ActorTsError } from '../../errors.js';
import {
  compareHealth,
  describeRegion,
  describeRegions,
  healthiest,
  isGoodTimeToRebalance,
  membersByAddress,
  rebalanceLimit,
  requireCandidates,
  requireRebalanceLimits,
  requireShardId,
  type AllocationStrategy,
  type RegionInfo,
  type ShardAllocations,
} from './allocation-strategy.js';
import { buildRing, firstOpenOwner, ringHome, type HashRing } from './hash-ring.js';

/** Options of RingAllocationStrategy; each has a documented default. */
export interface RingAllocationOptions {
  /** Points per node on the ring; default 128 (Effect's), 1..4096. More points, more even ring homes. */
  readonly virtualNodes?: number;
  /** No node holds more than ceil(loadBound * allocated / nodes) shards; default 1.25, at least 1. */
  readonly loadBound?: number;
  /** Most shards moved in one rebalance round; default 20 (as least-shard). */
  readonly absoluteLimit?: number;
  /** Most shards moved in one round as a fraction of all allocated shards; default 0.1 (as least-shard). */
  readonly relativeLimit?: number;
  /** Membership facts; without it every candidate counts as up, reachable and on the same version. */
  readonly cluster?: ClusterView;
}

/** The nodes on the ring for one call, by owner number, with their loads. */
interface RingView {
  readonly ring: HashRing;
  readonly addresses: readonly NodeAddress[];
  readonly shards: ReadonlyArray<ReadonlySet<number>>;
  readonly loads: Int32Array;
  /**
   * Every allocated shard, pinned ones and those on nodes off the ring (leaving, cordoned) included: those
   * end up on the ring's nodes, so the bound counts them from the start instead of tightening while a
   * leaving node hands its shards off one by one (which would push some of them off their ring home).
   */
  readonly allocated: number;
}

const MAX_VIRTUAL_NODES = 4096;

/**
 * Effect's answer as a strategy: every node on a hash ring (`virtualNodes` points each, hashed from its address without
 * the incarnation), a shard placed at the first node clockwise from its hash that is under `ceil(loadBound * allocated
 * / nodes)`. The same members give the same homes on every node and in every run; a node that comes back gets its
 * shards back.
 */
export class RingAllocationStrategy implements AllocationStrategy {
  readonly virtualNodes: number;
  readonly loadBound: number;
  readonly absoluteLimit: number;
  readonly relativeLimit: number;
  private readonly cluster: ClusterView | undefined;
  // The ring of the last member set: building one sorts nodes * virtualNodes points, and the set rarely changes.
  private cached: HashRing | undefined;

  constructor(options: RingAllocationOptions = {}) {
    const { virtualNodes = 128, loadBound = 1.25, absoluteLimit = 20, relativeLimit = 0.1, cluster } = options;
    if (!Number.isInteger(virtualNodes) || virtualNodes < 1 || virtualNodes > MAX_VIRTUAL_NODES) {
      throw new ActorTsError(
        'invalid_argument',
        `virtualNodes must be an integer in 1..${MAX_VIRTUAL_NODES}, got ${String(virtualNodes)}`,
      );
    }
    // Below 1 the bound could hold fewer shards than exist, and allocate would have nowhere to put one.
    if (typeof loadBound !== 'number' || !Number.isFinite(loadBound) || loadBound < 1) {
      throw new ActorTsError('invalid_argument', `loadBound must be a finite number >= 1, got ${String(loadBound)}`);
    }
    requireRebalanceLimits(absoluteLimit, relativeLimit);
    this.virtualNodes = virtualNodes;
    this.loadBound = loadBound;
    this.absoluteLimit = absoluteLimit;
    this.relativeLimit = relativeLimit;
    this.cluster = cluster;
  }

  /** ceil(loadBound * allocated / nodes); the epsilon keeps 1.1 * 10 from rounding up to 12. */
  boundFor(allocated: number, nodes: number): number {
    return Math.ceil((this.loadBound * allocated) / nodes - 1e-9);
  }

  /**
   * The first node clockwise from the shard's point that holds fewer shards than the bound counting this
   * one. There always is one: loadBound >= 1, so nodes * bound >= allocated + 1.
   */
  allocate(shardId: number, candidates: ReadonlyArray<NodeAddress>, currentShards: ShardAllocations): NodeAddress {
    requireShardId(shardId);
    requireCandidates(candidates);
    const view = this.view(candidates, currentShards);
    const bound = this.boundFor(view.allocated + 1, view.addresses.length);
    const owner =
      firstOpenOwner(view.ring, shardId, (o) => (view.loads[o] as number) < bound) ?? ringHome(view.ring, shardId);
    return view.addresses[owner] as NodeAddress;
  }

  /**
   * One round at a time, when the cluster is settled (as least-shard). The plan, over the candidates on the
   * ring: a shard away from its ring home goes back when that home stays within the bound counting every
   * shard planned to arrive there; then a node above the bound after its planned departures sheds the
   * excess, shards away from their ring home first, oldest first (allocate walks them on from their ring
   * home). Returns come first in the answer, oldest position first, then sheds; at most the least-shard
   * limit of them.
   */
  rebalance(
    currentShards: ShardAllocations,
    candidates: ReadonlyArray<NodeAddress>,
    rebalanceInProgress: ReadonlySet<number>,
  ): ReadonlySet<number> {
    if (rebalanceInProgress.size > 0 || candidates.length === 0) return new Set();
    const regions = describeRegions(candidates, currentShards, membersByAddress(this.cluster));
    if (!isGoodTimeToRebalance(regions, this.cluster)) return new Set();
    const view = this.viewOf(healthiest(regions), currentShards);
    if (view.allocated === 0) return new Set();
    const { ring, shards, loads } = view;
    const bound = this.boundFor(view.allocated, view.addresses.length);
    const arrivals = new Int32Array(loads.length);
    const departures = new Int32Array(loads.length);
    const returns: Array<{ readonly shardId: number; readonly position: number; readonly owner: number }> = [];
    const planned = new Set<number>();
    for (let owner = 0; owner < shards.length; owner++) {
      let position = 0;
      for (const shardId of shards[owner] as ReadonlySet<number>) {
        const home = ringHome(ring, shardId);
        if (home !== owner && (loads[home] as number) + (arrivals[home] as number) < bound) {
          arrivals[home] = (arrivals[home] as number) + 1;
          departures[owner] = (departures[owner] as number) + 1;
          planned.add(shardId);
          returns.push({ shardId, position, owner });
        }
        position++;
      }
    }
    const sheds: number[] = [];
    for (let owner = 0; owner < shards.length; owner++) {
      let excess = (loads[owner] as number) - (departures[owner] as number) - bound;
      if (excess <= 0) continue;
      const owned = [...(shards[owner] as ReadonlySet<number>)].filter((shardId) => !planned.has(shardId));
      const away = owned.filter((shardId) => ringHome(ring, shardId) !== owner);
      for (const shardId of [...away, ...owned.filter((id) => ringHome(ring, id) === owner)]) {
        if (excess-- <= 0) break;
        sheds.push(shardId);
      }
    }
    // Oldest position first across nodes: the external strategy shows pinned shards (which never move) as
    // the youngest, so they come last and take no round's limit from shards that can move.
    returns.sort((a, b) => a.position - b.position || a.owner - b.owner);
    const limit = rebalanceLimit(view.allocated, this.absoluteLimit, this.relativeLimit);
    const moves = new Set<number>();
    // Returns before sheds: a shed shard walks on from its ring home, which a return may be about to empty.
    for (const shardId of [...returns.map((r) => r.shardId), ...sheds]) {
      if (moves.size >= limit) break;
      moves.add(shardId);
    }
    return moves;
  }

  /**
   * Why `shardId` is on `home`, for explain: one clause, read from the same ring and bound allocate and
   * rebalance use now. Undefined when no candidate is on the ring.
   */
  reasonFor(
    shardId: number,
    home: string,
    candidates: ReadonlyArray<NodeAddress>,
    currentShards: ShardAllocations,
  ): string | undefined {
    if (candidates.length === 0) return undefined;
    const view = this.view(candidates, currentShards);
    const { ring, loads } = view;
    const bound = this.boundFor(view.allocated, view.addresses.length);
    const ringHomeOwner = ringHome(ring, shardId);
    const ringHomeKey = ring.keys[ringHomeOwner] as string;
    const here = ring.indexOf.get(home);
    if (here === undefined) return `not on the ring now (its ring home is ${ringHomeKey})`;
    const load = loads[here] as number;
    if (here === ringHomeOwner) {
      return load <= bound
        ? 'ring home, under its bound'
        : `ring home, above its bound of ${bound}: a rebalance round sheds shards from it`;
    }
    return (loads[ringHomeOwner] as number) < bound
      ? `its ring home ${ringHomeKey} is under its bound of ${bound}: it moves there at a rebalance round`
      : `its ring home ${ringHomeKey} is at its bound of ${bound}: the next node clockwise under its bound`;
  }

  toString(): string {
    return `RingAllocationStrategy(${this.virtualNodes}, ${this.loadBound})`;
  }

  /** The ring of the healthiest candidates (least-shard's ranking, without the load). */
  private view(candidates: ReadonlyArray<NodeAddress>, currentShards: ShardAllocations): RingView {
    // allocate's hot path: one pass for the best health, one for the ring's nodes, no intermediate lists.
    const members = membersByAddress(this.cluster);
    const regions: RegionInfo[] = new Array<RegionInfo>(candidates.length);
    let best: RegionInfo | undefined;
    for (let i = 0; i < candidates.length; i++) {
      const region = describeRegion(candidates[i] as NodeAddress, currentShards, members);
      regions[i] = region;
      if (best === undefined || compareHealth(region, best) < 0) best = region;
    }
    if (best === undefined) throw new ActorTsError('invalid_argument', 'allocate needs at least one candidate node');
    const top = best;
    // Usually every candidate ties (a settled cluster): then no filtered copy.
    const healthy = regions.every((region) => compareHealth(region, top) === 0)
      ? regions
      : regions.filter((region) => compareHealth(region, top) === 0);
    return this.viewOf(healthy, currentShards);
  }

  /** The ring of `regions` (duplicates allowed) with their loads; the cached ring when it has exactly these nodes. */
  private viewOf(regions: ReadonlyArray<RegionInfo>, currentShards: ShardAllocations): RingView {
    const cached = this.cached;
    if (cached !== undefined) {
      const view = this.fill(cached, regions, currentShards);
      if (view !== undefined) return view;
    }
    this.cached = buildRing(
      regions.map((region) => region.key),
      this.virtualNodes,
    );
    return this.fill(this.cached, regions, currentShards) as RingView;
  }

  /** The view over `ring`, or undefined when `regions` are not exactly its nodes. */
  private fill(
    ring: HashRing,
    regions: ReadonlyArray<RegionInfo>,
    currentShards: ShardAllocations,
  ): RingView | undefined {
    const size = ring.keys.length;
    const addresses: NodeAddress[] = new Array<NodeAddress>(size);
    const shards: Array<ReadonlySet<number>> = new Array<ReadonlySet<number>>(size);
    const loads = new Int32Array(size);
    let filled = 0;
    for (const region of regions) {
      const owner = ring.indexOf.get(region.key);
      if (owner === undefined) return undefined;
      if (addresses[owner] !== undefined) continue;
      addresses[owner] = region.address;
      shards[owner] = region.shards;
      loads[owner] = region.shards.size;
      filled++;
    }
    if (filled !== size) return undefined;
    let allocated = 0;
    for (const set of currentShards.values()) allocated += set.size;
    return { ring, addresses, shards, loads, allocated };
  }
}
