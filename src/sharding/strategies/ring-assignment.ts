// The ring strategy's one assignment (issue 40): every shard id of the range 0..numberOfShards-1, allocated or
// not, given a home among the members by consistent hashing with bounded loads. A pure function of the member
// set and the range, so allocate (a lookup in it) and rebalance (the shards not where it says) agree, whatever
// order shards were allocated in, and a member that leaves and comes back gets exactly its shards back.
import { firstOpenOwner, ringHome, type HashRing } from './hash-ring.js';

/** Owner numbers (indexes into `ring.keys`) of every shard id in the range, computed once per member set. */
export interface RingAssignment {
  readonly ring: HashRing;
  readonly numberOfShards: number;
  /** Most shards of the range one member is given. */
  readonly capacity: number;
  readonly owners: Uint32Array;
}

/**
 * Most shards of `shards` one of `nodes` members is given: loadBound times the mean, rounded down (so max/mean
 * stays within loadBound), but never below the mean rounded up, which is what makes every shard fit.
 */
export function ringCapacity(shards: number, nodes: number, loadBound: number): number {
  const mean = shards / nodes;
  // The epsilon keeps 1.1 * 10 (11.000000000000002) from counting as above 11.
  return Math.max(Math.ceil(mean - 1e-9), Math.floor(loadBound * mean + 1e-9));
}

/**
 * Shards in ascending id order, each to the first member clockwise from its point that holds fewer than the
 * capacity. Ascending ids make the overflow walk deterministic: the same members and range give the same
 * owners in every process. Costs numberOfShards ring walks: done on a membership change, not per allocate.
 */
export function assignRange(ring: HashRing, numberOfShards: number, loadBound: number): RingAssignment {
  const capacity = ringCapacity(numberOfShards, ring.keys.length, loadBound);
  const loads = new Uint32Array(ring.keys.length);
  const owners = new Uint32Array(numberOfShards);
  const open = (owner: number): boolean => (loads[owner] as number) < capacity;
  for (let shardId = 0; shardId < numberOfShards; shardId++) {
    // capacity * members >= numberOfShards, so some member is always open; ringHome is only the type's answer.
    const owner = firstOpenOwner(ring, shardId, open) ?? ringHome(ring, shardId);
    loads[owner] = (loads[owner] as number) + 1;
    owners[shardId] = owner;
  }
  // `owners` now holds what the walks needed; the memo of their start points would only double it (a range
  // of up to a million ids), and ringHome memoises again for the few lookups that still need it.
  ring.starts.clear();
  return { ring, numberOfShards, capacity, owners };
}

/**
 * A shard's owner number: its place in the assignment, or its plain ring home for an id beyond the range (a
 * range configured smaller than the type's: still a function of the members alone, only not load-bounded).
 */
export function assignedOwner(assignment: RingAssignment, shardId: number): number {
  return shardId < assignment.numberOfShards
    ? (assignment.owners[shardId] as number)
    : ringHome(assignment.ring, shardId);
}
