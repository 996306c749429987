// The allocation-strategy contract the coordinator calls, plus what the built-in strategies share:
// argument checks, the member facts a strategy ranks candidates by, the allocation ordering, the
// "is it a good time to rebalance" rule and the numeric app-version comparison.
import type { NodeAddress } from '../../cluster/address.js';
import { ARRIVING_STATUSES, DEPARTING_STATUSES, type ClusterView, type MemberInfo } from '../../cluster/member.js';
import { ActorTsError } from '../../errors.js';

/** Shards per node, keyed by `NodeAddress.toString()`; each set iterates in allocation order, oldest first. */
export type ShardAllocations = ReadonlyMap<string, ReadonlySet<number>>;

/**
 * Decides shard homes for a type's coordinator: where a new shard goes, and which shards to move. Built in:
 * least-shard, legacy least-shard, hash and external; `asActorTsStrategy` adapts any of them to actor-ts.
 */
export interface AllocationStrategy {
  /**
   * Picks the home of a shard that has none: one of `candidates`, or undefined for "no home now" (a hard
   * placement rule no candidate satisfies). The coordinator then leaves the shard unallocated, its messages
   * wait in the regions' buffers, and it asks again when membership or placements change, or at
   * `nextChangeAt`; never in a loop.
   */
  allocate(
    shardId: number,
    candidates: ReadonlyArray<NodeAddress>,
    currentShards: ShardAllocations,
  ): NodeAddress | undefined;
  /** Shards the coordinator should hand off now; they are then re-allocated through `allocate`. */
  rebalance(
    currentShards: ShardAllocations,
    candidates: ReadonlyArray<NodeAddress>,
    rebalanceInProgress: ReadonlySet<number>,
  ): ReadonlySet<number>;
  /**
   * Optional: milliseconds from now until this strategy's answers change by the passing of time alone (a
   * pin expiring, by the strategy's own clock), or undefined for never. The coordinator runs a rebalance
   * round, and asks again for shards without a home, at that moment.
   */
  nextChangeInMs?(): number | undefined;
  /**
   * Optional: why this strategy has `shardId` on `home` (an address string) now, as one short clause for
   * explain, e.g. "ring home, under its bound"; undefined when it has nothing to add.
   */
  reasonFor?(
    shardId: number,
    home: string,
    candidates: ReadonlyArray<NodeAddress>,
    currentShards: ShardAllocations,
  ): string | undefined;
}

/** Whether `value` has the shape of an AllocationStrategy: what every taker of a user's strategy checks first. */
export function isAllocationStrategy(value: unknown): value is AllocationStrategy {
  if (typeof value !== 'object' || value === null) return false;
  const { allocate, rebalance } = value as Partial<AllocationStrategy>;
  return typeof allocate === 'function' && typeof rebalance === 'function';
}

/** A candidate node with the facts the least-shard strategies rank it by. */
export interface RegionInfo {
  readonly address: NodeAddress;
  readonly key: string;
  readonly shards: ReadonlySet<number>;
  /** False when a cluster view was given and does not list this node (a stale view). */
  readonly known: boolean;
  readonly reachable: boolean;
  /** Leaving, exiting, down or removed: on its way out, so the last choice for new shards. */
  readonly leaving: boolean;
  readonly appVersion: string;
  readonly upNumber: number;
}

const NO_SHARDS: ReadonlySet<number> = new Set<number>();

export function requireShardId(shardId: number): void {
  if (!Number.isSafeInteger(shardId) || shardId < 0) {
    throw new ActorTsError('invalid_argument', `shard id must be a non-negative integer, got ${String(shardId)}`);
  }
}

export function requireCandidates(candidates: ReadonlyArray<NodeAddress>): void {
  if (!Array.isArray(candidates) || candidates.length === 0) {
    throw new ActorTsError('invalid_argument', 'allocate needs at least one candidate node');
  }
}

/** The shards `address` holds; a node missing from the map holds none. */
export function shardsOf(currentShards: ShardAllocations, address: NodeAddress): ReadonlySet<number> {
  return currentShards.get(address.toString()) ?? NO_SHARDS;
}

/** Members by address string, or undefined when there is no view (then every node counts as healthy). */
export function membersByAddress(cluster: ClusterView | undefined): ReadonlyMap<string, MemberInfo> | undefined {
  if (cluster === undefined) return undefined;
  const byAddress = new Map<string, MemberInfo>();
  for (const member of cluster.members()) byAddress.set(member.address.toString(), member);
  return byAddress;
}

