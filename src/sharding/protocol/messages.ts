// Sharding messages (region registration, shard homes, hand-off, operator requests; entity traffic from
// entity-messages.ts): the sharding family of the wire protocol, with the table that routes each message type on
// arrival. Every field is validated here or in the family file named, because this is the only place untrusted
// frames become typed values; a message that fails any check is dropped by the transport.
import type { MessageFamily, RawMessage } from '../../cluster/transport/wire-message.js';
import { parseInsightMessage, type InsightMessage } from './insight-messages.js';
import { MAX_SHARD_ID, isAddress, isRequestId, isShardId } from './wire-values.js';
import { parseDrainMessage, type DrainMessage } from './drain-messages.js';
import { MAX_ENTITY_ID_LENGTH, parseEntityReply, parseEnvelope, type EntityMessage } from './entity-messages.js';
import type { RequestMessage } from './request-message.js';
import { parseRetained, parseStateMessage, type RetainedShard, type StateMessage } from './state-messages.js';

export type { DrainMove } from './drain-messages.js';
export type { RetainedShard } from './state-messages.js';
export { MAX_ENTITY_ID_LENGTH, MAX_ERROR_LENGTH, type ReliableMark, type ReplyTo } from './entity-messages.js';

/** Largest shard id accepted on the wire (`numberOfShards` is capped below this by `init`). */
export { MAX_SHARD_ID };
/** Most shard ids in one message (registration, locations, rebalance requests). */
export const MAX_SHARDS_PER_MESSAGE = MAX_SHARD_ID + 1;
/** Most regions in one `ShardLocations` answer. */
export const MAX_REGIONS_PER_MESSAGE = 10_000;
/** Entity type names: also path segments of the management API, so kept to a safe alphabet. */
export const TYPE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** One region's entry in a `ShardLocations` answer. */
export interface RegionLocation {
  readonly address: string;
  readonly shards: ReadonlyArray<number>;
}

/**
 * The sharding protocol. Direction is given as region -> coordinator (R->C), coordinator -> region (C->R),
 * region -> region (R->R), or requester <-> coordinator. Node addresses travel as `system@host:port` strings.
 */
