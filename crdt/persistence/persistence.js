// The storage seam of the placement store: what a node keeps on its own disk so its placements survive a
// full-cluster restart. The store hands opaque bytes (its wire-encoded updates and a whole-state snapshot)
// to a PlacementPersistence; the implementations are lmdb-persistence.ts (durable) and
// memory-persistence.ts (today's behaviour: nothing survives the process).
//
// How a store uses it: at startup `load()`, apply the snapshot and then each log entry with
// `applyUpdate` (idempotent, so replaying more than needed is harmless), and only then join replication.
// Append every update it emits for its own writes and the bytes of every remote update it applied (they
// carry base merges and generation moves that no emitted update does); acknowledge a write only once its
// append resolved. After a compaction, `writeSnapshot(store.encodeDiff(EMPTY_STATE_VECTOR))`.
import { CodedError } from '../errors.js';
/**
 * Largest update or snapshot a persistence accepts by default (64 MiB): a bound on what one corrupt length field can
 * make it allocate.
 */
export const DEFAULT_MAX_RECORD_BYTES = 64 * 1024 * 1024;
/**
 * Thrown by a persistence when its data directory cannot be used (locked, corrupt, too large); `code` says which, and
 * the message names the directory.
 */
export class PersistenceError extends CodedError {
    name = 'PersistenceError';
}
/** How to get out of unreadable data; every 'corrupt' and 'unsupported_format' message ends with it. */
export function recoveryHint(path) {
    return (`To recover: stop this node, move ${path} aside (keep it for inspection) and start the node with an empty ` +
        'data directory; it re-syncs the placements from the other nodes of the cluster.');
}
/** Validates the options shared by both implementations; throws 'invalid_option'. */
export function resolveOptions(options) {
    if (options !== undefined && (typeof options !== 'object' || options === null)) {
        throw new PersistenceError('invalid_option', 'persistence options must be an object');
    }
    const maxRecordBytes = options?.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
    if (!Number.isSafeInteger(maxRecordBytes) || maxRecordBytes < 1) {
        throw new PersistenceError('invalid_option', `maxRecordBytes must be a positive integer, got ${String(maxRecordBytes)}`);
    }
    const now = options?.now ?? Date.now;
    if (typeof now !== 'function')
        throw new PersistenceError('invalid_option', 'now must be a function');
    return { maxRecordBytes, now };
}
/** A private copy of a caller's bytes after checking them; the caller may reuse its buffer at once. */
export function checkedCopy(bytes, what, maxRecordBytes) {
    if (!(bytes instanceof Uint8Array))
        throw new PersistenceError('invalid_argument', `${what} must be a Uint8Array`);
    if (bytes.length === 0)
        throw new PersistenceError('invalid_argument', `${what} must not be empty`);
    if (bytes.length > maxRecordBytes) {
        throw new PersistenceError('invalid_argument', `${what} is ${bytes.length} bytes, the limit (maxRecordBytes) is ${maxRecordBytes}`);
    }
    return new Uint8Array(bytes);
}
//# sourceMappingURL=persistence.js.map