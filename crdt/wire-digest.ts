// The digest's encoding, beside the store's other encodings in wire.ts (apart only so that neither file passes
// the length cap): which versions of some writers a replica holds, what digest-relay.ts relays instead of an
// update's content, and how it compares with this replica's state vector.
import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';
import * as Y from 'yjs';
import { PlacementStoreError } from './errors.js';
import {
  decodeWireStateVector,
  decodeWireUpdate,
  encodeWireUpdate,
  generationOf,
  readGeneration,
  strictly,
} from './wire.js';

/**
 * A digest: which versions of some writers a replica holds, relayed instead of the update's content (see
 * digest-relay.ts). `varUint generation | varUint count | count x (varUint Yjs client id, varUint clock)`, client
 * ids strictly ascending, so one set of versions has one encoding and a duplicate entry cannot be sent.
 */
export interface WireDigest {
  readonly generation: number;
  readonly clocks: ReadonlyMap<number, number>;
}

/** Entries one digest may name: far above the writers one update touches, bounding the work a hostile one causes. */
export const MAX_DIGEST_CLIENTS = 256;
/** Bytes one digest may take: MAX_DIGEST_CLIENTS entries of two 64-bit varints and the header, rounded up. */
export const MAX_DIGEST_BYTES = 8 + MAX_DIGEST_CLIENTS * 20;

export function encodeDigest(digest: WireDigest): Uint8Array {
  const clients = [...digest.clocks.keys()].sort((a, b) => a - b).slice(0, MAX_DIGEST_CLIENTS);
  return encoding.encode((encoder) => {
    encoding.writeVarUint(encoder, digest.generation);
    encoding.writeVarUint(encoder, clients.length);
    for (const client of clients) {
      encoding.writeVarUint(encoder, client);
      encoding.writeVarUint(encoder, digest.clocks.get(client) as number);
    }
  });
}

/** Decodes and validates a peer's digest: its size before anything is read, then every entry. */
export function decodeDigest(bytes: Uint8Array): WireDigest {
  if (bytes.length > MAX_DIGEST_BYTES) {
    throw new PlacementStoreError('malformed_digest', `digest of ${bytes.length} bytes exceeds ${MAX_DIGEST_BYTES}`);
  }
  return strictly(bytes, 'malformed_digest', 'digest', (decoder) => {
    const generation = readGeneration(decoder);
    const count = decoding.readVarUint(decoder);
    if (count > MAX_DIGEST_CLIENTS) throw new Error(`${count} entries, more than ${MAX_DIGEST_CLIENTS}`);
    const clocks = new Map<number, number>();
    let previous = -1;
    for (let i = 0; i < count; i++) {
      const client = decoding.readVarUint(decoder);
      const clock = decoding.readVarUint(decoder);
      if (!Number.isSafeInteger(client) || !Number.isSafeInteger(clock)) throw new Error('impossible entry');
      if (client <= previous) throw new Error('client ids not strictly ascending');
      previous = client;
      clocks.set(client, clock);
    }
    return { generation, clocks };
  });
}

/**
 * The digest a replica relays after applying `update`: for each writer whose structs the update carries, the
 * clock this replica now holds (what it has, not what the update claimed: a struct waiting for a missing
 * predecessor is not offered). Undefined when the update carries no structs (a deletion only, or a base).
 */
export function digestAfter(update: Uint8Array, localStateVector: Uint8Array): Uint8Array | undefined {
  // This replica's own update event: trusted, and never with a base.
  const doc = decodeWireUpdate(update, Number.MAX_SAFE_INTEGER).doc;
  if (doc === undefined) return undefined;
  const local = decodeWireStateVector(localStateVector);
  const have = Y.decodeStateVector(local.doc);
  const clocks = new Map<number, number>();
  for (const [client, clock] of Y.parseUpdateMetaV2(doc).to) {
    const held = have.get(client) ?? 0;
    if (clock > 0 && held > 0) clocks.set(client, held);
  }
  return clocks.size === 0 ? undefined : encodeDigest({ generation: local.generation, clocks });
}

/**
 * What a digest shows this replica lacks: a later generation, or per writer the clock the digest's sender holds
 * where this replica holds less. A digest of an earlier generation shows nothing (its sender is behind; a sync
 * tells it).
 */
export function lackedBy(
  localStateVector: Uint8Array,
  digest: WireDigest,
): { readonly laterGeneration: boolean; readonly clocks: ReadonlyMap<number, number> } {
  const local = decodeWireStateVector(localStateVector);
  if (digest.generation !== local.generation) {
    return { laterGeneration: digest.generation > local.generation, clocks: new Map() };
  }
  const have = Y.decodeStateVector(local.doc);
  const clocks = new Map<number, number>();
  for (const [client, clock] of digest.clocks) if (clock > (have.get(client) ?? 0)) clocks.set(client, clock);
  return { laterGeneration: false, clocks };
}

/**
 * The update a digest rides in for a peer that knows no digests: no base and no document, in the digest's
 * generation, so such a peer applies nothing (sync-messages.ts).
 */
export function emptyUpdateFor(digest: Uint8Array): Uint8Array {
  return encodeWireUpdate(generationOf(digest) ?? 0, undefined, undefined);
}