export type ShardingMessage =
  /**
   * R->C. Announces a region (or a proxy, which hosts nothing), the shards it hosts and the shards it is still
   * stopping (entities draining after a HandOff), so a new coordinator rebuilds its map and allocates none of
   * them elsewhere before they are gone. The two lists are disjoint. `retained`: shards stopped here whose
   * hand-off state this region keeps, unreleased (a new coordinator asks for a state whose shard has no
   * home). Repeated until acknowledged.
   */
  | {
      readonly type: 'RegisterRegion';
      readonly typeName: string;
      readonly proxy: boolean;
      readonly shards: ReadonlyArray<number>;
      readonly stopping: ReadonlyArray<number>;
      readonly retained: ReadonlyArray<RetainedShard>;
    }
  /** C->R. The registration was recorded. */
  | { readonly type: 'RegisterAck'; readonly typeName: string }
  /** C->R. The coordinator does not know this region (it is new, or restarted): register again, with your shards. */
  | { readonly type: 'RegisterRequired'; readonly typeName: string }
  /** R->C. Where does this shard live? Allocates it when it has no home. */
  | { readonly type: 'GetShardHome'; readonly typeName: string; readonly shardId: number }
  /** C->R. The shard's home region. Also broadcast to every region after a shard moved. */
  | { readonly type: 'ShardHome'; readonly typeName: string; readonly shardId: number; readonly region: string }
  /** C->R. Start hosting this shard (sent to the region it was just allocated to). Repeated until ShardStarted. */
  | { readonly type: 'HostShard'; readonly typeName: string; readonly shardId: number }
  /** R->C. Answer to HostShard. */
  | { readonly type: 'ShardStarted'; readonly typeName: string; readonly shardId: number }
  /** C->R, to every region. Forget this shard's home and buffer its messages from now on. */
  | { readonly type: 'BeginHandOff'; readonly typeName: string; readonly shardId: number }
  /** R->C. Answer to BeginHandOff. */
  | { readonly type: 'BeginHandOffAck'; readonly typeName: string; readonly shardId: number }
  /**
   * C->R, to the owner. Stop the shard's entities (after their queued messages), then report ShardStopped with
   * the same `handOffId`. Repeated until answered.
   */
  | { readonly type: 'HandOff'; readonly typeName: string; readonly shardId: number; readonly handOffId: number }
  /**
   * R->C. The shard's entities are stopped; it may be allocated again. `handOffId` names the HandOff answered,
   * so a late or duplicated report of an earlier stop cannot end a later hand-off of the same shard.
   */
  | { readonly type: 'ShardStopped'; readonly typeName: string; readonly shardId: number; readonly handOffId: number }
  /**
   * C->R. The ShardStopped (and the state sent ahead of it) was processed. A leaving region waits for it,
   * so its exit cannot overtake its state; a repeated ShardStopped is acknowledged again.
   */
  | {
      readonly type: 'ShardStoppedAck';
      readonly typeName: string;
      readonly shardId: number;
      readonly handOffId: number;
    }
  /** R->C. This region is leaving: allocate nothing more to it and hand its shards off. Repeated until it hosts none. */
  | { readonly type: 'GracefulShutdownRequest'; readonly typeName: string }
  /** C->R. The region is excluded from allocation; its shards are being handed off. */
  | { readonly type: 'GracefulShutdownAck'; readonly typeName: string }
  /** One entity's traffic: envelopes R->R, replies to the asker (entity-messages.ts). */
  | EntityMessage
  /** Requester -> C. Where does every allocated shard live? */
  | RequestMessage<'GetShardLocations'>
  /** C -> requester. `handingOff`: shards being handed off right now (still listed under their old region). */
  | RequestMessage<'ShardLocations', { regions: ReadonlyArray<RegionLocation>; handingOff: ReadonlyArray<number> }>
  /** Requester -> C. Hand these shards off now and re-allocate them through the strategy. */
  | RequestMessage<'RebalanceNow', { shardIds: ReadonlyArray<number> }>
  /** C -> requester. `accepted` are moving; `unknown` are out of range; `homeless` have no home to move from. */
  | RequestMessage<
      'RebalanceNowResult',
      { accepted: ReadonlyArray<number>; unknown: ReadonlyArray<number>; homeless: ReadonlyArray<number> }
    >
  /** Requester -> C. Run a rebalance round now instead of at the next tick. */
  | RequestMessage<'RequestRebalance'>
  /** C -> requester. The round ran (its hand-offs may still be in progress). */
  | RequestMessage<'RebalanceRequested'>
  /** Cordon drains: a region's shards handed off at once, and the moves started (drain-messages.ts). */
  | DrainMessage
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

/**
 * The sharding family as the transport takes it (`MessageFamily<ShardingMessage>`): every type of the
 * table, through the one parse gate below.
 */
export const SHARDING_MESSAGES: MessageFamily<ShardingMessage> = {
  name: 'sharding',
  types: SHARDING_MESSAGE_TYPES,
  parse: (raw) => parseShardingMessage(raw),
};

/** Messages that concern one entity type carry its name; all but the answers, which are routed by askId. */
export type TypedShardingMessage = Exclude<ShardingMessage, { readonly type: 'EntityReply' | 'EntityReplies' }>;

function isTypeName(value: unknown): value is string {
  return typeof value === 'string' && TYPE_NAME_PATTERN.test(value);
}

function shardList(value: unknown, validItem: (item: unknown) => item is number): number[] | undefined {
  if (!Array.isArray(value) || value.length > MAX_SHARDS_PER_MESSAGE) return undefined;
  for (const item of value) if (!validItem(item)) return undefined;
  return [...(value as number[])];
}

/** Any integer shard number (RebalanceNow may name out-of-range shards; the coordinator reports them as unknown). */
function isAnyShardNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value);
}

function parseRegions(value: unknown): RegionLocation[] | undefined {
  if (!Array.isArray(value) || value.length > MAX_REGIONS_PER_MESSAGE) return undefined;
  const regions: RegionLocation[] = [];
  for (const item of value) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return undefined;
    const { address, shards } = item as Record<string, unknown>;
    const list = shardList(shards, isShardId);
    if (!isAddress(address) || list === undefined) return undefined;
    regions.push({ address, shards: list });
  }
  return regions;
}

