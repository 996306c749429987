// Cluster membership messages: one family of the protocol union, declared once (wire-schema.ts: the types and
// the parse gate come from the table below). Addresses travel as strings and every field is checked, so the
// membership code only ever sees well-formed gossip.
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
import Type from 'typebox';
import type { MessageFamily, RawMessage } from '../transport/wire-message.js';
import { declareFamily, ignoredIfInvalid, readAs, type MessagesOf } from '../transport/wire-schema.js';
import { Bytes, type Shape } from '../../shapes.js';
import { NodeAddress } from '../address.js';
import { MEMBER_STATUSES } from '../member.js';
import { attributesProblem, normalizeAttributes, type NodeAttributes } from '../attributes.js';
import type { WireReachabilityRow } from './reachability-table.js';

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
/** Largest clock reading or offset believed from the wire, in ms: past it a field is corrupt, not a clock. */
const MAX_CLOCK_FIELD_MS = 8.64e15;

const Text = Type.String({ minLength: 1, maxLength: MAX_TEXT });
const MemberKey = Type.String({ minLength: 1, maxLength: MAX_KEY });
const Count = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
const Roles = Type.Array(Text, { maxItems: MAX_ROLES });
const Address = Type.Refine(Type.String({ maxLength: 512 }), (value) => NodeAddress.tryParse(value) !== undefined);
/** A node's attributes (counted before any per-entry work by attributesProblem), read in their normal form. */
const Attributes = readAs(
  Type.Refine(Type.Unsafe<NodeAttributes>({}), (value) => attributesProblem(value) === undefined),
  normalizeAttributes,
);
/**
 * A clock field of a heartbeat or its ack: kept when a finite number within MAX_CLOCK_FIELD_MS, else left out (the
 * sample it would have made is simply not taken), never a reason to drop the heartbeat itself.
 */
const ClockMs = ignoredIfInvalid(Type.Number({ minimum: -MAX_CLOCK_FIELD_MS, maximum: MAX_CLOCK_FIELD_MS }));

/** One member as gossip carries it; (address, incarnation) identifies one run of a node. */
const WireMemberField = Type.Object({
  address: Address,
  incarnation: Text,
  status: Type.Enum(MEMBER_STATUSES),
  appVersion: Text,
  roles: Roles,
  /** Absent from nodes that predate attributes (and when the node has none). */
  attributes: Type.Optional(Attributes),
  /** 0 until the leader moves the member to Up. */
  upNumber: Count,
  /** Wall-clock ms when the member was decided down; absent when it never was (and from older nodes). */
  downedAtMs: Type.Optional(Count),
});
/** One member as gossip carries it; (address, incarnation) identifies one run of a node. */
export type WireMember = Shape<typeof WireMemberField>;

const WireGossipField = Type.Object({
  members: Type.Array(WireMemberField, { maxItems: MAX_MEMBERS }),
  /** Member keys (`address#incarnation`) that have seen exactly this member content. */
  seen: Type.Array(MemberKey, { maxItems: MAX_MEMBERS }),
  /** Pruned members: [member key, ms when pruned]. Absent from nodes that predate pruning. */
  tombstones: Type.Optional(Type.Array(Type.Tuple([MemberKey, Count]), { maxItems: MAX_MEMBERS })),
  /**
   * Reachability rows [observer, version, subjects], members named by their index in `members`; absent when
   * every member observes every other as reachable. Checked by the message's rule (indices against `members`).
   */
  reachability: Type.Optional(Type.Unknown()),
});
/** The membership state as gossip carries it (whole, or the part a change touched). */
export type WireGossip = Omit<Shape<typeof WireGossipField>, 'reachability'> & {
  readonly reachability?: ReadonlyArray<WireReachabilityRow>;
};