/** One entry per distinct candidate, in candidate order. */
export function describeRegions(
  candidates: ReadonlyArray<NodeAddress>,
  currentShards: ShardAllocations,
  members: ReadonlyMap<string, MemberInfo> | undefined,
): RegionInfo[] {
  const seen = new Set<string>();
  const regions: RegionInfo[] = [];
  for (const address of candidates) {
    const region = describeRegion(address, currentShards, members);
    if (seen.has(region.key)) continue;
    seen.add(region.key);
    regions.push(region);
  }
  return regions;
}

export function describeRegion(
  address: NodeAddress,
  currentShards: ShardAllocations,
  members: ReadonlyMap<string, MemberInfo> | undefined,
): RegionInfo {
  const key = address.toString();
  const shards = currentShards.get(key) ?? NO_SHARDS;
  if (members === undefined) {
    return { address, key, shards, known: true, reachable: true, leaving: false, appVersion: '', upNumber: 0 };
  }
  const member = members.get(key);
  if (member === undefined) {
    // A node the view does not know yet cannot be vouched for: rank it with unreachable leavers.
    return { address, key, shards, known: false, reachable: false, leaving: true, appVersion: '', upNumber: Infinity };
  }
  return {
    address,
    key,
    shards,
    known: true,
    reachable: member.reachable,
    leaving: DEPARTING_STATUSES.has(member.status),
    appVersion: member.appVersion,
    upNumber: member.upNumber,
  };
}

/**
 * Allocation preference, best first: reachable, not on its way out, highest app version, fewest
 * shards, oldest member, address. Reachability comes first (Pekko omits it) so a new shard never
 * lands on a node that is about to be downed.
 */
export function compareForAllocation(a: RegionInfo, b: RegionInfo): number {
  const health = compareHealth(a, b);
  if (health !== 0) return health;
  if (a.shards.size !== b.shards.size) return a.shards.size - b.shards.size;
  if (a.upNumber !== b.upNumber) return a.upNumber < b.upNumber ? -1 : 1;
  return compareStrings(a.key, b.key);
}

/**
 * The part of allocation preference that is about the node, not its load: reachable, not on its way out,
 * highest app version. Strategies that place by something other than load (the ring) rank by this alone.
 */
export function compareHealth(a: RegionInfo, b: RegionInfo): number {
  if (a.reachable !== b.reachable) return a.reachable ? -1 : 1;
  if (a.leaving !== b.leaving) return a.leaving ? 1 : -1;
  if (a.appVersion !== b.appVersion) return compareAppVersions(b.appVersion, a.appVersion);
  return 0;
}

/** The regions that tie with the healthiest one on compareHealth, in `regions` order. */
export function healthiest(regions: ReadonlyArray<RegionInfo>): RegionInfo[] {
  let best: RegionInfo | undefined;
  for (const region of regions) if (best === undefined || compareHealth(region, best) < 0) best = region;
  return best === undefined ? [] : regions.filter((region) => compareHealth(region, best) === 0);
}

/** Checks least-shard's rate-limit options (shared by the strategies that rate-limit the same way). */
export function requireRebalanceLimits(absoluteLimit: number, relativeLimit: number): void {
  if (!(Number.isInteger(absoluteLimit) || absoluteLimit === Infinity) || absoluteLimit < 0) {
    throw new ActorTsError(
      'invalid_argument',
      `absoluteLimit must be a non-negative integer or Infinity, got ${String(absoluteLimit)}`,
    );
  }
  if (typeof relativeLimit !== 'number' || Number.isNaN(relativeLimit) || relativeLimit < 0) {
    throw new ActorTsError('invalid_argument', `relativeLimit must be a number >= 0, got ${String(relativeLimit)}`);
  }
}

/** Most shards one rebalance round moves: `max(1, min(floor(relativeLimit * shards), absoluteLimit))`. */
export function rebalanceLimit(shardCount: number, absoluteLimit: number, relativeLimit: number): number {
  return Math.max(1, Math.min(Math.floor(relativeLimit * shardCount), absoluteLimit));
}

