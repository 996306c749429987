// Sharding messages (region registration, shard homes, hand-off, operator requests; entity traffic from
// entity-messages.ts): the sharding family of the wire protocol, with the table that routes each message type on
// arrival. Every field is validated here or in the family file named, because this is the only place untrusted
// frames become typed values; a message that fails any check is dropped by the transport.
import Type from 'typebox';
import type { MessageFamily, RawMessage } from '../../cluster/transport/wire-message.js';
import { declareFamily, type MessagesOf } from '../../cluster/transport/wire-schema.js';
import type { Shape } from '../../shapes.js';
import { DRAIN_SCHEMAS } from './drain-messages.js';
import { ENTITY_RULES, ENTITY_SCHEMAS, MAX_ENTITY_ID_LENGTH, type EntityMessage } from './entity-messages.js';
import { INSIGHT_RULES, INSIGHT_SCHEMAS, type InsightMessage } from './insight-messages.js';
import { RetainedShardField, STATE_RULES, STATE_SCHEMAS, type StateMessage } from './state-messages.js';
import {
  AddressField,
  AnyShardNumberField,
  ListField,
  MAX_SHARD_ID,
  RequestIdField,
  ShardIdField,
  TYPE_NAME_PATTERN,
  TypeNameField,
} from './wire-values.js';

export type { DrainMove } from './drain-messages.js';
export type { RetainedShard } from './state-messages.js';
export { MAX_ERROR_LENGTH, type ReliableMark, type ReplyTo } from './entity-messages.js';
export { MAX_ENTITY_ID_LENGTH };

/** Largest shard id accepted on the wire (`numberOfShards` is capped below this by `init`). */
export { MAX_SHARD_ID, TYPE_NAME_PATTERN };
/** Most shard ids in one message (registration, locations, rebalance requests). */
export const MAX_SHARDS_PER_MESSAGE = MAX_SHARD_ID + 1;
/** Most regions in one `ShardLocations` answer. */
export const MAX_REGIONS_PER_MESSAGE = 10_000;

const ShardList = ListField(ShardIdField, MAX_SHARDS_PER_MESSAGE);
const HEAD = { typeName: TypeNameField };
const SHARD = { typeName: TypeNameField, shardId: ShardIdField };
const HAND_OFF = { typeName: TypeNameField, shardId: ShardIdField, handOffId: RequestIdField };
const REQUEST = { typeName: TypeNameField, requestId: RequestIdField };

/** One region's entry in a `ShardLocations` answer. */
const RegionLocationField = Type.Object({ address: AddressField, shards: ShardList });
/** One region's entry in a `ShardLocations` answer. */
export type RegionLocation = Shape<typeof RegionLocationField>;

/**
 * The sharding protocol's messages of a shard's life and the operators' requests, declared once: each type and its
 * fields beyond `type`, from which the types and the parse gate come. Direction is given as region ->
 * coordinator (R->C), coordinator -> region (C->R), region -> region (R->R), or requester <-> coordinator. Node
 * addresses travel as `system@host:port` strings.
 */
