// Ring allocation (issue 28, Effect's answer to Pekko's least-shard; issue 40, one assignment): every
// candidate on a consistent-hash ring with `virtualNodes` points, and every shard id of the range
// 0..numberOfShards-1 given a home by walking clockwise from its point to the first member under a load
// bound. That assignment is a function of the member set alone, computed once per member set: allocate
// returns a shard's home in it, rebalance moves only shards that are elsewhere, so nothing moves while the
// members stay, a node that leaves and comes back gets its shards back, and a change moves about range / nodes.
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
import { buildRing, ringHome } from './hash-ring.js';
import { assignRange, assignedOwner, ringCapacity, type RingAssignment } from './ring-assignment.js';

/** Options of RingAllocationStrategy; each has a documented default. */
export interface RingAllocationOptions {
  /** Points per node on the ring; default 128 (Effect's), 1..4096. More points, more even ring homes. */
  readonly virtualNodes?: number;
  /**
   * The shard range the assignment covers, ids 0..numberOfShards-1: the entity type's `numberOfShards`;
   * default 1000 (the default of an entity type). Ids beyond it go to their plain ring home, without a bound.
   */
  readonly numberOfShards?: number;
  /** No node is given more than max(ceil(mean), floor(loadBound * mean)) of the range; default 1.25, >= 1. */
  readonly loadBound?: number;
  /** Most shards moved in one rebalance round; default 20 (as least-shard). */
  readonly absoluteLimit?: number;
  /** Most shards moved in one round as a fraction of all allocated shards; default 0.1 (as least-shard). */
  readonly relativeLimit?: number;
  /** Membership facts; without it every candidate counts as up, reachable and on the same version. */
  readonly cluster?: ClusterView;
}

/** The candidates on the ring for one call, by owner number, and the assignment of their member set. */
interface RingView {
  readonly assignment: RingAssignment;
  readonly addresses: readonly NodeAddress[];
}

const MAX_VIRTUAL_NODES = 4096;
/** An entity type's largest numberOfShards (core/sharded-type.ts, which this room may not import). */
const MAX_RANGE = 1_000_000;
/** Member sets whose assignment is kept (each a Uint32Array of the range and its ring). */
const MAX_CACHED = 4;

/**
 * Effect's answer as a strategy: every node on a hash ring (`virtualNodes` points each, hashed from its address without
 * the incarnation), and one assignment of the whole shard range over the healthiest candidates, each shard at the
 * first node clockwise from its hash that is under the bound. Allocate and rebalance both read that assignment, so
 * they agree: the same members give the same homes on every node, in every run and after any allocation order.
 */
export class RingAllocationStrategy implements AllocationStrategy {
  readonly virtualNodes: number;
  readonly numberOfShards: number;
  readonly loadBound: number;
  readonly absoluteLimit: number;
  readonly relativeLimit: number;
  private readonly cluster: ClusterView | undefined;
  // The assignments of the last member sets, newest first: building one walks the whole range, and the set
  // rarely changes; more than one because the external strategy also asks over the nodes a selector pin allows.
  private cached: RingAssignment[] = [];

  constructor(options: RingAllocationOptions = {}) {
    const { virtualNodes = 128, numberOfShards = 1000, loadBound = 1.25, cluster } = options;
    const { absoluteLimit = 20, relativeLimit = 0.1 } = options;
    if (!Number.isInteger(virtualNodes) || virtualNodes < 1 || virtualNodes > MAX_VIRTUAL_NODES) {
      throw new ActorTsError(
        'invalid_argument',
        `virtualNodes must be an integer in 1..${MAX_VIRTUAL_NODES}, got ${String(virtualNodes)}`,
      );
    }
    if (!Number.isInteger(numberOfShards) || numberOfShards < 1 || numberOfShards > MAX_RANGE) {
      throw new ActorTsError(
        'invalid_argument',
        `numberOfShards must be an integer in 1..${MAX_RANGE}, got ${String(numberOfShards)}`,
      );
    }
    // Below 1 the bound could hold fewer shards than exist, and allocate would have nowhere to put one.
    if (typeof loadBound !== 'number' || !Number.isFinite(loadBound) || loadBound < 1) {
      throw new ActorTsError('invalid_argument', `loadBound must be a finite number >= 1, got ${String(loadBound)}`);
    }
    requireRebalanceLimits(absoluteLimit, relativeLimit);
    this.virtualNodes = virtualNodes;
    this.numberOfShards = numberOfShards;
    this.loadBound = loadBound;
    this.absoluteLimit = absoluteLimit;
    this.relativeLimit = relativeLimit;
    this.cluster = cluster;
  }

  /** Most shards of the range one of `nodes` members is given: max(ceil(mean), floor(loadBound * mean)). */
  boundFor(nodes: number): number {
    return ringCapacity(this.numberOfShards, nodes, this.loadBound);
  }

