// What lets gossip stay small once the cluster agrees (Pekko's GossipStatus): a hash of a state's content
// and tombstones, its `seen` set as a bitset over the content's sorted member keys, and the delta between
// two states (the records and reachability rows that changed), which is what news is pushed as in a large
// cluster. Every digest is cached per state object: states are immutable, and an unchanged part keeps its
// identity through a merge (gossip.ts), so a digest is computed once per change, not once per message.
import { createHash } from 'node:crypto';
import {
  reachabilityOf,
  sameRecordContent,
  stateDigest,
  statusRank,
  type GossipState,
  type MemberRecord,
} from './gossip.js';
import { sameRow, sameTable, type ObserverRow } from './reachability-table.js';

/** By member map: the hash, and the table and tombstones it was computed with (seen marks do not count). */
const statusHashes = new WeakMap<
  ReadonlyMap<string, MemberRecord>,
  { readonly table: unknown; readonly tombstones: unknown; readonly hash: string }
>();
const sortedKeyLists = new WeakMap<ReadonlyMap<string, MemberRecord>, readonly string[]>();

/** The members' keys in code-unit order: the bit order of `seenBits`. */
export function sortedKeys(members: ReadonlyMap<string, MemberRecord>): readonly string[] {
  let keys = sortedKeyLists.get(members);
  if (keys === undefined) {
    keys = [...members.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    sortedKeyLists.set(members, keys);
  }
  return keys;
}

/**
 * A hash of everything but `seen` (members, reachability, tombstones): equal hashes, equal states up to who
 * has seen them. SHA-256, so a peer cannot make two different states look equal by accident.
 */
export function statusHash(state: GossipState): string {
  const cached = statusHashes.get(state.members);
  if (cached !== undefined && cached.table === reachabilityOf(state) && cached.tombstones === state.tombstones)
    return cached.hash;
  const tombstones = [...state.tombstones.keys()].sort().join('\n');
  const hash = createHash('sha256')
    .update(stateDigest(state))
    .update('\n--\n')
    .update(tombstones)
    .digest('base64')
    .slice(0, 32);
  statusHashes.set(state.members, { table: reachabilityOf(state), tombstones: state.tombstones, hash });
  return hash;
}

/** Bit i is set when the i-th sorted member key has seen this content. */
export function seenBits(state: GossipState): Uint8Array {
  const keys = sortedKeys(state.members);
  const bits = new Uint8Array(Math.ceil(keys.length / 8));
  keys.forEach((key, i) => {
    if (state.seen.has(key)) bits[i >> 3]! |= 1 << (i & 7);
  });
  return bits;
}

/**
 * The state with the members `bits` marks added to `seen` (the sender hashed the same content, so the bit
 * order is the same); the same object when nothing was added; undefined when the bitset cannot be this
 * content's (wrong length, or a bit past the last member).
 */
export function withSeenBits(state: GossipState, bits: Uint8Array): GossipState | undefined {
  const keys = sortedKeys(state.members);
  if (bits.length !== Math.ceil(keys.length / 8)) return undefined;
  const spare = bits.length * 8 - keys.length;
  if (spare > 0 && bits[bits.length - 1]! >> (8 - spare) !== 0) return undefined;
  let seen: Set<string> | undefined;
  keys.forEach((key, i) => {
    if ((bits[i >> 3]! & (1 << (i & 7))) === 0 || state.seen.has(key)) return;
    seen ??= new Set(state.seen);
    seen.add(key);
  });
  return seen === undefined ? state : { ...state, seen };
}

/** Whether `state` has seen members that `bits` (over the same content) does not mark. */
export function knowsMoreSeen(state: GossipState, bits: Uint8Array): boolean {
  const keys = sortedKeys(state.members);
  return keys.some((key, i) => state.seen.has(key) && ((bits[i >> 3] ?? 0) & (1 << (i & 7))) === 0);
}

/**
 * What `after` holds that `before` did not: changed or new member records, changed reachability rows (with
 * the records of the members they name, which the wire form needs), and new tombstones; `seen` empty, as
 * nobody has seen a delta as a whole. Merging it into a state that had `before` gives `after`'s content.
 */
export function deltaOf(before: GossipState, after: GossipState): GossipState {
  const members = new Map<string, MemberRecord>();
  for (const [key, record] of after.members) {
    const previous = before.members.get(key);
    if (previous === undefined || !sameRecordContent(previous, record)) members.set(key, record);
  }
  const reachability = new Map<string, ObserverRow>();
  const beforeTable = reachabilityOf(before);
  for (const [observer, row] of reachabilityOf(after)) {
    const previous = beforeTable.get(observer);
    if (previous !== undefined && sameRow(previous, row)) continue;
    reachability.set(observer, row);
    for (const key of [observer, ...row.subjects]) {
      const record = after.members.get(key);
      if (record !== undefined) members.set(key, record);
    }
  }
  const tombstones = new Map([...after.tombstones].filter(([key]) => !before.tombstones.has(key)));
  return { members, seen: new Set(), tombstones, reachability };
}

/**
 * Whether the change from `before` to `after` is `observer`'s reachability row alone (no record, no tombstone,
 * no other row): news its author pushed to every member itself, which nobody needs to pass on.
 */
export function onlyRowOf(before: GossipState, after: GossipState, observer: string): boolean {
  if (after.tombstones.size !== before.tombstones.size) return false;
  for (const key of after.tombstones.keys()) if (!before.tombstones.has(key)) return false;
  if (after.members !== before.members) {
    if (after.members.size !== before.members.size) return false;
    for (const [key, record] of after.members) {
      const previous = before.members.get(key);
      if (previous === undefined || !sameRecordContent(previous, record)) return false;
    }
  }
  const beforeTable = reachabilityOf(before);
  let changed = false;
  for (const [key, row] of reachabilityOf(after)) {
    const previous = beforeTable.get(key);
    if (previous !== undefined && sameRow(previous, row)) continue;
    if (key !== observer) return false;
    changed = true;
  }
  return changed;
}

/**
 * Whether the change from `before` to `after` is one the cluster acts on in seconds: a member leaving,
 * exiting, down or removed, a reachability row, a tombstone. Joins and moves to Up are not: gossip carries
 * them within a few rounds, and pushing each one at once would cost N x fanout messages per join.
 */
export function isUrgent(before: GossipState, after: GossipState): boolean {
  if (!sameTable(reachabilityOf(before), reachabilityOf(after))) return true;
  for (const key of after.tombstones.keys()) if (!before.tombstones.has(key)) return true;
  for (const [key, record] of after.members) {
    const previous = before.members.get(key);
    if (previous !== undefined && sameRecordContent(previous, record)) continue;
    if (statusRank(record.status) >= statusRank('leaving') || record.downedAtMs !== previous?.downedAtMs) return true;
  }
  return false;
}
