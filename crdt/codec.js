// The one Yjs update encoding the store uses on the wire and at rest (every peer must agree on it).
// V2: full syncs dominate the bytes, and V2 encodes a placement state several times smaller than V1
// while single updates cost about the same (figures: bench/README.md, "Figures behind design choices").
// update-guard.ts walks the V2 format; switching encodings means switching that walk too.
import * as Y from 'yjs';
export const UPDATE_EVENT = 'updateV2';
export function applyUpdate(doc, update, origin) {
    Y.applyUpdateV2(doc, update, origin);
}
export function encodeStateAsUpdate(doc, stateVector) {
    return Y.encodeStateAsUpdateV2(doc, stateVector);
}
//# sourceMappingURL=codec.js.map