// How a snapshot is kept on disk: brotli-compressed. A compacted state is a list of slots whose targets,
// writers and timestamps repeat (node names, neighbouring clocks), so it shrinks about 3-5x; that keeps the
// lmdb file, which must hold the old and the new snapshot at the moment one replaces the other, within
// twice the compacted state. Decompression is bounded, so a damaged record cannot blow up memory.
import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';
import { RecordProblem } from './persistence-record.js';

// Quality 5: most of the gain of the higher levels at a few milliseconds per 100 KiB.
const QUALITY = 5;

export function packSnapshot(bytes: Uint8Array): Uint8Array {
  return brotliCompressSync(bytes, {
    params: { [constants.BROTLI_PARAM_QUALITY]: QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length },
  });
}

/** The snapshot a packed record holds; throws RecordProblem('corrupt') when it does not unpack within `maxBytes`. */
export function unpackSnapshot(packed: Uint8Array, maxBytes: number): Uint8Array {
  let bytes: Buffer;
  try {
    bytes = brotliDecompressSync(packed, { maxOutputLength: maxBytes });
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new RecordProblem('corrupt', `the snapshot record does not decompress (${reason})`);
  }
  if (bytes.length === 0) throw new RecordProblem('corrupt', 'the snapshot record decompresses to nothing');
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
