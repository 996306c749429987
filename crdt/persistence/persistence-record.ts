// The on-disk record of the persistence seam: a format version, a kind, a sequence number and a CRC-32
// around each payload, so a truncated, overwritten or foreign record is refused instead of being replayed.
import { crc32 } from 'node:zlib';
import { CodedError } from '../errors.js';

/** The record format this build writes and reads. */
export const RECORD_FORMAT_VERSION = 1;
/** version u8, kind u8, sequence f64 (big-endian), crc32 u32 of everything else. */
export const RECORD_HEADER_BYTES = 14;

/**
 * 'packed-snapshot': a snapshot whose payload is brotli-compressed; 'log-group': the appends of one commit
 * (sequence: the first one's), compressed together (lmdb-packing.ts).
 */
export type RecordKind = 'log' | 'snapshot' | 'format' | 'packed-snapshot' | 'log-group';
const KIND_CODES: Readonly<Record<RecordKind, number>> = {
  log: 1,
  snapshot: 2,
  format: 3,
  'packed-snapshot': 4,
  'log-group': 5,
};

/** The kind a record claims to be (unchecked: decodeRecord checks it), or undefined for a foreign code. */
export function claimedKind(record: Uint8Array): RecordKind | undefined {
  const code = record.length > 1 ? record[1] : undefined;
  return (Object.keys(KIND_CODES) as RecordKind[]).find((kind) => KIND_CODES[kind] === code);
}

export interface DecodedRecord {
  readonly sequence: number;
  readonly payload: Uint8Array;
}

/** Why a record was refused: 'unsupported_format' for another version, 'corrupt' for everything else. */
export class RecordProblem extends CodedError<'corrupt' | 'unsupported_format'> {
  override readonly name = 'RecordProblem';
}

/**
 * `sequence`: for a log record its own key, for a snapshot the first log sequence it does not cover, for
 * the format record 0. Stored in the checksum, so a record under the wrong key is detected.
 */
export function encodeRecord(kind: RecordKind, sequence: number, payload: Uint8Array): Uint8Array {
  const record = new Uint8Array(RECORD_HEADER_BYTES + payload.length);
  const view = new DataView(record.buffer);
  view.setUint8(0, RECORD_FORMAT_VERSION);
  view.setUint8(1, KIND_CODES[kind]);
  view.setFloat64(2, sequence);
  record.set(payload, RECORD_HEADER_BYTES);
  view.setUint32(10, checksum(record));
  return record;
}

/** Checks and opens a record; throws RecordProblem. The payload is a copy, safe to keep. */
export function decodeRecord(kind: RecordKind, record: Uint8Array, expectedSequence?: number): DecodedRecord {
  if (record.length < RECORD_HEADER_BYTES) {
    throw new RecordProblem(
      'corrupt',
      `${kind} record is truncated: ${record.length} bytes, its header alone needs ${RECORD_HEADER_BYTES}`,
    );
  }
  const view = new DataView(record.buffer, record.byteOffset, record.byteLength);
  const version = view.getUint8(0);
  if (version !== RECORD_FORMAT_VERSION) {
    throw new RecordProblem(
      'unsupported_format',
      `${kind} record has format version ${version}; this build reads version ${RECORD_FORMAT_VERSION} only`,
    );
  }
  if (view.getUint32(10) !== checksum(record)) {
    throw new RecordProblem('corrupt', `${kind} record fails its checksum: it is truncated or was overwritten`);
  }
  const code = view.getUint8(1);
  if (code !== KIND_CODES[kind])
    throw new RecordProblem('corrupt', `a ${kind} record slot holds a record of kind ${code}`);
  const sequence = view.getFloat64(2);
  if (!Number.isSafeInteger(sequence) || sequence < 0)
    throw new RecordProblem('corrupt', `${kind} record has an impossible sequence number`);
  if (expectedSequence !== undefined && sequence !== expectedSequence) {
    throw new RecordProblem('corrupt', `${kind} record ${expectedSequence} carries sequence number ${sequence}`);
  }
  // A plain copy: lmdb hands out Buffers, which may share memory and compare unlike Uint8Arrays.
  return { sequence, payload: new Uint8Array(record.subarray(RECORD_HEADER_BYTES)) };
}

// Over the header without its checksum field, then the payload.
function checksum(record: Uint8Array): number {
  const head = crc32(record.subarray(0, 10));
  return crc32(record.subarray(RECORD_HEADER_BYTES), head) >>> 0;
}
