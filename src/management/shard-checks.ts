// The checks routes about one entity type's shards share: the type is initialised on this node (404
// `unknown_type`), and a shard id parsed against its range (400 `invalid_shard`, parseShardId's error) into the
// ShardId the backend takes as it is.
import type { ShardRange } from '../sharding/placements/shard-range.js';
import type { ManagementBackend } from './backend.js';
import { HttpError } from './errors.js';

export function knownType(backend: ManagementBackend, typeName: string): string {
  if (!backend.entityTypes().has(typeName)) {
    const known = [...backend.entityTypes().keys()].join(', ') || 'none';
    throw new HttpError(
      404,
      'unknown_type',
      `entity type "${typeName}" is not initialised on this node (it runs: ${known})`,
    );
  }
  return typeName;
}

/** The range a known type's shard ids are parsed against (parseShardId). */
export function shardRange(backend: ManagementBackend, typeName: string): ShardRange {
  return { typeName, numberOfShards: backend.entityTypes().get(typeName)?.numberOfShards ?? 0 };
}
