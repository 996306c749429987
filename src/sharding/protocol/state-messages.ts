// Entity state on the wire during a graceful hand-off: the old host's chunks to the coordinator (before its
// ShardStopped, on the same connection) and the coordinator's to the new host (before HostShard). Kept apart
// from messages.ts, which routes them; each chunk is validated entity by entity here. From protocol 8 a chunk's
// entities travel as one binary (packed-states.ts); a peer on 7 gets and sends the msgpack list (stateOnWire).
import type { RawMessage } from '../../cluster/transport/wire-message.js';
import { packEntities, unpackEntities, type WireEntityState } from './packed-states.js';

export type { WireEntityState } from './packed-states.js';

/** Most chunks in one transfer, and most entities in one chunk. */
export const MAX_STATE_PARTS = 100_000;
export const MAX_ENTITIES_PER_CHUNK = 100_000;

/** The protocol version from which a chunk's entities travel packed (`packed`) instead of as a list. */
export const PACKED_STATE_SINCE = 8;

/** A shard whose hand-off state its old host still keeps, with the HandOff it was last sent for. */
export interface RetainedShard {
  readonly shardId: number;
  readonly handOffId: number;
}

export type StateMessage =
  /** R->C. Part `part` of `parts` of a shard's entity states, stopped for the HandOff `handOffId`. */
  | {
      readonly type: 'ShardStateChunk';
      readonly typeName: string;
      readonly shardId: number;
      readonly handOffId: number;
      readonly part: number;
      readonly parts: number;
      readonly entities: ReadonlyArray<WireEntityState>;
      /**
       * The same entities as one packed binary (packed-states.ts), their states views of it: set where they were
       * packed (the old host) or by the parse when they arrived packed, so a relay sends these bytes on.
       */
      readonly packed?: Uint8Array;
    }
  /** C->R. The same chunks, for the shard's new home; `transferId` is the hand-off's id. */
  | {
      readonly type: 'RestoreShardState';
      readonly typeName: string;
      readonly shardId: number;
      readonly transferId: number;
      readonly part: number;
      readonly parts: number;
      readonly entities: ReadonlyArray<WireEntityState>;
      /** As in ShardStateChunk. */
      readonly packed?: Uint8Array;
    }
  /**
   * R->C. The old host still keeps the state it sent for the HandOff `handOffId` of a shard (repeated while
   * unreleased, in case a release was lost): the coordinator releases it, or asks for it again with a HandOff
   * of its own when the shard has no home and no hand-off (the copy it had was lost with a former coordinator).
   */
  | { readonly type: 'ShardStateHeld'; readonly typeName: string; readonly shardId: number; readonly handOffId: number }
  /**
   * C->R, to a shard's old host. The new home started the shard (or it runs somewhere already): the state kept
   * since the stop under `handOffId` is not needed any more.
   */
  | {
      readonly type: 'ShardStateReleased';
      readonly typeName: string;
      readonly shardId: number;
      readonly handOffId: number;
    };

export interface StateFieldChecks {
  isRequestId(value: unknown): value is number;
  isShardId(value: unknown): value is number;
  readonly maxEntityIdLength: number;
}

/** A state chunk with every field checked; undefined when any is wrong. */
export function parseStateMessage(
  raw: RawMessage,
  typeName: string,
  checks: StateFieldChecks,
): StateMessage | undefined {
  const { shardId, part, parts } = raw;
  const id = raw.type === 'ShardStateChunk' ? raw['handOffId'] : raw['transferId'];
  if (!checks.isShardId(shardId) || !checks.isRequestId(id)) return undefined;
  if (typeof parts !== 'number' || !Number.isInteger(parts) || parts < 1 || parts > MAX_STATE_PARTS) return undefined;
  if (typeof part !== 'number' || !Number.isInteger(part) || part < 0 || part >= parts) return undefined;
  const packed = raw['packed'];
  const read = packed instanceof Uint8Array ? packedEntities(packed, checks) : listedEntities(raw['entities'], checks);
  if (read === undefined) return undefined;
  const { entities } = read;
  if (raw.type === 'ShardStateChunk')
    return { type: 'ShardStateChunk', typeName, shardId, handOffId: id, part, parts, entities, ...read.packed };
  if (raw.type === 'RestoreShardState')
    return { type: 'RestoreShardState', typeName, shardId, transferId: id, part, parts, entities, ...read.packed };
  return undefined;
}

type ReadEntities = { readonly entities: WireEntityState[]; readonly packed?: { readonly packed: Uint8Array } };

function packedEntities(packed: Uint8Array, checks: StateFieldChecks): ReadEntities | undefined {
  const entities = unpackEntities(packed, {
    maxEntities: MAX_ENTITIES_PER_CHUNK,
    maxEntityIdLength: checks.maxEntityIdLength,
  });
  return entities === undefined ? undefined : { entities, packed: { packed } };
}

function listedEntities(list: unknown, checks: StateFieldChecks): ReadEntities | undefined {
  if (!Array.isArray(list) || list.length > MAX_ENTITIES_PER_CHUNK) return undefined;
  const entities: WireEntityState[] = [];
  for (const item of list) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return undefined;
    const { entityId, state } = item as Record<string, unknown>;
    if (typeof entityId !== 'string' || entityId.length === 0 || entityId.length > checks.maxEntityIdLength)
      return undefined;
    if (!(state instanceof Uint8Array)) return undefined;
    entities.push({ entityId, state });
  }
  return { entities };
}

type StateChunk = Extract<StateMessage, { readonly type: 'ShardStateChunk' | 'RestoreShardState' }>;

/**
 * A message as it goes to a peer on protocol `version`: a state chunk's entities packed from PACKED_STATE_SINCE
 * (the bytes it arrived in when it has them), as a list before; any other message as it is.
 */
export function stateOnWire(message: { readonly type: string }, version: number): { readonly type: string } {
  if (message.type !== 'ShardStateChunk' && message.type !== 'RestoreShardState') return message;
  const { entities, packed, ...rest } = message as StateChunk;
  const wire =
    version >= PACKED_STATE_SINCE ? { ...rest, packed: packed ?? packEntities(entities) } : { ...rest, entities };
  return wire;
}

/** A registration's list of retained states; undefined when any entry is wrong or the list is over `maxEntries`. */
export function parseRetained(
  value: unknown,
  checks: Pick<StateFieldChecks, 'isRequestId' | 'isShardId'>,
  maxEntries: number,
): RetainedShard[] | undefined {
  if (!Array.isArray(value) || value.length > maxEntries) return undefined;
  const retained: RetainedShard[] = [];
  for (const item of value) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return undefined;
    const { shardId, handOffId } = item as Record<string, unknown>;
    if (!checks.isShardId(shardId) || !checks.isRequestId(handOffId)) return undefined;
    retained.push({ shardId, handOffId });
  }
  return retained;
}
