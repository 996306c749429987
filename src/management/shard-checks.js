import { HttpError } from './errors.js';
export function knownType(backend, typeName) {
    if (!backend.entityTypes().has(typeName)) {
        throw new HttpError(404, 'unknown_type', `entity type "${typeName}" is not initialised on this node`);
    }
    return typeName;
}
export function shardCount(backend, typeName) {
    return backend.entityTypes().get(typeName)?.numberOfShards ?? 0;
}
export function inRange(shardId, numberOfShards, typeName) {
    if (!Number.isSafeInteger(shardId) || shardId < 0 || shardId >= numberOfShards) {
        throw new HttpError(400, 'invalid_shard', `shard id ${shardId} is out of range for ${typeName}: expected an integer in 0..${numberOfShards - 1}`);
    }
    return shardId;
}
//# sourceMappingURL=shard-checks.js.map