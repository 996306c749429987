// Entity state on the wire during a graceful hand-off: the old host's chunks to the coordinator (before its
// ShardStopped, on the same connection) and the coordinator's to the new host (before HostShard), or from protocol
// 10 the old host's straight to the new host (RestoreShardState, the HandOff naming it). Kept apart
// from messages.ts, which routes them; declared once like every message, each chunk's entities checked here. From protocol 8 a chunk's
// entities travel as one binary (packed-states.ts); a peer on 7 gets and sends the msgpack list (stateOnWire).
// From protocol 9 a transfer's final chunk may say `last` instead of every chunk naming `parts`, so the old host
// sends each chunk as soon as it is packed (transfer-parts.ts assembles either form); a peer on 7 or 8 gets `parts`.
import Type from 'typebox';
import { DEFAULT_MAX_FRAME_BYTES } from '../../cluster/transport/frame-codec.js';
import { ActorTsError } from '../../errors.js';
import { Bytes, type Shape } from '../../shapes.js';
import { MAX_ENTITY_ID_LENGTH } from './entity-messages.js';
import { packEntities, unpackEntities, type WireEntityState } from './packed-states.js';
import { AddressField, RequestIdField, ShardIdField, TypeNameField } from './wire-values.js';

export type { WireEntityState } from './packed-states.js';

/** Most chunks in one transfer, and most entities in one chunk. */
export const MAX_STATE_PARTS = 100_000;
export const MAX_ENTITIES_PER_CHUNK = 100_000;

/** The protocol version from which a chunk's entities travel packed (`packed`) instead of as a list. */
export const PACKED_STATE_SINCE = 8;

/**
 * The protocol version from which a transfer's chunks may go without `parts`, its final one saying `last`: a
 * sender streams its chunks only to a peer on this version or later (a peer on 8 refuses a chunk without `parts`).
 */
export const STREAMED_STATE_SINCE = 9;

// No binary of a chunk can be larger than the frame it came in; a chunk is cut well below it (state-transfer.ts).
const MAX_CHUNK_BYTES = DEFAULT_MAX_FRAME_BYTES;

/**
 * The protocol version from which a hand-off's state may go straight from the old host to the new home
 * (HandOff's `to`, HostShard's `transferId`): the coordinator asks for it only when both agreed this version.
 */
export const DIRECT_STATE_SINCE = 10;

/**
 * The protocol version from which a transfer's chunks carry the old host's sender progress (`progress`): without
 * it the new home kept processed sends the old host had forgotten, and an entity's state whose sends differ
 * between the two was packed again at every hand-off between them. A peer on 10 or older gets chunks without it.
 */
export const SENDER_PROGRESS_SINCE = 11;

/**
 * The protocol version from which BeginHandOff tells the owner the coming HandOff's id and the shard's likely next
 * home, so it sends the states it holds ahead of its stop (region-host.ts, sendEarly): a coordinator names them
 * only to an owner on this version or later.
 */
export const EARLY_STATE_SINCE = 12;

/** Most sender incarnations one transfer's progress names. */
export const MAX_SENDER_PROGRESS = 4_096;

/** One sender incarnation's progress (dedup-table.ts's SenderProgress): it retries none of its sends below `below`. */
const SenderProgressField = Type.Object({ node: AddressField, incarnation: RequestIdField, below: RequestIdField });

/** A shard whose hand-off state its old host still keeps, with the HandOff it was last sent for. */
export const RetainedShardField = Type.Object({ shardId: ShardIdField, handOffId: RequestIdField });
/** A shard whose hand-off state its old host still keeps, with the HandOff it was last sent for. */
export type RetainedShard = Shape<typeof RetainedShardField>;

/** One entity's encoded snapshot, as a peer on protocol 7 lists it. */
const ListedEntity = Type.Object({
  entityId: Type.String({ minLength: 1, maxLength: MAX_ENTITY_ID_LENGTH }),
  state: Bytes(MAX_CHUNK_BYTES),
});

/**
 * A chunk's fields beside its id: part `part` of `parts` (up to protocol 8, and whenever the sender knows the
 * count), or of a transfer whose final part says `last` (protocol 9), and its entities either `packed` (protocol
 * 8: one binary, read by packed-states.ts with a bound check per length) or listed (7). The rule reads them into
 * one `entities` list.
 */
