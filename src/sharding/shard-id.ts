// Entity id -> shard id: FNV-1a 32-bit over the UTF-8 bytes of the id, modulo the number of shards.
// Every node must compute the same shard for an id, so this function is part of the wire contract.
import { ActorTsError } from '../errors.js';
import { describe } from './describe.js';

const FNV_OFFSET_BASIS = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const MAX_SHARDS = 0xffffffff;
const utf8 = new TextEncoder();

/** FNV-1a 32-bit hash of `bytes`, as an unsigned integer (0 .. 2^32 - 1). */
export function fnv1a32(bytes: Uint8Array): number {
  if (!(bytes instanceof Uint8Array)) {
    throw new ActorTsError('invalid_argument', 'fnv1a32 expects a Uint8Array');
  }
  let hash = FNV_OFFSET_BASIS;
  for (const byte of bytes) {
    // Math.imul keeps the multiplication in 32 bits; a plain `*` would lose low bits above 2^53.
    hash = Math.imul(hash ^ byte, FNV_PRIME);
  }
  return hash >>> 0;
}

/** The shard of an entity: `fnv1a32(utf8(entityId)) % numberOfShards`. */
export function shardIdFor(entityId: string, numberOfShards: number): number {
  if (typeof entityId !== 'string' || entityId.length === 0) {
    throw new ActorTsError('invalid_argument', `entity id must be a non-empty string, got ${describe(entityId)}`);
  }
  if (!Number.isInteger(numberOfShards) || numberOfShards < 1 || numberOfShards > MAX_SHARDS) {
    throw new ActorTsError(
      'invalid_argument',
      `numberOfShards must be an integer in 1..${MAX_SHARDS}, got ${describe(numberOfShards)}`,
    );
  }
  return fnv1a32(utf8.encode(entityId)) % numberOfShards;
}