const SHARD_LIFE_SCHEMAS = {
  /**
   * R->C. Announces a region (or a proxy, which hosts nothing), the shards it hosts and the shards it is still
   * stopping (entities draining after a HandOff), so a new coordinator rebuilds its map and allocates none of
   * them elsewhere before they are gone. The two lists are disjoint. `retained`: shards stopped here whose
   * hand-off state this region keeps, unreleased (a new coordinator asks for a state whose shard has no
   * home). Repeated until acknowledged.
   */
  RegisterRegion: Type.Object({
    ...HEAD,
    proxy: Type.Boolean(),
    shards: ShardList,
    stopping: ShardList,
    retained: ListField(RetainedShardField, MAX_SHARDS_PER_MESSAGE),
  }),
  /** C->R. The registration was recorded. */
  RegisterAck: Type.Object(HEAD),
  /** C->R. The coordinator does not know this region (it is new, or restarted): register again, with your shards. */
  RegisterRequired: Type.Object(HEAD),
  /** R->C. Where does this shard live? Allocates it when it has no home. */
  GetShardHome: Type.Object(SHARD),
  /** C->R. The shard's home region. Also broadcast to every region after a shard moved. */
  ShardHome: Type.Object({ ...SHARD, region: AddressField }),
  /**
   * C->R. Start hosting this shard (sent to the region it was just allocated to). Repeated until ShardStarted.
   * `transferId` (protocol 10): the shard's state comes straight from its old host as the transfer of that id;
   * the region starts the shard with it once every part is in (it may overtake them: another connection).
   */
  HostShard: Type.Object({ ...SHARD, transferId: Type.Optional(RequestIdField) }),
  /** R->C. Answer to HostShard. */
  ShardStarted: Type.Object(SHARD),
  /**
   * C->R, to every region. Forget this shard's home and buffer its messages from now on. To the owner, from
   * protocol 12, the coming HandOff's `handOffId` and the shard's likely next home `to`: the owner may send the
   * states it holds for entities never woken there ahead of its stop, as the first parts of that transfer.
   */
  BeginHandOff: Type.Object({
    ...SHARD,
    handOffId: Type.Optional(RequestIdField),
    to: Type.Optional(AddressField),
  }),
  /** R->C. Answer to BeginHandOff. */
  BeginHandOffAck: Type.Object(SHARD),
  /**
   * C->R, to the owner. Stop the shard's entities (after their queued messages), then report ShardStopped with
   * the same `handOffId`. Repeated until answered. `to` (protocol 10): send the shard's state straight to that
   * region, as RestoreShardState chunks of transfer `handOffId`, instead of to the coordinator.
   */
  HandOff: Type.Object({ ...HAND_OFF, to: Type.Optional(AddressField) }),
  /**
   * R->C. The shard's entities are stopped; it may be allocated again. `handOffId` names the HandOff answered,
   * so a late or duplicated report of an earlier stop cannot end a later hand-off of the same shard.
   */
  ShardStopped: Type.Object(HAND_OFF),
  /**
   * C->R. The ShardStopped (and the state sent ahead of it) was processed. A leaving region waits for it,
   * so its exit cannot overtake its state; a repeated ShardStopped is acknowledged again.
   */
  ShardStoppedAck: Type.Object(HAND_OFF),
  /**
   * R->C. The old host still keeps the state it sent for the HandOff `handOffId` of a shard (repeated while
   * unreleased, in case a release was lost): the coordinator releases it, or asks for it again with a HandOff
   * of its own when the shard has no home and no hand-off (the copy it had was lost with a former coordinator).
   */
  ShardStateHeld: Type.Object(HAND_OFF),
  /**
   * C->R, to a shard's old host. The new home started the shard (or it runs somewhere already): the state kept
   * since the stop under `handOffId` is not needed any more.
   */
  ShardStateReleased: Type.Object(HAND_OFF),
  /** R->C. This region is leaving: allocate nothing more to it and hand its shards off. Repeated until it hosts none. */
  GracefulShutdownRequest: Type.Object(HEAD),
  /** C->R. The region is excluded from allocation; its shards are being handed off. */
  GracefulShutdownAck: Type.Object(HEAD),
};

/** Operators' requests to a coordinator and their answers, matched by requestId. */
const REQUEST_SCHEMAS = {
  /** Requester -> C. Where does every allocated shard live? */
  GetShardLocations: Type.Object(REQUEST),
  /** C -> requester. `handingOff`: shards being handed off right now (still listed under their old region). */
  ShardLocations: Type.Object({
    ...REQUEST,
    regions: ListField(RegionLocationField, MAX_REGIONS_PER_MESSAGE),
    handingOff: ShardList,
  }),
  /**
   * Requester -> C. Hand these shards off now and re-allocate them through the strategy. Any integer: the
   * coordinator reports the ids out of its range as unknown.
   */
  RebalanceNow: Type.Object({ ...REQUEST, shardIds: ListField(AnyShardNumberField, MAX_SHARDS_PER_MESSAGE) }),
  /**
   * C -> requester. `accepted` are moving; `unknown` are out of range; `homeless` were never given a home
   * (unallocated: the field keeps its old name on the wire, for peers of earlier releases).
   */
  RebalanceNowResult: Type.Object({
    ...REQUEST,
    accepted: ShardList,
    unknown: ListField(AnyShardNumberField, MAX_SHARDS_PER_MESSAGE),
    homeless: ShardList,
  }),
  /** Requester -> C. Run a rebalance round now instead of at the next tick. */
  RequestRebalance: Type.Object(REQUEST),
  /** C -> requester. The round ran (its hand-offs may still be in progress). */
  RebalanceRequested: Type.Object(REQUEST),
};

/** Every sharding message declared by a schema (the state chunks are checked by state-messages.ts). */
const SHARDING_SCHEMAS = {
  ...SHARD_LIFE_SCHEMAS,
  ...REQUEST_SCHEMAS,
  ...ENTITY_SCHEMAS,
  ...DRAIN_SCHEMAS,
  ...INSIGHT_SCHEMAS,
  ...STATE_SCHEMAS,
};

type Declared<T extends keyof typeof SHARDING_SCHEMAS> = Shape<(typeof SHARDING_SCHEMAS)[T]> & { readonly type: T };

/** The sharding protocol: every message a region, a coordinator, an asker or a requester sends or receives. */
export type ShardingMessage =
  | MessagesOf<typeof SHARD_LIFE_SCHEMAS>
  | MessagesOf<typeof REQUEST_SCHEMAS>
  /** One entity's traffic: envelopes R->R, replies to the asker (entity-messages.ts). */
  | EntityMessage
  /** Cordon drains: a region's shards handed off at once, and the moves started (drain-messages.ts). */
  | MessagesOf<typeof DRAIN_SCHEMAS>
  /** Entity state of a graceful hand-off, R->C then C->R, and the old host's copy of it (state-messages.ts). */
  | StateMessage
  /** Explain and dry runs (insight-messages.ts). */
  | InsightMessage;

