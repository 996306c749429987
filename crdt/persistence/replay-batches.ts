// Restart speed: a log of many small updates is replayed as few merged ones. Consecutive records of one
// generation that carry only a document part merge (Yjs merges updates losslessly, and applying is
// order-free), so a replica applies one transaction per batch instead of one per record. A record with a
// base, another generation, or bytes that do not decode stays alone, so its error names it.
import * as decoding from 'lib0/decoding';
import * as Y from 'yjs';
import { encodeWireUpdate } from '../wire.js';

/** One update to apply, standing for records first..last (indexes into the input). */
export interface ReplayBatch {
  readonly bytes: Uint8Array;
  readonly first: number;
  readonly last: number;
}

// A run is cut only where it must be: an update of a run depends on the items of the updates before it,
// so a scratch document fed part of a run would hold the rest as pending structs (quadratic to retry).
const DEFAULT_MAX_BATCH_BYTES = 64 * 1024 * 1024;
// Merging integrates a run twice (scratch, then replica): it pays off only over many transactions.
const MIN_MERGED_RECORDS = 32;
const HAS_BASE = 1;
const HAS_DOC = 2;
const BASE_WITH_META = 4;

/**
 * `snapshot`, when given, is what the replica applied before the log: a run of its generation is merged
 * on top of its document part, which the run's first records build on (overwrites name the items they
 * replace); without it the merge would hold them as pending structs, quadratic to retry. The merged
 * batch then carries only what the log adds to the snapshot.
 */
export function replayBatches(
  records: readonly Uint8Array[],
  snapshot?: Uint8Array,
  maxBatchBytes = DEFAULT_MAX_BATCH_BYTES,
): ReplayBatch[] {
  const seed = snapshot === undefined ? undefined : parts(snapshot);
  const batches: ReplayBatch[] = [];
  let run: { generation: number; docs: Uint8Array[]; first: number; bytes: number } | undefined;
  const flush = (): void => {
    if (run === undefined) return;
    const last = run.first + run.docs.length - 1;
    if (run.docs.length < MIN_MERGED_RECORDS) {
      for (let i = run.first; i <= last; i++) batches.push({ bytes: records[i] as Uint8Array, first: i, last: i });
    } else {
      const base = seed?.generation === run.generation ? seed.doc : undefined;
      batches.push({
        bytes: encodeWireUpdate(run.generation, undefined, merge(run.docs, base)),
        first: run.first,
        last,
      });
    }
    run = undefined;
  };
  records.forEach((record, i) => {
    const doc = parts(record);
    if (doc === undefined || doc.doc === undefined || doc.withBase) {
      flush();
      batches.push({ bytes: record, first: i, last: i });
      return;
    }
    if (run !== undefined && (run.generation !== doc.generation || run.bytes + record.length > maxBatchBytes)) flush();
    run ??= { generation: doc.generation, docs: [], first: i, bytes: 0 };
    run.docs.push(doc.doc);
    run.bytes += record.length;
  });
  flush();
  return batches;
}

/** The envelope of wire.ts read just far enough: generation, whether a base is there, the Yjs part. */
function parts(record: Uint8Array): { generation: number; withBase: boolean; doc: Uint8Array | undefined } | undefined {
  try {
    const decoder = decoding.createDecoder(record);
    const generation = decoding.readVarUint(decoder);
    const flags = decoding.readVarUint(decoder);
    if ((flags & ~(HAS_BASE | HAS_DOC | BASE_WITH_META)) !== 0) return undefined;
    if ((flags & HAS_BASE) !== 0) decoding.readVarUint8Array(decoder);
    const doc = (flags & HAS_DOC) === 0 ? undefined : decoding.readVarUint8Array(decoder);
    return decoding.hasContent(decoder) ? undefined : { generation, withBase: (flags & HAS_BASE) !== 0, doc };
  } catch {
    return undefined;
  }
}

/**
 * The updates as one: applied to a scratch document (garbage-collected like the store's own documents)
 * and encoded back, which is linear where Y.mergeUpdatesV2 over thousands of small updates is not. With
 * `base`, the scratch starts from it and only what the updates add to it is encoded.
 */
function merge(updates: readonly Uint8Array[], base: Uint8Array | undefined): Uint8Array {
  const scratch = new Y.Doc();
  let since: Uint8Array | undefined;
  if (base !== undefined) {
    Y.applyUpdateV2(scratch, base);
    since = Y.encodeStateVector(scratch);
  }
  for (const update of updates) Y.applyUpdateV2(scratch, update);
  const merged = Y.encodeStateAsUpdateV2(scratch, since);
  scratch.destroy();
  return merged;
}
