// Cluster membership messages: one family of the protocol union. Addresses travel as strings and every
// field is validated here, so the membership code only ever sees well-formed gossip.
//   Join          joining node -> seed nodes, repeated until answered
//   Gossip        the whole membership state (answer to Join, periodic push to a peer that has not seen
//                 this state, and the reply to a peer whose state differs)
//   GossipStatus  a hash of the state and who has seen it (periodic push to a peer that has seen it, and
//                 the reply to gossip that only lacked seen marks): a full state only where they differ
//   GossipNews    the records and reachability rows a change touched, pushed at once to a few peers in a
//                 large cluster (a delta of the state, merged like gossip)
//   GossipAsk     a receiver held back changes it could not attribute to their sender (gossip-guard.ts):
//                 it asks their author for its word on those member keys, answered with a GossipNews
//   Heartbeat     monitor -> monitored member; HeartbeatAck comes back and feeds the failure detector
import type { MessageFamily, RawMessage } from '../transport/wire-message.js';
import { NodeAddress } from '../address.js';
import { MEMBER_STATUSES, type MemberStatus } from '../member.js';
import { attributesProblem, normalizeAttributes, type NodeAttributes } from '../attributes.js';
import type { WireReachabilityRow } from './reachability-table.js';

/** One member as gossip carries it; (address, incarnation) identifies one run of a node. */
export interface WireMember {
  readonly address: string;
  readonly incarnation: string;
  readonly status: MemberStatus;
  readonly appVersion: string;
  readonly roles: ReadonlyArray<string>;
  /** Absent from nodes that predate attributes (and when the node has none). */
  readonly attributes?: NodeAttributes;
  /** 0 until the leader moves the member to Up. */
  readonly upNumber: number;
  /** Wall-clock ms when the member was decided down; absent when it never was (and from older nodes). */
  readonly downedAtMs?: number;
}

export interface WireGossip {
  readonly members: ReadonlyArray<WireMember>;
  /** Member keys (`address#incarnation`) that have seen exactly this member content. */
  readonly seen: ReadonlyArray<string>;
  /** Pruned members: [member key, ms when pruned]. Absent from nodes that predate pruning. */
  readonly tombstones?: ReadonlyArray<readonly [string, number]>;
  /**
   * Reachability rows [observer, version, subjects], members named by their index in `members`; absent when
   * every member observes every other as reachable.
   */
  readonly reachability?: ReadonlyArray<WireReachabilityRow>;
}

export type ClusterMessage =
  | {
      readonly type: 'Heartbeat';
      readonly sequence: number;
      readonly incarnation: string;
      /** The sender's wall clock when it sent this (ms since the epoch); absent from nodes before 0.3.0. */
      readonly sentAtMs?: number;
    }
  | {
      readonly type: 'HeartbeatAck';
      readonly sequence: number;
      readonly incarnation: string;
      /** The heartbeat's `sentAtMs`, echoed: with `atMs` and the arrival time, one clock-offset sample. */
      readonly echoMs?: number;
      /** The answering node's wall clock when it answered. */
      readonly atMs?: number;
      /** The answering node's own offset against its peers, when it knows one: an extreme one is no reference. */
      readonly offsetMs?: number;
    }
  | {
      readonly type: 'Join';
      readonly incarnation: string;
      readonly appVersion: string;
      readonly roles: ReadonlyArray<string>;
      readonly attributes?: NodeAttributes;
    }
  | { readonly type: 'Gossip'; readonly gossip: WireGossip }
  | {
      readonly type: 'GossipStatus';
      /** gossip-digest.ts statusHash of the sender's state. */
      readonly hash: string;
      /** Who has seen that state: bit i for the i-th of its member keys in sorted order. */
      readonly seen: Uint8Array;
    }
  | { readonly type: 'GossipNews'; readonly gossip: WireGossip }
  | { readonly type: 'GossipAsk'; readonly keys: ReadonlyArray<string> };

