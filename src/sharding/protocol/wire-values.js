// The checks every sharding message field of a common kind passes (shard ids, request ids, node addresses),
// shared by the message families of this layer so that each judges a value the same way.
import { NodeAddress } from '../../cluster/address.js';
/** Largest shard id accepted on the wire (`numberOfShards` is capped below this by `init`). */
export const MAX_SHARD_ID = 999_999;
export function isShardId(value) {
    return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_SHARD_ID;
}
export function isRequestId(value) {
    return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}
export function isAddress(value) {
    return typeof value === 'string' && value.length <= 512 && NodeAddress.tryParse(value)?.toString() === value;
}
//# sourceMappingURL=wire-values.js.map