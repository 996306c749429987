// The replicated membership state and its merge. A member's status only moves forward
// (joining < weakly-up < up < leaving < exiting < down < removed), so merging two states record by record,
// keeping the further status, is commutative, associative and idempotent: gossip converges whatever order,
// loss or duplication it meets. The `seen` set says who has seen exactly this content (convergence).
// A removed member's record is kept for a while, then replaced by a tombstone (its key and when it was
// pruned) that wins over any copy of the record still travelling, so gossip does not grow with every
// incarnation a cluster has ever seen; tombstones expire after a day, as in Pekko.
// The reachability table (reachability-table.ts) travels with the members and is part of the content: a
// change of it is news to pass on, and resets `seen` like a status change.
import { NodeAddress } from '../address.js';
import { isGone, type MemberStatus } from '../member.js';
import type { WireGossip, WireMember } from './messages.js';
import {
  EMPTY_TABLE,
  liveEdges,
  mergeTables,
  retainKnown,
  sameTable,
  tableDigest,
  tableFromWire,
  tableToWire,
  type ReachabilityTable,
  type UnreachableEdge,
} from './reachability-table.js';

/** One member as this node holds it: the wire shape, with its address parsed. */
export interface MemberRecord extends Omit<WireMember, 'address'> {
  readonly address: NodeAddress;
}

export interface GossipState {
  /** By member key (`address#incarnation`). */
  readonly members: ReadonlyMap<string, MemberRecord>;
  readonly seen: ReadonlySet<string>;
  /** Keys of pruned members, with the time (ms, the pruning node's clock) they were pruned. */
  readonly tombstones: ReadonlyMap<string, number>;
  /** Who observes whom as unreachable; absent means empty. */
  readonly reachability?: ReachabilityTable;
}

export function reachabilityOf(state: GossipState): ReachabilityTable {
  return state.reachability ?? EMPTY_TABLE;
}

/** The table's observations between members that are neither down nor removed. */
export function liveEdgesOf(state: GossipState): UnreachableEdge[] {
  return liveEdges(reachabilityOf(state), (key) => {
    const record = state.members.get(key);
    return record !== undefined && !isGone(record.status);
  });
}

const STATUS_RANK: Readonly<Record<MemberStatus, number>> = {
  joining: 0,
  'weakly-up': 1,
  up: 2,
  leaving: 3,
  exiting: 4,
  down: 5,
  removed: 6,
};

export function statusRank(status: MemberStatus): number {
  return STATUS_RANK[status];
}

export function memberKey(address: NodeAddress | string, incarnation: string): string {
  return `${address.toString()}#${incarnation}`;
}

export function keyOf(record: MemberRecord): string {
  return memberKey(record.address, record.incarnation);
}

export const EMPTY_GOSSIP: GossipState = {
  members: new Map(),
  seen: new Set(),
  tombstones: new Map(),
  reachability: EMPTY_TABLE,
};

/**
 * The further status wins; on a tie the smaller non-zero upNumber, so concurrent leaders agree. The earliest
 * down decision is kept whichever record carries it, so every node ends with the same `downedAtMs`.
 */
export function mergeRecord(a: MemberRecord, b: MemberRecord): MemberRecord {
  const ra = statusRank(a.status);
  const rb = statusRank(b.status);
  const upNumber = pickUpNumber(a.upNumber, b.upNumber);
  const winner = ra !== rb ? (ra > rb ? a : b) : a.upNumber === upNumber ? a : b;
  const merged = withFields(winner, upNumber, earliest(a.downedAtMs, b.downedAtMs));
  // Attributes are fixed per incarnation (sent with its Join); a copy that lost them must not drop them.
  const attributes = a.attributes ?? b.attributes;
  return merged.attributes !== undefined || attributes === undefined ? merged : { ...merged, attributes };
}

function pickUpNumber(a: number, b: number): number {
  if (a === 0) return b;
  if (b === 0) return a;
  return Math.min(a, b);
}

