// Restart speed: a log of many small updates is replayed as few merged ones. Consecutive records of one
// generation that carry only a document part merge (Yjs merges updates losslessly, and applying is
// order-free), so a replica applies one transaction per batch instead of one per record. A record with a
// base, another generation, or bytes that do not decode stays alone, so its error names it.
import * as decoding from 'lib0/decoding';
import * as Y from 'yjs';
import { encodeWireUpdate } from './wire.js';

/** One update to apply, standing for records first..last (indexes into the input). */
export interface ReplayBatch {
  readonly bytes: Uint8Array;
  readonly first: number;
  readonly last: number;
}

// A run is cut only where it must be: an update of a run depends on the items of the updates before it,
// so a scratch document fed part of a run would hold the rest as pending structs (quadratic to retry).
const DEFAULT_MAX_BATCH_BYTES = 64 * 1024 * 1024;
const DOCUMENT_ONLY = 2;

export function replayBatches(records: readonly Uint8Array[], maxBatchBytes = DEFAULT_MAX_BATCH_BYTES): ReplayBatch[] {
  const batches: ReplayBatch[] = [];
  let run: { generation: number; docs: Uint8Array[]; first: number; bytes: number } | undefined;
  const flush = (): void => {
    if (run === undefined) return;
    const last = run.first + run.docs.length - 1;
    if (run.docs.length === 1) batches.push({ bytes: records[run.first] as Uint8Array, first: run.first, last });
    else batches.push({ bytes: encodeWireUpdate(run.generation, undefined, merge(run.docs)), first: run.first, last });
    run = undefined;
  };
  records.forEach((record, i) => {
    const doc = documentOnly(record);
    if (doc === undefined) {
      flush();
      batches.push({ bytes: record, first: i, last: i });
      return;
    }
    if (run !== undefined && (run.generation !== doc.generation || run.bytes + record.length > maxBatchBytes)) flush();
    run ??= { generation: doc.generation, docs: [], first: i, bytes: 0 };
    run.docs.push(doc.update);
    run.bytes += record.length;
  });
  flush();
  return batches;
}

function documentOnly(record: Uint8Array): { generation: number; update: Uint8Array } | undefined {
  try {
    const decoder = decoding.createDecoder(record);
    const generation = decoding.readVarUint(decoder);
    if (decoding.readVarUint(decoder) !== DOCUMENT_ONLY) return undefined;
    const update = decoding.readVarUint8Array(decoder);
    return decoding.hasContent(decoder) ? undefined : { generation, update };
  } catch {
    return undefined;
  }
}

/**
 * The updates as one: applied to a scratch document (garbage-collected like the store's own documents)
 * and encoded back, which is linear where Y.mergeUpdatesV2 over thousands of small updates is not.
 */
function merge(updates: readonly Uint8Array[]): Uint8Array {
  const scratch = new Y.Doc();
  for (const update of updates) Y.applyUpdateV2(scratch, update);
  const merged = Y.encodeStateAsUpdateV2(scratch);
  scratch.destroy();
  return merged;
}