/** The best region for a new shard; `regions` must not be empty. */
export function mostSuitable(regions: ReadonlyArray<RegionInfo>): RegionInfo {
  let best = regions[0];
  if (best === undefined) throw new ActorTsError('invalid_argument', 'no candidate regions to choose from');
  for (const region of regions) {
    if (compareForAllocation(region, best) < 0) best = region;
  }
  return best;
}

/** Allocation shared by both least-shard strategies. */
export function allocateLeastShard(
  shardId: number,
  candidates: ReadonlyArray<NodeAddress>,
  currentShards: ShardAllocations,
  cluster: ClusterView | undefined,
): NodeAddress {
  requireShardId(shardId);
  requireCandidates(candidates);
  // A single pass without building the region list: allocate runs once per new shard, and a
  // duplicate candidate cannot change which one is best.
  if (cluster === undefined) return leastLoaded(candidates, currentShards);
  const members = membersByAddress(cluster);
  let best: RegionInfo | undefined;
  for (const address of candidates) {
    const region = describeRegion(address, currentShards, members);
    if (best === undefined || compareForAllocation(region, best) < 0) best = region;
  }
  return (best as RegionInfo).address;
}

/** Without a view every candidate ties on health and version: fewest shards, then address. */
function leastLoaded(candidates: ReadonlyArray<NodeAddress>, currentShards: ShardAllocations): NodeAddress {
  let best = candidates[0] as NodeAddress;
  let bestKey = best.toString();
  let bestSize = currentShards.get(bestKey)?.size ?? 0;
  for (const address of candidates) {
    const key = address.toString();
    const size = currentShards.get(key)?.size ?? 0;
    if (size < bestSize || (size === bestSize && key < bestKey)) {
      best = address;
      bestKey = key;
      bestSize = size;
    }
  }
  return best;
}

/**
 * Rebalancing moves shards through a hand-off that every region and proxy must acknowledge, and a
 * joining node or a rolling update will change the picture shortly, so wait for a settled cluster:
 * no regions -> no; a candidate unknown to the view -> no (the view is stale); regions on different
 * app versions -> no; any member (other than removed ones) unreachable, joining or weakly-up -> no.
 */
export function isGoodTimeToRebalance(regions: ReadonlyArray<RegionInfo>, cluster: ClusterView | undefined): boolean {
  const first = regions[0];
  if (first === undefined) return false;
  if (cluster === undefined) return true;
  for (const region of regions) {
    if (!region.known) return false;
    if (compareAppVersions(region.appVersion, first.appVersion) !== 0) return false;
  }
  for (const member of cluster.members()) {
    if (member.status === 'removed') continue;
    if (!member.reachable || ARRIVING_STATUSES.has(member.status)) return false;
  }
  return true;
}

/**
 * Compares app versions by dot-separated parts, numerically: "1.10.0" > "1.9.0". Missing parts count
 * as 0 ("1.2" == "1.2.0"). Within a part the leading digits compare as a number; a part with a
 * suffix after its digits is a pre-release, below the bare number ("1.0.0-RC1" < "1.0.0"), and
 * suffixes compare as strings. Returns -1, 0 or 1.
 */
export function compareAppVersions(a: string, b: string): number {
  const left = a.split('.');
  const right = b.split('.');
  const length = Math.max(left.length, right.length);
  for (let i = 0; i < length; i++) {
    const order = compareVersionPart(left[i] ?? '0', right[i] ?? '0');
    if (order !== 0) return order;
  }
  return 0;
}

function compareVersionPart(a: string, b: string): number {
  const [digitsA, suffixA] = splitPart(a);
  const [digitsB, suffixB] = splitPart(b);
  // Compare digit strings without Number() so parts longer than 2^53 still order correctly.
  if (digitsA.length !== digitsB.length) return digitsA.length < digitsB.length ? -1 : 1;
  const numeric = compareStrings(digitsA, digitsB);
  if (numeric !== 0) return numeric;
  if (suffixA === suffixB) return 0;
  if (suffixA === '') return 1;
  if (suffixB === '') return -1;
  return compareStrings(suffixA, suffixB);
}

function splitPart(part: string): [digits: string, suffix: string] {
  let end = 0;
  while (end < part.length && part.charCodeAt(end) >= 48 && part.charCodeAt(end) <= 57) end++;
  const digits = part.slice(0, end).replace(/^0+/, '');
  return [digits, part.slice(end)];
}

/** Code-unit order, independent of the process locale, so every node sorts the same way. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
