// How the lmdb persistence keeps its payloads small on disk. A snapshot is brotli-compressed: a compacted
// state is a list of slots whose targets, writers and timestamps repeat (node names, neighbouring clocks),
// so it shrinks about 3-5x. The appends of one commit (group commit: up to thousands of updates) are
// stored as one compressed group record instead of one record each: updates of one writer share most of
// their bytes, and lmdb's per-record overhead is paid once. lmdb keeps the pages of the last two commits
// while a third is written, so its file is about three times what one commit rewrites: every byte saved
// here is saved three times. Decompression is bounded, so a damaged record cannot blow up memory.
import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';
import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';
import { RecordProblem } from './persistence-record.js';
// Quality 5: most of the gain of the higher levels at a few milliseconds per 100 KiB.
const QUALITY = 5;
/** What the framing of one update in a group adds at most (its length as a varint). */
export const GROUP_FRAMING_BYTES = 8;
export function packSnapshot(bytes) {
    return compress(bytes);
}
/** The snapshot a packed record holds; throws RecordProblem('corrupt') when it does not unpack within `maxBytes`. */
export function unpackSnapshot(packed, maxBytes) {
    const bytes = decompress(packed, maxBytes, 'snapshot');
    if (bytes.length === 0)
        throw new RecordProblem('corrupt', 'the snapshot record decompresses to nothing');
    return bytes;
}
/**
 * Splits a commit's appends into groups of at most `maxBytes` (updates plus framing), so that every group
 * unpacks within the bound the reader applies. A group of one is stored as a plain log record.
 */
export function groupAppends(appends, maxBytes) {
    const groups = [];
    let current = [];
    let size = 0;
    for (const append of appends) {
        const cost = append.bytes.length + GROUP_FRAMING_BYTES;
        if (current.length > 0 && size + cost > maxBytes) {
            groups.push(current);
            current = [];
            size = 0;
        }
        current.push(append);
        size += cost;
    }
    if (current.length > 0)
        groups.push(current);
    return groups;
}
export function packGroup(updates) {
    return compress(encoding.encode((encoder) => {
        encoding.writeVarUint(encoder, updates.length);
        for (const update of updates)
            encoding.writeVarUint8Array(encoder, update);
    }));
}
/** The updates of a group record; throws RecordProblem('corrupt') for anything but two or more non-empty updates. */
export function unpackGroup(packed, maxBytes) {
    const bytes = decompress(packed, maxBytes, 'log group');
    try {
        const decoder = decoding.createDecoder(bytes);
        const count = decoding.readVarUint(decoder);
        if (count < 2 || count > bytes.length)
            throw new Error(`it claims ${count} updates`);
        const updates = [];
        for (let i = 0; i < count; i++) {
            const update = decoding.readVarUint8Array(decoder);
            if (update.length === 0)
                throw new Error(`update ${i} is empty`);
            updates.push(update);
        }
        if (decoding.hasContent(decoder))
            throw new Error('bytes follow its last update');
        return updates;
    }
    catch (cause) {
        const reason = cause instanceof Error ? cause.message : String(cause);
        throw new RecordProblem('corrupt', `a log group record is malformed: ${reason}`);
    }
}
function compress(bytes) {
    return brotliCompressSync(bytes, {
        params: { [constants.BROTLI_PARAM_QUALITY]: QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length },
    });
}
function decompress(packed, maxBytes, what) {
    try {
        const bytes = brotliDecompressSync(packed, { maxOutputLength: maxBytes });
        return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    }
    catch (cause) {
        const reason = cause instanceof Error ? cause.message : String(cause);
        throw new RecordProblem('corrupt', `the ${what} record does not decompress (${reason})`);
    }
}
//# sourceMappingURL=lmdb-packing.js.map