export const CLUSTER_MESSAGE_TYPES: ReadonlySet<string> = new Set([
  'Heartbeat',
  'HeartbeatAck',
  'Join',
  'Gossip',
  'GossipStatus',
  'GossipNews',
  'GossipAsk',
]);

/** The membership family; the Cluster registers it on its transport. */
export const CLUSTER_MESSAGES: MessageFamily<ClusterMessage> = {
  name: 'cluster',
  types: CLUSTER_MESSAGE_TYPES,
  parse: (raw) => parseClusterMessage(raw),
};

const KNOWN_STATUSES: ReadonlySet<string> = new Set<MemberStatus>(MEMBER_STATUSES);

const MAX_TEXT = 128;
/** A member key: an address (bounded by NodeAddress) + '#' + an incarnation. */
const MAX_KEY = 512;
const MAX_ROLES = 32;
const MAX_MEMBERS = 10_000;
/** A status hash: 32 base64 characters today; a little room, no more. */
const MAX_HASH = 64;
/** Member keys one GossipAsk may name: the author's answer is bounded by it. */
export const MAX_ASK_KEYS = 256;
/** Subjects summed over all reachability rows: with the heartbeat ring a row names about ten, this is ample. */
const MAX_REACHABILITY_ENTRIES = 100_000;

export function parseClusterMessage(raw: RawMessage): ClusterMessage | undefined {
  switch (raw.type) {
    case 'Heartbeat': {
      const { sequence, incarnation } = raw;
      if (!isCount(sequence) || !isText(incarnation)) return undefined;
      return { type: raw.type, sequence, incarnation, ...clockFields(raw, ['sentAtMs']) };
    }
    case 'HeartbeatAck': {
      const { sequence, incarnation } = raw;
      if (!isCount(sequence) || !isText(incarnation)) return undefined;
      return { type: raw.type, sequence, incarnation, ...clockFields(raw, ['echoMs', 'atMs', 'offsetMs']) };
    }
    case 'Join': {
      const { incarnation, appVersion } = raw;
      const roles = parseRoles(raw['roles']);
      const attributes = parseAttributes(raw['attributes']);
      if (!isText(incarnation) || !isText(appVersion) || !roles || attributes === null) return undefined;
      return attributes === undefined
        ? { type: 'Join', incarnation, appVersion, roles }
        : { type: 'Join', incarnation, appVersion, roles, attributes };
    }
    case 'Gossip':
    case 'GossipNews': {
      const gossip = parseGossip(raw['gossip']);
      return gossip ? { type: raw.type, gossip } : undefined;
    }
    case 'GossipStatus': {
      const { hash, seen } = raw;
      if (!isText(hash, MAX_HASH) || !(seen instanceof Uint8Array) || seen.byteLength > Math.ceil(MAX_MEMBERS / 8))
        return undefined;
      return { type: 'GossipStatus', hash, seen };
    }
    case 'GossipAsk': {
      const { keys } = raw;
      if (
        !Array.isArray(keys) ||
        keys.length === 0 ||
        keys.length > MAX_ASK_KEYS ||
        !keys.every((k) => isText(k, MAX_KEY))
      )
        return undefined;
      return { type: 'GossipAsk', keys: keys as string[] };
    }
    default:
      return undefined;
  }
}

function parseGossip(value: unknown): WireGossip | undefined {
  if (!isRecord(value)) return undefined;
  const { members, seen } = value;
  if (!Array.isArray(members) || members.length > MAX_MEMBERS) return undefined;
  if (!Array.isArray(seen) || seen.length > MAX_MEMBERS || !seen.every((s) => isText(s, MAX_KEY))) {
    return undefined;
  }
  const parsed: WireMember[] = [];
  for (const member of members) {
    const m = parseMember(member);
    if (!m) return undefined;
    parsed.push(m);
  }
  const gossip: WireGossip = { members: parsed, seen: seen as string[] };
  const tombstones = value['tombstones'];
  if (tombstones !== undefined) {
    if (!Array.isArray(tombstones) || tombstones.length > MAX_MEMBERS) return undefined;
    const isTombstone = (t: unknown): t is [string, number] =>
      Array.isArray(t) && t.length === 2 && isText(t[0], MAX_KEY) && isCount(t[1]);
    if (!tombstones.every(isTombstone)) return undefined;
  }
  const reachability = parseReachability(value['reachability'], parsed.length);
  if (reachability === null) return undefined;
  return {
    ...gossip,
    ...(tombstones === undefined ? {} : { tombstones: tombstones as Array<[string, number]> }),
    ...(reachability === undefined ? {} : { reachability }),
  };
}

