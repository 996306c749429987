// The per-writer slot encoding, kept in one place: map key `shardId + "\u0000" + writer`, map value
// `[target | null, wallMs, counter, meta?]`. The slot's writer is also its timestamp's node, so it is not stored
// twice. `meta` (slot-meta.ts) came with protocol version 3; the 3-element values of version 2 still read.
import { MAX_HLC_COUNTER, MAX_NODE_LENGTH, MAX_TARGET_LENGTH, MAX_TYPE_NAME_LENGTH, PlacementStoreError, describe, nameProblem, } from './errors.js';
import { compareHlc } from './hlc.js';
import { assertMeta, canonicalMeta, compareMeta, metaProblem } from './slot-meta.js';
const SEPARATOR = '\u0000';
const CANONICAL_SHARD = /^(?:0|[1-9][0-9]{0,15})$/;
/**
 * Orders slots of one shard: by hlc, and for the same hlc (one node writing twice at one instant, possible
 * only across a restart with a clock set back) by target, a tombstone lowest, then by meta, so every replica
 * picks the same.
 */
export function compareSlots(a, b) {
    const byHlc = compareHlc(a.hlc, b.hlc);
    if (byHlc !== 0)
        return byHlc;
    if (a.target !== b.target) {
        if (a.target === null || b.target === null)
            return a.target === null ? -1 : 1;
        return a.target < b.target ? -1 : 1;
    }
    return compareMeta(a.meta, b.meta);
}
export function slotKey(shardId, writer) {
    return `${shardId}${SEPARATOR}${writer}`;
}
/** The shard and writer of a slot key, or null when the key is not one this store would write. */
export function parseSlotKey(key) {
    const at = key.indexOf(SEPARATOR);
    if (at <= 0)
        return null;
    const digits = key.slice(0, at);
    const writer = key.slice(at + 1);
    if (!CANONICAL_SHARD.test(digits))
        return null;
    const shardId = Number(digits);
    if (!Number.isSafeInteger(shardId))
        return null;
    if (nameProblem(writer, MAX_NODE_LENGTH) !== null)
        return null;
    return { shardId, writer };
}
/** `meta` must have passed assertMeta; it is stored canonical (keys sorted). A tombstone drops it. */
export function encodeSlotValue(target, hlc, meta) {
    if (target === null || meta === undefined)
        return [target, hlc.wallMs, hlc.counter];
    return [target, hlc.wallMs, hlc.counter, canonicalMeta(meta)];
}
/** The slot's content with its timestamp (node = writer), or null when `value` is not a well-formed slot value. */
export function decodeSlotValue(value, writer) {
    if (!isSlotValue(value))
        return null;
    const hlc = Object.freeze({ wallMs: value[1], counter: value[2], node: writer });
    return value.length === 4 ? { target: value[0], hlc, meta: canonicalMeta(value[3]) } : { target: value[0], hlc };
}
export function isSlotValue(value) {
    if (!Array.isArray(value) || (value.length !== 3 && value.length !== 4))
        return false;
    const [target, wallMs, counter, meta] = value;
    if (target !== null && nameProblem(target, MAX_TARGET_LENGTH) !== null)
        return false;
    if (value.length === 4 && (target === null || metaProblem(meta) !== null))
        return false;
    if (typeof wallMs !== 'number' || !Number.isSafeInteger(wallMs) || wallMs < 0)
        return false;
    return typeof counter === 'number' && Number.isInteger(counter) && counter >= 0 && counter <= MAX_HLC_COUNTER;
}
/**
 * Validates `{ shardId, target, meta? }` entries, all before any is written, and returns them as writes
 * with canonical meta. Throws `invalid_option`, `invalid_shard_id` or `invalid_target`.
 */
export function checkWrites(entries) {
    if (!Array.isArray(entries))
        throw new PlacementStoreError('invalid_option', `entries must be an array, got ${describe(entries)}`);
    return entries.map((entry) => {
        if (typeof entry !== 'object' || entry === null) {
            throw new PlacementStoreError('invalid_option', `each entry must be { shardId, target, meta? }, got ${describe(entry)}`);
        }
        const { shardId, target, meta } = entry;
        assertShardId(shardId);
        assertTarget(target);
        if (meta === undefined)
            return [shardId, target, undefined];
        assertMeta(meta);
        return [shardId, target, canonicalMeta(meta)];
    });
}
export function assertShardId(shardId) {
    if (typeof shardId !== 'number' || !Number.isSafeInteger(shardId) || shardId < 0) {
        throw new PlacementStoreError('invalid_shard_id', `shardId must be a non-negative safe integer, got ${describe(shardId)}`);
    }
}
export function assertTarget(target) {
    const problem = nameProblem(target, MAX_TARGET_LENGTH);
    if (problem !== null)
        throw new PlacementStoreError('invalid_target', `target ${problem}`);
}
export function assertTypeName(typeName) {
    const problem = typeNameProblem(typeName);
    if (problem !== null)
        throw new PlacementStoreError('invalid_type_name', `typeName ${problem}`);
}
export function typeNameProblem(typeName) {
    return nameProblem(typeName, MAX_TYPE_NAME_LENGTH);
}
//# sourceMappingURL=slots.js.map