export type ShardingMessageType = ShardingMessage['type'];

/**
 * Who handles a sharding message on the node it reaches: the type's region, the type's coordinator (when it
 * runs there), the pending asks (an entity's answer), or the coordinator client (an answer to a request).
 */
export type ShardingRoute = 'region' | 'coordinator' | 'asker' | 'requester';

/**
 * The one declaration of the sharding message set and its routing: the type set, the family and every
 * route set derive from it, and the compiler rejects a message type without a route (or a route for none).
 */
export const SHARDING_ROUTES = {
  RegisterRegion: 'coordinator',
  RegisterAck: 'region',
  RegisterRequired: 'region',
  GetShardHome: 'coordinator',
  ShardHome: 'region',
  HostShard: 'region',
  ShardStarted: 'coordinator',
  BeginHandOff: 'region',
  BeginHandOffAck: 'coordinator',
  HandOff: 'region',
  ShardStopped: 'coordinator',
  ShardStoppedAck: 'region',
  GracefulShutdownRequest: 'coordinator',
  GracefulShutdownAck: 'region',
  EntityEnvelope: 'region',
  EntityReply: 'asker',
  EntityReplies: 'asker',
  GetShardLocations: 'coordinator',
  ShardLocations: 'requester',
  RebalanceNow: 'coordinator',
  RebalanceNowResult: 'requester',
  RequestRebalance: 'coordinator',
  RebalanceRequested: 'requester',
  ExplainShard: 'coordinator',
  ShardExplained: 'requester',
  DryRunPlacements: 'coordinator',
  DryRunRebalance: 'coordinator',
  DryRunAnswer: 'requester',
  DrainRegion: 'coordinator',
  DrainStarted: 'requester',
  ShardStateChunk: 'coordinator',
  RestoreShardState: 'region',
  ShardStateHeld: 'coordinator',
  ShardStateReleased: 'region',
} as const satisfies Record<ShardingMessageType, ShardingRoute>;

/** The message types routed to `R`. */
export type TypesRoutedTo<R extends ShardingRoute> = {
  [T in ShardingMessageType]: (typeof SHARDING_ROUTES)[T] extends R ? T : never;
}[ShardingMessageType];

/** The messages routed to `R`. */
export type MessageRoutedTo<R extends ShardingRoute> = Extract<ShardingMessage, { readonly type: TypesRoutedTo<R> }>;

/** Every sharding message type name, for routing and validation. */
export const SHARDING_MESSAGE_TYPES: ReadonlySet<string> = new Set<string>(Object.keys(SHARDING_ROUTES));

/** The message types routed to `route`. */
export function typesRoutedTo(route: ShardingRoute): ReadonlySet<string> {
  return new Set(Object.entries(SHARDING_ROUTES).flatMap(([type, to]) => (to === route ? [type] : [])));
}

/** Narrows a sharding message to the ones routed to `route`. */
export function isRoutedTo<R extends ShardingRoute>(message: ShardingMessage, route: R): message is MessageRoutedTo<R> {
  return SHARDING_ROUTES[message.type] === route;
}

/** The rules a schema cannot state: RegisterRegion's lists disjoint, and each family's. */
const SHARDING_RULES = {
  ...ENTITY_RULES,
  ...INSIGHT_RULES,
  ...STATE_RULES,
  RegisterRegion: (message: Declared<'RegisterRegion'>) => {
    // A shard is either hosted or stopping; a message claiming both cannot come from a correct region.
    const hosted = new Set(message.shards);
    return message.stopping.some((shardId) => hosted.has(shardId)) ? undefined : message;
  },
};

const DECLARED = declareFamily('sharding', SHARDING_SCHEMAS, SHARDING_RULES);

/**
 * The sharding family as the transport takes it (`MessageFamily<ShardingMessage>`): every type of the table
 * (the routes name the same set: the compiler holds them to the union), through the gate declared from it.
 */
export const SHARDING_MESSAGES: MessageFamily<ShardingMessage> = {
  name: 'sharding',
  types: SHARDING_MESSAGE_TYPES,
  parse: (raw) => DECLARED.parse(raw) as ShardingMessage | undefined,
};

/** Messages that concern one entity type carry its name; all but the answers, which are routed by askId. */
export type TypedShardingMessage = Exclude<ShardingMessage, { readonly type: 'EntityReply' | 'EntityReplies' }>;

/** Validates one decoded message whose `type` is in SHARDING_MESSAGE_TYPES; undefined when any field is wrong. */
export function parseShardingMessage(raw: RawMessage): ShardingMessage | undefined {
  return DECLARED.parse(raw) as ShardingMessage | undefined;
}
