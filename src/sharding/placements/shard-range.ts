// A shard id checked against its entity type's range, once, where it comes in (pin-request.ts, the management
// routes); the ShardId it becomes is what the layers below take, so they need not check it again.
import { ActorTsError } from '../../errors.js';

declare const checkedShard: unique symbol;
/** A shard id found in its entity type's range by parseShardId; a plain number does not type-check as one. */
export type ShardId = number & { readonly [checkedShard]: true };

/** The range a shard id is checked against: an entity type and its shard count. */
export interface ShardRange {
  readonly typeName: string;
  readonly numberOfShards: number;
}

/** The shard id as a ShardId; throws ActorTsError `invalid_shard` (the API answers 400) unless an integer in range. */
export function parseShardId(shardId: unknown, range: ShardRange): ShardId {
  if (typeof shardId !== 'number' || !Number.isSafeInteger(shardId) || shardId < 0 || shardId >= range.numberOfShards) {
    throw new ActorTsError(
      'invalid_shard',
      `shard id ${String(shardId)} is out of range for ${range.typeName}: expected an integer in 0..${range.numberOfShards - 1}`,
    );
  }
  return shardId as ShardId;
}