const CLUSTER_SCHEMAS = {
  /** Monitor -> monitored member, which answers HeartbeatAck (the failure detector's input). */
  Heartbeat: Type.Object({
    sequence: Count,
    incarnation: Text,
    /** The sender's wall clock when it sent this (ms since the epoch); absent from nodes before 0.3.0. */
    sentAtMs: ClockMs,
  }),
  HeartbeatAck: Type.Object({
    sequence: Count,
    incarnation: Text,
    /** The heartbeat's `sentAtMs`, echoed: with `atMs` and the arrival time, one clock-offset sample. */
    echoMs: ClockMs,
    /** The answering node's wall clock when it answered. */
    atMs: ClockMs,
    /** The answering node's own offset against its peers, when it knows one: an extreme one is no reference. */
    offsetMs: ClockMs,
  }),
  /** Joining node -> seed nodes, repeated until answered. */
  Join: Type.Object({ incarnation: Text, appVersion: Text, roles: Roles, attributes: Type.Optional(Attributes) }),
  /**
   * The whole membership state: the answer to Join, a periodic push to a peer that has not seen this state, and
   * the reply to a peer whose state differs.
   */
  Gossip: Type.Object({ gossip: WireGossipField }),
  /**
   * A hash of the state (gossip-digest.ts statusHash) and who has seen it (bit i for the i-th of its member keys
   * in sorted order): a full state only where they differ.
   */
  GossipStatus: Type.Object({
    hash: Type.String({ minLength: 1, maxLength: MAX_HASH }),
    seen: Bytes(Math.ceil(MAX_MEMBERS / 8)),
  }),
  /** The records and reachability rows a change touched, pushed at once to a few peers in a large cluster. */
  GossipNews: Type.Object({ gossip: WireGossipField }),
  /** A receiver held back changes it could not attribute (gossip-guard.ts): their author's word, please. */
  GossipAsk: Type.Object({ keys: Type.Array(MemberKey, { minItems: 1, maxItems: MAX_ASK_KEYS }) }),
};

type Declared = MessagesOf<typeof CLUSTER_SCHEMAS>;
type GossipCarrier = Extract<Declared, { readonly type: 'Gossip' | 'GossipNews' }>;

/** The membership messages. */
export type ClusterMessage =
  | Exclude<Declared, GossipCarrier>
  | { readonly type: 'Gossip'; readonly gossip: WireGossip }
  | { readonly type: 'GossipNews'; readonly gossip: WireGossip };

/** A gossip's reachability rows checked against its members: the one rule a schema cannot state. */
function withReachability<M extends GossipCarrier>(message: M): M | undefined {
  const { gossip } = message;
  if (gossip.reachability === undefined) return message;
  const reachability = parseReachability(gossip.reachability, gossip.members.length);
  return reachability === undefined ? undefined : { ...message, gossip: { ...gossip, reachability } };
}

const FAMILY = declareFamily('cluster', CLUSTER_SCHEMAS, { Gossip: withReachability, GossipNews: withReachability });

export const CLUSTER_MESSAGE_TYPES: ReadonlySet<string> = FAMILY.types;

/** The membership family; the Cluster registers it on its transport. */
export const CLUSTER_MESSAGES: MessageFamily<ClusterMessage> = FAMILY as MessageFamily<ClusterMessage>;

export function parseClusterMessage(raw: RawMessage): ClusterMessage | undefined {
  return CLUSTER_MESSAGES.parse(raw);
}

/**
 * Rows whose every index names one of the `memberCount` members; undefined when any does not (drop the message).
 * Counts are checked before the entries are walked.
 */
function parseReachability(value: unknown, memberCount: number): WireReachabilityRow[] | undefined {
  if (!Array.isArray(value) || value.length > memberCount) return undefined;
  const isIndex = (i: unknown): i is number => isCount(i) && i < memberCount;
  let entries = 0;
  const rows: WireReachabilityRow[] = [];
  for (const row of value as unknown[]) {
    if (!Array.isArray(row) || row.length !== 3) return undefined;
    const [observer, version, subjects] = row as [unknown, unknown, unknown];
    if (!isIndex(observer) || !isCount(version) || !Array.isArray(subjects) || subjects.length > memberCount)
      return undefined;
    entries += subjects.length;
    if (entries > MAX_REACHABILITY_ENTRIES || !subjects.every(isIndex)) return undefined;
    rows.push([observer, version, subjects as number[]]);
  }
  return rows;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
