import { ActorTsError } from '../errors.js';
import { MAX_SHARD_ID, TYPE_NAME_PATTERN } from './protocol/messages.js';
import { LeastShardAllocationStrategy } from './strategies/index.js';
import { DEFAULT_SHARD_ID_FUNCTION, requireShardIdFunction } from './shard-id.js';
export const MAX_NUMBER_OF_SHARDS = MAX_SHARD_ID + 1;
/** Checks `options` (`invalid_argument` naming the bad field) and fills in the defaults. */
export function resolveShardedType(options, membership) {
    checkShardedType(options);
    const { typeName, behavior, numberOfShards = 1000, allocationStrategy, role, shardIdFunction = DEFAULT_SHARD_ID_FUNCTION } = options;
    const strategy = allocationStrategy ?? new LeastShardAllocationStrategy({ cluster: membership });
    return { typeName, numberOfShards, behavior, role, strategy, shardIdFunction };
}
/** Throws `invalid_argument` naming the first bad field of `options`; what `init` checks before anything starts. */
export function checkShardedType(options) {
    if (typeof options !== 'object' || options === null)
        throw invalid('init options must be an object');
    const { typeName, behavior, numberOfShards = 1000, allocationStrategy, role, shardIdFunction = DEFAULT_SHARD_ID_FUNCTION } = options;
    if (typeof typeName !== 'string' || !TYPE_NAME_PATTERN.test(typeName)) {
        throw invalid(`typeName must match ${String(TYPE_NAME_PATTERN)}, got ${JSON.stringify(typeName)}`);
    }
    if (typeof behavior !== 'function')
        throw invalid('behavior must be a function (ctx) => { receive(message) }');
    if (!Number.isInteger(numberOfShards) || numberOfShards < 1 || numberOfShards > MAX_NUMBER_OF_SHARDS) {
        throw invalid(`numberOfShards must be an integer in 1..${MAX_NUMBER_OF_SHARDS}, got ${String(numberOfShards)}`);
    }
    if (role !== undefined && (typeof role !== 'string' || role.length === 0))
        throw invalid('role must be a non-empty string');
    if (allocationStrategy !== undefined &&
        (typeof allocationStrategy !== 'object' ||
            allocationStrategy === null ||
            typeof allocationStrategy.allocate !== 'function' ||
            typeof allocationStrategy.rebalance !== 'function')) {
        throw invalid('allocationStrategy must implement allocate() and rebalance()');
    }
    requireShardIdFunction(shardIdFunction);
}
function invalid(message) {
    return new ActorTsError('invalid_argument', message);
}
//# sourceMappingURL=sharded-type.js.map