function earliest(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

function withFields(record: MemberRecord, upNumber: number, downedAtMs: number | undefined): MemberRecord {
  if (record.upNumber === upNumber && record.downedAtMs === downedAtMs) return record;
  const { downedAtMs: _dropped, ...rest } = record;
  return downedAtMs === undefined ? { ...rest, upNumber } : { ...rest, upNumber, downedAtMs };
}

/** Equal in what the content digest covers: key, status, upNumber, downedAtMs. */
export function sameRecordContent(a: MemberRecord, b: MemberRecord): boolean {
  return (
    a === b ||
    (a.status === b.status && a.upNumber === b.upNumber && a.downedAtMs === b.downedAtMs && keyOf(a) === keyOf(b))
  );
}

// States are immutable and an unchanged part keeps its identity through a merge, so each digest is built
// once per change rather than on every message.
const contentDigests = new WeakMap<ReadonlyMap<string, MemberRecord>, string>();
const tableDigests = new WeakMap<ReachabilityTable, string>();

/** A canonical text of the member content (not `seen`): equal texts, equal content. */
export function contentDigest(members: ReadonlyMap<string, MemberRecord>): string {
  let digest = contentDigests.get(members);
  if (digest === undefined) {
    digest = [...members.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, r]) => `${key}|${r.status}|${r.upNumber}|${r.downedAtMs ?? ''}`)
      .join('\n');
    contentDigests.set(members, digest);
  }
  return digest;
}

/** A canonical text of the whole content (members and reachability, not `seen`). */
export function stateDigest(state: GossipState): string {
  const table = reachabilityOf(state);
  let digest = tableDigests.get(table);
  if (digest === undefined) tableDigests.set(table, (digest = tableDigest(table)));
  return `${contentDigest(state.members)}\n--\n${digest}`;
}

/** Whether two states hold the same content (members and reachability), record by record: no digest is built. */
export function sameContent(a: GossipState, b: GossipState): boolean {
  if (!sameTable(reachabilityOf(a), reachabilityOf(b))) return false;
  if (a.members === b.members) return true;
  if (a.members.size !== b.members.size) return false;
  for (const [key, record] of a.members) {
    const other = b.members.get(key);
    if (other === undefined || !sameRecordContent(record, other)) return false;
  }
  return true;
}

/**
 * Merges `incoming` into `local` on the node `selfKey`, which by merging has seen the result. `seen`
 * survives only for content that did not change: it is the union of the seen sets of the sides whose
 * content equals the result.
 */
export function mergeGossip(local: GossipState, incoming: GossipState, selfKey: string): GossipState {
  const tombstones = mergeTombstones(local.tombstones, incoming.tombstones);
  // Copy on write: when nothing changes, the result shares local's members map (and its cached digests).
  let members: Map<string, MemberRecord> | undefined;
  for (const [key, record] of incoming.members) {
    const existing = (members ?? local.members).get(key);
    const merged = existing ? mergeRecord(existing, record) : record;
    if (merged === existing) continue;
    members ??= new Map(local.members);
    members.set(key, merged);
  }
  for (const key of tombstones.keys()) {
    if (!(members ?? local.members).has(key)) continue;
    members ??= new Map(local.members);
    members.delete(key);
  }
  const finalMembers: ReadonlyMap<string, MemberRecord> = members ?? local.members;
  const reachability = retainKnown(mergeTables(reachabilityOf(local), reachabilityOf(incoming)), (key) =>
    finalMembers.has(key),
  );
  const merged: GossipState = { members: finalMembers, seen: new Set(), tombstones, reachability };
  const seen = new Set<string>([selfKey]);
  const localContent = sameContent(merged, local);
  if (localContent) for (const s of local.seen) seen.add(s);
  if (sameContent(merged, incoming)) for (const s of incoming.seen) seen.add(s);
  // Nothing new: the same object, so digests, wire form and messages cached for it still serve.
  if (
    localContent &&
    tombstones === local.tombstones &&
    reachability === reachabilityOf(local) &&
    seen.size === local.seen.size
  )
    return local;
  return { ...merged, seen };
}

/** Replaces the reachability table (this node's own row changed): only self has seen the result. */
export function updateReachability(state: GossipState, reachability: ReachabilityTable, selfKey: string): GossipState {
  if (reachability === reachabilityOf(state)) return state;
  return { ...state, seen: new Set([selfKey]), reachability };
}

function mergeTombstones(a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>): ReadonlyMap<string, number> {
  if (b.size === 0) return a;
  if (a.size === 0) return b;
  let merged: Map<string, number> | undefined;
  for (const [key, at] of b) {
    const existing = (merged ?? a).get(key);
    if (existing !== undefined && existing >= at) continue;
    merged ??= new Map(a);
    merged.set(key, at);
  }
  return merged ?? a;
}

/**
 * Replaces the records of `keys` (removed members) by tombstones stamped `nowMs`, and forgets tombstones
 * stamped before `expireBeforeMs`. Only self has seen the result when members were pruned.
 */