  /** The shard's home in the assignment of the healthiest candidates: a lookup, whatever the loads. */
  allocate(shardId: number, candidates: ReadonlyArray<NodeAddress>, currentShards: ShardAllocations): NodeAddress {
    requireShardId(shardId);
    requireCandidates(candidates);
    const view = this.view(candidates, currentShards);
    return view.addresses[assignedOwner(view.assignment, shardId)] as NodeAddress;
  }

  /**
   * When the cluster is settled (as least-shard): the shards on a candidate other than their home in the
   * assignment of the healthiest candidates, oldest position in their node's allocation order first, at most the
   * least-shard limit of them. None while the members stay and every shard is home.
   */
  rebalance(
    currentShards: ShardAllocations,
    candidates: ReadonlyArray<NodeAddress>,
    rebalanceInProgress: ReadonlySet<number>,
  ): ReadonlySet<number> {
    if (rebalanceInProgress.size > 0 || candidates.length === 0) return new Set();
    const regions = describeRegions(candidates, currentShards, membersByAddress(this.cluster));
    if (!isGoodTimeToRebalance(regions, this.cluster)) return new Set();
    const { assignment } = this.viewOf(healthiest(regions));
    const away: Array<{ readonly shardId: number; readonly position: number; readonly node: number }> = [];
    const seen = new Set<string>();
    for (let node = 0; node < regions.length; node++) {
      const region = regions[node] as RegionInfo;
      // A candidate listed twice holds its shards once.
      if (seen.has(region.key)) continue;
      seen.add(region.key);
      let position = 0;
      for (const shardId of region.shards) {
        const home = assignment.ring.keys[assignedOwner(assignment, shardId)];
        if (home !== region.key) away.push({ shardId, position, node });
        position++;
      }
    }
    // Oldest position first across nodes: the external strategy shows pinned shards (which never move) as
    // the youngest, so they come last and take no round's limit from shards that can move.
    away.sort((x, y) => x.position - y.position || x.node - y.node);
    let allocated = 0;
    for (const shards of currentShards.values()) allocated += shards.size;
    const limit = rebalanceLimit(allocated, this.absoluteLimit, this.relativeLimit);
    return new Set(away.slice(0, limit).map((entry) => entry.shardId));
  }

  /**
   * Why `shardId` is on `home`, for explain: one clause, read from the same assignment allocate and rebalance
   * use now. Undefined when no candidate is on the ring.
   */
  reasonFor(
    shardId: number,
    home: string,
    candidates: ReadonlyArray<NodeAddress>,
    currentShards: ShardAllocations,
  ): string | undefined {
    if (candidates.length === 0) return undefined;
    const { assignment } = this.view(candidates, currentShards);
    const { ring, capacity } = assignment;
    const assigned = ring.keys[assignedOwner(assignment, shardId)] as string;
    const ringHomeKey = ring.keys[ringHome(ring, shardId)] as string;
    if (shardId >= assignment.numberOfShards) {
      return home === assigned
        ? `ring home (shard id beyond the range of ${assignment.numberOfShards}: no bound)`
        : `its ring home is ${assigned} (beyond the range, no bound): it moves there at a rebalance round`;
    }
    const why =
      assigned === ringHomeKey
        ? 'its ring home'
        : `the next node clockwise under the bound of ${capacity} (its ring home ${ringHomeKey} is full)`;
    if (home === assigned) return `assigned here: ${why}`;
    if (!ring.indexOf.has(home)) return `not on the ring now: assigned to ${assigned}, ${why}`;
    return `assigned to ${assigned}, ${why}: it moves there at a rebalance round`;
  }

  toString(): string {
    return `RingAllocationStrategy(${this.virtualNodes}, ${this.loadBound}, ${this.numberOfShards})`;
  }

  /** The assignment of the healthiest candidates (least-shard's ranking, without the load). */
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
    return this.viewOf(healthy);
  }

  /** The assignment of `regions` (duplicates allowed): the cached one when its ring has exactly these nodes. */
  private viewOf(regions: ReadonlyArray<RegionInfo>): RingView {
    for (const cached of this.cached) {
      const view = addressesOn(cached, regions);
      if (view !== undefined) return view;
    }
    const ring = buildRing(
      regions.map((region) => region.key),
      this.virtualNodes,
    );
    const assignment = assignRange(ring, this.numberOfShards, this.loadBound);
    this.cached = [assignment, ...this.cached.slice(0, MAX_CACHED - 1)];
    return addressesOn(assignment, regions) as RingView;
  }
}

/** The view of `assignment` with the regions' addresses by owner, or undefined when they are not its nodes. */
function addressesOn(assignment: RingAssignment, regions: ReadonlyArray<RegionInfo>): RingView | undefined {
  const { ring } = assignment;
  const addresses: NodeAddress[] = new Array<NodeAddress>(ring.keys.length);
  let filled = 0;
  for (const region of regions) {
    const owner = ring.indexOf.get(region.key);
    if (owner === undefined) return undefined;
    if (addresses[owner] !== undefined) continue;
    addresses[owner] = region.address;
    filled++;
  }
  return filled === ring.keys.length ? { assignment, addresses } : undefined;
}