/**
 * Optional: undefined when absent, null when invalid (drop the message). Every index must name one of the
 * `memberCount` members; counts are checked before the entries are walked.
 */
function parseReachability(value: unknown, memberCount: number): WireReachabilityRow[] | undefined | null {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length > memberCount) return null;
  const isIndex = (i: unknown): i is number => isCount(i) && i < memberCount;
  let entries = 0;
  const rows: WireReachabilityRow[] = [];
  for (const row of value as unknown[]) {
    if (!Array.isArray(row) || row.length !== 3) return null;
    const [observer, version, subjects] = row as [unknown, unknown, unknown];
    if (!isIndex(observer) || !isCount(version) || !Array.isArray(subjects) || subjects.length > memberCount)
      return null;
    entries += subjects.length;
    if (entries > MAX_REACHABILITY_ENTRIES || !subjects.every(isIndex)) return null;
    rows.push([observer, version, subjects as number[]]);
  }
  return rows;
}

function parseMember(value: unknown): WireMember | undefined {
  if (!isRecord(value)) return undefined;
  const { address, incarnation, status, appVersion, upNumber } = value;
  const roles = parseRoles(value['roles']);
  if (typeof address !== 'string' || NodeAddress.tryParse(address) === undefined) return undefined;
  if (!isText(incarnation) || !isText(appVersion) || !roles || !isCount(upNumber)) return undefined;
  if (typeof status !== 'string' || !KNOWN_STATUSES.has(status)) return undefined;
  const attributes = parseAttributes(value['attributes']);
  if (attributes === null) return undefined;
  const downedAtMs = value['downedAtMs'];
  const base = {
    address,
    incarnation,
    status: status as MemberStatus,
    appVersion,
    roles,
    upNumber,
    ...(attributes === undefined ? {} : { attributes }),
  };
  if (downedAtMs === undefined) return base;
  return isCount(downedAtMs) ? { ...base, downedAtMs } : undefined;
}

function parseRoles(value: unknown): string[] | undefined {
  if (!Array.isArray(value) || value.length > MAX_ROLES) return undefined;
  return value.every((r) => isText(r)) ? (value as string[]) : undefined;
}

/** Optional (older peers send none): undefined when absent, null when present but invalid (drop the message). */
function parseAttributes(value: unknown): NodeAttributes | undefined | null {
  if (value === undefined) return undefined;
  // The count is checked by attributesProblem before any per-entry work.
  return attributesProblem(value) === undefined ? normalizeAttributes(value as NodeAttributes) : null;
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isText(value: unknown, max = MAX_TEXT): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= max;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** Largest clock reading or offset believed from the wire, in ms: past it a field is corrupt, not a clock. */
const MAX_CLOCK_FIELD_MS = 8.64e15;

/**
 * The clock fields of a heartbeat or its ack that are finite numbers within MAX_CLOCK_FIELD_MS; any other is left
 * out (the sample it would have made is simply not taken), never a reason to drop the heartbeat itself.
 */
function clockFields<K extends string>(raw: RawMessage, keys: readonly K[]): Partial<Record<K, number>> {
  const fields: Partial<Record<K, number>> = {};
  for (const key of keys) {
    const value = raw[key];
    if (typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= MAX_CLOCK_FIELD_MS)
      fields[key] = value;
  }
  return fields;
}
