// Byte-level helpers of the store's boundary: private copies of caller bytes, state vector validation,
// byte equality, and finding a Yjs top-level type's name.
import * as decoding from 'lib0/decoding';
import type * as Y from 'yjs';
import { PlacementStoreError, describe } from './errors.js';

// A private copy: lib0 views read past a subarray's end into its buffer instead of failing.
export function copyBytes(
  bytes: unknown,
  code: 'malformed_update' | 'malformed_state_vector',
  what: string,
): Uint8Array {
  if (!(bytes instanceof Uint8Array)) {
    throw new PlacementStoreError(code, `${what} must be a Uint8Array, got ${describe(bytes)}`);
  }
  return Uint8Array.from(bytes);
}

/** Throws `malformed_state_vector` unless `bytes` is exactly a Yjs state vector. */
export function checkStateVector(bytes: Uint8Array): void {
  try {
    const decoder = decoding.createDecoder(bytes);
    const entries = decoding.readVarUint(decoder);
    for (let i = 0; i < entries; i++) {
      decoding.readVarUint(decoder);
      decoding.readVarUint(decoder);
    }
    if (decoding.hasContent(decoder)) throw new Error(`${bytes.length - decoder.pos} trailing bytes`);
  } catch (cause) {
    throw new PlacementStoreError(
      'malformed_state_vector',
      `state vector rejected: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function shareName(doc: Y.Doc, type: object): string | undefined {
  for (const [name, shared] of doc.share) if (shared === type) return name;
  return undefined;
}
