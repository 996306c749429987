// The checks routes about one entity type's shards share: the type is initialised on this node (404
// `unknown_type`) and a shard id is in its range (400 `invalid_shard`).
import type { ManagementBackend } from './backend.js';
import { HttpError } from './errors.js';

export function knownType(backend: ManagementBackend, typeName: string): string {
  if (!backend.entityTypes().has(typeName)) {
    throw new HttpError(404, 'unknown_type', `entity type "${typeName}" is not initialised on this node`);
  }
  return typeName;
}

export function shardCount(backend: ManagementBackend, typeName: string): number {
  return backend.entityTypes().get(typeName)?.numberOfShards ?? 0;
}

export function inRange(shardId: number, numberOfShards: number, typeName: string): number {
  if (!Number.isSafeInteger(shardId) || shardId < 0 || shardId >= numberOfShards) {
    throw new HttpError(
      400,
      'invalid_shard',
      `shard id ${shardId} is out of range for ${typeName}: expected an integer in 0..${numberOfShards - 1}`,
    );
  }
  return shardId;
}
