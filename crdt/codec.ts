// The one Yjs update encoding the store uses on the wire and at rest (every peer must agree on it).
// V2, chosen by measurement (Yjs 13.6.33, Node 20, per-writer slots with pruning, 5 writers synced every
// 1,000 writes): encoded state after 100,000 overwrites of 1,000 shards is 1,045,454 bytes in V1 and
// 382,697 bytes in V2 (2.7x smaller); one placement update is 54-78 bytes in V1 and 61-89 bytes in V2
// (overwrite of an own slot 61, first write of a key 84). Full syncs dominate the bytes, so V2 wins.
// update-guard.ts walks the V2 format; switching encodings means switching that walk too.
import * as Y from 'yjs';

export const UPDATE_EVENT = 'updateV2';

export function applyUpdate(doc: Y.Doc, update: Uint8Array, origin: unknown): void {
  Y.applyUpdateV2(doc, update, origin);
}

export function encodeStateAsUpdate(doc: Y.Doc, stateVector?: Uint8Array): Uint8Array {
  return Y.encodeStateAsUpdateV2(doc, stateVector);
}