export function pruneMembers(
  state: GossipState,
  keys: ReadonlyArray<string>,
  nowMs: number,
  expireBeforeMs: number,
  selfKey: string,
): GossipState {
  const expired = [...state.tombstones].filter(([, at]) => at < expireBeforeMs);
  const pruned = keys.filter((key) => state.members.has(key));
  if (pruned.length === 0 && expired.length === 0) return state;
  const tombstones = new Map(state.tombstones);
  for (const [key] of expired) tombstones.delete(key);
  for (const key of pruned) tombstones.set(key, nowMs);
  if (pruned.length === 0) return { ...state, tombstones };
  const members = new Map(state.members);
  for (const key of pruned) members.delete(key);
  const reachability = retainKnown(reachabilityOf(state), (key) => members.has(key));
  return { members, seen: new Set([selfKey]), tombstones, reachability };
}

/** Replaces records on `selfKey`'s own decision (status changes): the content changed, so only self has seen it. */
export function updateMembers(state: GossipState, records: ReadonlyArray<MemberRecord>, selfKey: string): GossipState {
  const members = new Map(state.members);
  for (const record of records) {
    const key = keyOf(record);
    if (state.tombstones.has(key)) continue;
    const existing = members.get(key);
    members.set(key, existing ? mergeRecord(existing, record) : record);
  }
  if (contentDigest(members) === contentDigest(state.members)) return state;
  return { members, seen: new Set([selfKey]), tombstones: state.tombstones, reachability: reachabilityOf(state) };
}

/** True when both states hold tombstones for the same keys. */
export function sameTombstones(a: GossipState, b: GossipState): boolean {
  if (a.tombstones.size !== b.tombstones.size) return false;
  for (const key of a.tombstones.keys()) if (!b.tombstones.has(key)) return false;
  return true;
}

const wireForms = new WeakMap<GossipState, WireGossip>();

/** The wire form, built once per state: the same state is sent to many peers. */
export function toWire(state: GossipState): WireGossip {
  let wire = wireForms.get(state);
  if (wire === undefined) wireForms.set(state, (wire = buildWire(state)));
  return wire;
}

function buildWire(state: GossipState): WireGossip {
  const records = [...state.members.values()];
  const indexOf = new Map(records.map((r, i) => [keyOf(r), i]));
  const reachability = tableToWire(reachabilityOf(state), indexOf);
  return {
    members: records.map((r) => ({ address: r.address.toString(), ...memberContent(r) })),
    seen: [...state.seen],
    tombstones: [...state.tombstones],
    ...(reachability.length === 0 ? {} : { reachability }),
  };
}

/** From validated wire form (messages.ts checked every address); a duplicate key keeps the merge of both. */
export function fromWire(wire: WireGossip): GossipState {
  const members = new Map<string, MemberRecord>();
  // Reachability rows name members by their index in `wire.members`.
  const keys: Array<string | undefined> = [];
  for (const w of wire.members) {
    const record = recordFromWire(w);
    keys.push(record ? keyOf(record) : undefined);
    if (!record) continue;
    const key = keyOf(record);
    const existing = members.get(key);
    members.set(key, existing ? mergeRecord(existing, record) : record);
  }
  const tombstones = new Map<string, number>();
  for (const [key, at] of wire.tombstones ?? []) tombstones.set(key, Math.max(at, tombstones.get(key) ?? 0));
  for (const key of tombstones.keys()) members.delete(key);
  const reachability = retainKnown(tableFromWire(wire.reachability ?? [], keys), (key) => members.has(key));
  return { members, seen: new Set(wire.seen), tombstones, reachability };
}

function recordFromWire(w: WireMember): MemberRecord | undefined {
  const address = NodeAddress.tryParse(w.address);
  if (!address) return undefined;
  return { address, ...memberContent(w) };
}

/** What a member record and its wire form share, copied (roles as a new array, absent optional fields left out). */
function memberContent(m: Omit<WireMember, 'address'>): Omit<WireMember, 'address'> {
  return {
    incarnation: m.incarnation,
    status: m.status,
    appVersion: m.appVersion,
    roles: [...m.roles],
    ...(m.attributes === undefined ? {} : { attributes: m.attributes }),
    upNumber: m.upNumber,
    ...(m.downedAtMs === undefined ? {} : { downedAtMs: m.downedAtMs }),
  };
}