const chunkFields = {
  typeName: TypeNameField,
  shardId: ShardIdField,
  part: Type.Integer({ minimum: 0, maximum: MAX_STATE_PARTS - 1 }),
  parts: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_STATE_PARTS })),
  last: Type.Optional(Type.Literal(true)),
  packed: Type.Optional(Bytes(MAX_CHUNK_BYTES)),
  entities: Type.Optional(Type.Array(ListedEntity, { maxItems: MAX_ENTITIES_PER_CHUNK })),
  progress: Type.Optional(Type.Array(SenderProgressField, { maxItems: MAX_SENDER_PROGRESS })),
};

/** The state chunks: each type and its fields beyond `type`. */
export const STATE_SCHEMAS = {
  /** R->C. Part `part` of a shard's entity states (of `parts`, or up to the `last`), stopped for `handOffId`. */
  ShardStateChunk: Type.Object({ ...chunkFields, handOffId: RequestIdField }),
  /**
   * C->R, or R->R from the old host (protocol 10). The same chunks, for the shard's new home; `transferId` is the
   * hand-off's id.
   */
  RestoreShardState: Type.Object({ ...chunkFields, transferId: RequestIdField }),
};

type Declared<T extends keyof typeof STATE_SCHEMAS> = Shape<(typeof STATE_SCHEMAS)[T]> & { readonly type: T };
/** A chunk as delivered: its entities read (whichever form they came in), its packed bytes kept when it had them. */
type Read<M> = Omit<M, 'entities'> & { readonly entities: ReadonlyArray<WireEntityState> };

/** The state chunks as delivered (the old host's kept copy, ShardStateHeld and ShardStateReleased, are in messages.ts). */
export type StateMessage = Read<Declared<'ShardStateChunk'>> | Read<Declared<'RestoreShardState'>>;

/**
 * The rule a schema cannot state: the part within the parts (and the last of them when it says `last`), and the
 * entities read from their one form.
 */
function readChunk<M extends Declared<'ShardStateChunk'> | Declared<'RestoreShardState'>>(message: M): M | undefined {
  const { part, parts, last } = message;
  if (parts !== undefined && (part >= parts || (last === true && part !== parts - 1))) return undefined;
  if (message.packed === undefined) return message.entities === undefined ? undefined : message;
  const limits = { maxEntities: MAX_ENTITIES_PER_CHUNK, maxEntityIdLength: MAX_ENTITY_ID_LENGTH };
  const entities = unpackEntities(message.packed, limits);
  return entities === undefined ? undefined : { ...message, entities };
}

/** The chunks' rules, for the family's table (messages.ts). */
export const STATE_RULES = { ShardStateChunk: readChunk, RestoreShardState: readChunk };

type StateChunk = Extract<StateMessage, { readonly type: 'ShardStateChunk' | 'RestoreShardState' }>;

/**
 * A message as it goes to a peer on protocol `version`: a state chunk's entities packed from PACKED_STATE_SINCE
 * (the bytes it arrived in when it has them), as a list before; its `last` only from STREAMED_STATE_SINCE, before
 * which it must name `parts` (a sender streams only to a peer that reads `last`: `invalid_argument` otherwise);
 * its `progress` only from SENDER_PROGRESS_SINCE; any other message as it is.
 */
export function stateOnWire(message: { readonly type: string }, version: number): { readonly type: string } {
  if (message.type !== 'ShardStateChunk' && message.type !== 'RestoreShardState') return message;
  const { entities, packed, last, progress, ...rest } = message as StateChunk;
  if (version < STREAMED_STATE_SINCE && rest.parts === undefined) {
    throw new ActorTsError(
      'invalid_argument',
      `a state chunk without parts cannot go to a peer on protocol ${version} (streamed from ${STREAMED_STATE_SINCE})`,
    );
  }
  const known = version >= SENDER_PROGRESS_SINCE && progress !== undefined ? { ...rest, progress } : rest;
  const place = version >= STREAMED_STATE_SINCE && last ? { ...known, last } : known;
  const wire =
    version >= PACKED_STATE_SINCE ? { ...place, packed: packed ?? packEntities(entities) } : { ...place, entities };
  return wire;
}

type Chunk = Extract<StateMessage, { readonly type: 'ShardStateChunk' }>;
type Restore = Extract<StateMessage, { readonly type: 'RestoreShardState' }>;

/** An old host's chunk as its new home takes it: the same part and entities, as transfer `handOffId`. */
export function asRestore(chunk: Chunk): Restore {
  const { typeName, shardId, handOffId, part, parts, last, entities, packed, progress } = chunk;
  return {
    type: 'RestoreShardState',
    ...{ typeName, shardId, transferId: handOffId, part, entities },
    ...(parts !== undefined && { parts }),
    ...(last && { last }),
    ...(packed !== undefined && { packed }),
    ...(progress !== undefined && { progress }),
  };
}
