// Entity id -> shard id. Every node must compute the same shard for an id, so the function is part of the
// wire contract, chosen per entity type (`ShardedTypeOptions.shardIdFunction`):
// - 'fnv1a-utf8' (the default): FNV-1a 32-bit over the UTF-8 bytes of the id, unsigned, modulo the shard count.
// - 'actor-ts': actor-ts's own `hashShardId`, FNV-1a 32-bit over the UTF-16 code units of the id, read as a
//   signed 32-bit integer, `Math.abs`, modulo the shard count. Matched against pathosDev/actor-ts
//   src/cluster/sharding/ShardAllocator.ts (`hashShardId` and `stringHash`, commit d219e970).
// The two differ for about half of all ids. The default stays 'fnv1a-utf8' because changing it would move
// every other entity of a running cluster to another shard, and during a rolling update the old and new
// nodes would route the same id to two shards at once.
import { ActorTsError } from '../../errors.js';
import { describe } from './describe.js';

const FNV_OFFSET_BASIS = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const MAX_SHARDS = 0xffffffff;
const utf8 = new TextEncoder();

/** How entity ids map to shards; see this module's header for the two functions and why the default is what it is. */
export type ShardIdFunction = 'actor-ts' | 'fnv1a-utf8';

/** Every accepted `ShardIdFunction`, for validation and help texts. */
export const SHARD_ID_FUNCTIONS: readonly ShardIdFunction[] = Object.freeze(['fnv1a-utf8', 'actor-ts'] as const);

/** The function a type uses when it names none: existing deployments keep their entity-to-shard mapping. */
export const DEFAULT_SHARD_ID_FUNCTION: ShardIdFunction = 'fnv1a-utf8';

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

/**
 * FNV-1a 32-bit over the UTF-16 code units of `text` (not its bytes), as a signed 32-bit integer: the value
 * actor-ts takes the absolute value of. For the empty string it is the offset basis, unsigned, as there.
 */
export function fnv1a32Utf16Signed(text: string): number {
  let hash = FNV_OFFSET_BASIS;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), FNV_PRIME);
  return hash;
}

/** Whether `value` names one of SHARD_ID_FUNCTIONS. */
export function isShardIdFunction(value: unknown): value is ShardIdFunction {
  return typeof value === 'string' && (SHARD_ID_FUNCTIONS as readonly string[]).includes(value);
}

/** Throws `invalid_argument` unless `value` is one of SHARD_ID_FUNCTIONS; `what` names the setting in the message. */
export function requireShardIdFunction(value: unknown, what = 'shardIdFunction'): ShardIdFunction {
  if (isShardIdFunction(value)) return value;
  throw new ActorTsError(
    'invalid_argument',
    `${what} must be one of ${SHARD_ID_FUNCTIONS.map((f) => `'${f}'`).join(', ')}, got ${describe(value)}`,
  );
}

/**
 * The shard of an entity id under `shardIdFunction` (default 'fnv1a-utf8'): an integer in
 * 0 .. numberOfShards - 1. With 'actor-ts' it equals actor-ts's shard for the same id and shard count.
 * Throws `invalid_argument` for an empty id, a shard count outside 1..2^32 - 1 or an unknown function.
 */
export function shardIdFor(
  entityId: string,
  numberOfShards: number,
  shardIdFunction: ShardIdFunction = DEFAULT_SHARD_ID_FUNCTION,
): number {
  if (typeof entityId !== 'string' || entityId.length === 0) {
    throw new ActorTsError('invalid_argument', `entity id must be a non-empty string, got ${describe(entityId)}`);
  }
  if (!Number.isInteger(numberOfShards) || numberOfShards < 1 || numberOfShards > MAX_SHARDS) {
    throw new ActorTsError(
      'invalid_argument',
      `numberOfShards must be an integer in 1..${MAX_SHARDS}, got ${describe(numberOfShards)}`,
    );
  }
  if (shardIdFunction === 'fnv1a-utf8') return fnv1a32(utf8.encode(entityId)) % numberOfShards;
  if (shardIdFunction === 'actor-ts') return Math.abs(fnv1a32Utf16Signed(entityId)) % numberOfShards;
  // Only a caller outside the type system gets here; requireShardIdFunction throws the typed error.
  requireShardIdFunction(shardIdFunction);
  throw new ActorTsError('invalid_argument', 'unreachable shard id function');
}