/** Validates one decoded message whose `type` is in SHARDING_MESSAGE_TYPES; undefined when any field is wrong. */
export function parseShardingMessage(raw: RawMessage): ShardingMessage | undefined {
  if (raw.type === 'EntityReply' || raw.type === 'EntityReplies') return parseEntityReply(raw);
  const typeName = raw['typeName'];
  if (!isTypeName(typeName)) return undefined;
  switch (raw.type) {
    case 'EntityEnvelope':
      return parseEnvelope(raw, typeName);
    case 'ExplainShard':
    case 'ShardExplained':
    case 'DryRunPlacements':
    case 'DryRunRebalance':
    case 'DryRunAnswer':
      return parseInsightMessage(raw, typeName);
    case 'DrainRegion':
    case 'DrainStarted':
      return parseDrainMessage(raw, typeName, { isRequestId, isShardId, isAddress, maxShards: MAX_SHARDS_PER_MESSAGE });
    case 'ShardStateChunk':
    case 'RestoreShardState':
      return parseStateMessage(raw, typeName, { isRequestId, isShardId, maxEntityIdLength: MAX_ENTITY_ID_LENGTH });
    default:
      // Each returns undefined for a type that is not its own: a type is in at most one of the two.
      return parseShardLifeMessage(raw, typeName) ?? parseRequestMessage(raw, typeName);
  }
}

/** The messages of a shard's life between regions and their coordinator: registration, homes, the hand-off. */
function parseShardLifeMessage(raw: RawMessage, typeName: string): ShardingMessage | undefined {
  switch (raw.type) {
    case 'RegisterRegion':
      return parseRegisterRegion(raw, typeName);
    case 'RegisterAck':
    case 'RegisterRequired':
    case 'GracefulShutdownRequest':
    case 'GracefulShutdownAck':
      return { type: raw.type, typeName };
    case 'GetShardHome':
    case 'HostShard':
    case 'ShardStarted':
    case 'BeginHandOff':
    case 'BeginHandOffAck': {
      const shardId = raw['shardId'];
      return isShardId(shardId) ? { type: raw.type, typeName, shardId } : undefined;
    }
    case 'HandOff':
    case 'ShardStopped':
    case 'ShardStoppedAck':
    case 'ShardStateHeld':
    case 'ShardStateReleased': {
      const { shardId, handOffId } = raw;
      return isShardId(shardId) && isRequestId(handOffId)
        ? { type: raw.type, typeName, shardId, handOffId }
        : undefined;
    }
    case 'ShardHome': {
      const { shardId, region } = raw;
      return isShardId(shardId) && isAddress(region) ? { type: raw.type, typeName, shardId, region } : undefined;
    }
    default:
      return undefined;
  }
}

function parseRegisterRegion(raw: RawMessage, typeName: string): ShardingMessage | undefined {
  const shards = shardList(raw['shards'], isShardId);
  const stopping = shardList(raw['stopping'], isShardId);
  const retained = parseRetained(raw['retained'], { isRequestId, isShardId }, MAX_SHARDS_PER_MESSAGE);
  const proxy = raw['proxy'];
  if (shards === undefined || stopping === undefined || retained === undefined || typeof proxy !== 'boolean')
    return undefined;
  // A shard is either hosted or stopping; a message claiming both cannot come from a correct region.
  const hosted = new Set(shards);
  if (stopping.some((shardId) => hosted.has(shardId))) return undefined;
  return { type: 'RegisterRegion', typeName, proxy, shards, stopping, retained };
}

/** Operators' requests to a coordinator and their answers, matched by requestId. */
function parseRequestMessage(raw: RawMessage, typeName: string): ShardingMessage | undefined {
  const requestId = raw['requestId'];
  if (!isRequestId(requestId)) return undefined;
  switch (raw.type) {
    case 'GetShardLocations':
    case 'RequestRebalance':
    case 'RebalanceRequested':
      return { type: raw.type, typeName, requestId };
    case 'ShardLocations': {
      const regions = parseRegions(raw['regions']);
      const handingOff = shardList(raw['handingOff'], isShardId);
      return regions && handingOff ? { type: raw.type, typeName, requestId, regions, handingOff } : undefined;
    }
    case 'RebalanceNow': {
      const shardIds = shardList(raw['shardIds'], isAnyShardNumber);
      return shardIds ? { type: raw.type, typeName, requestId, shardIds } : undefined;
    }
    case 'RebalanceNowResult': {
      const accepted = shardList(raw['accepted'], isShardId);
      const unknown = shardList(raw['unknown'], isAnyShardNumber);
      const homeless = shardList(raw['homeless'], isShardId);
      if (!accepted || !unknown || !homeless) return undefined;
      return { type: raw.type, typeName, requestId, accepted, unknown, homeless };
    }
    default:
      return undefined;
  }
}
