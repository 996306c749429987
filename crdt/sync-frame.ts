// The replicator's wire frames, in the y-protocols sync shapes: varUint message type (0 = sync step 1,
// 1 = sync step 2, 2 = update, and 3 = digest, which y-protocols lacks) followed by one varUint8Array payload.
// Payloads are the store's own encoding (state vector, Yjs V2 update, or digest: wire.ts), so these frames do
// not talk to y-websocket peers. A byte-link peer of a release before digests rejects a digest frame (counted,
// nothing else: anti-entropy still repairs); the cluster's message family carries digests compatibly instead.
import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';
import { messageYjsSyncStep1, messageYjsSyncStep2, messageYjsUpdate } from 'y-protocols/sync';
import { PlacementStoreError, describe } from './errors.js';
import { emptyUpdateFor } from './wire-digest.js';

/**
 * One message of the store's sync protocol: a state vector (step 1), the updates the peer lacks (step 2), or a pushed
 * update. An update frame with a `digest` is a digest instead (which versions the sender holds, relayed in place of
 * the content: digest-relay.ts); its `update` is then an empty one (wire.ts emptyUpdateFor), which a replica that
 * knows no digests applies to no effect.
 */
export type SyncFrame =
  | { readonly kind: 'step1'; readonly stateVector: Uint8Array }
  | { readonly kind: 'step2'; readonly update: Uint8Array }
  | { readonly kind: 'update'; readonly update: Uint8Array; readonly digest?: Uint8Array };

/** The message type of a digest frame on a byte link (its payload is the digest); y-protocols' sync types are 0-2. */
export const MESSAGE_DIGEST = 3;

/** Default upper bound of one frame: far above a full state, still a bound (bench/README.md has the figure). */
export const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;

/** Encodes a sync frame into the bytes a PlacementByteLink carries (y-protocols sync message shapes). */
export function encodeSyncFrame(frame: SyncFrame): Uint8Array {
  const encoder = encoding.createEncoder();
  switch (frame.kind) {
    case 'step1':
      encoding.writeVarUint(encoder, messageYjsSyncStep1);
      encoding.writeVarUint8Array(encoder, frame.stateVector);
      break;
    case 'step2':
      encoding.writeVarUint(encoder, messageYjsSyncStep2);
      encoding.writeVarUint8Array(encoder, frame.update);
      break;
    case 'update':
      encoding.writeVarUint(encoder, frame.digest === undefined ? messageYjsUpdate : MESSAGE_DIGEST);
      encoding.writeVarUint8Array(encoder, frame.digest ?? frame.update);
      break;
    default:
      throw new PlacementStoreError(
        'invalid_frame',
        `unknown sync frame kind ${describe((frame as { kind: unknown }).kind)}`,
      );
  }
  return encoding.toUint8Array(encoder);
}

/**
 * Decodes one frame, checking only the framing (type, exact length, size limit); the payload is checked
 * by the store when it is used. The payload is a copy, so the caller may reuse `bytes`.
 */
export function decodeSyncFrame(bytes: Uint8Array, maxBytes: number = DEFAULT_MAX_FRAME_BYTES): SyncFrame {
  if (!(bytes instanceof Uint8Array)) throw invalid(`expected a Uint8Array, got ${describe(bytes)}`);
  if (bytes.length > maxBytes) throw invalid(`frame of ${bytes.length} bytes exceeds the limit of ${maxBytes}`);
  const decoder = decoding.createDecoder(bytes);
  let type: number;
  let length: number;
  try {
    type = decoding.readVarUint(decoder);
    length = decoding.readVarUint(decoder);
  } catch {
    throw invalid(`truncated header (${bytes.length} bytes)`);
  }
  // One encoding per frame: padded varints (0x80 0x00 for 0) would let equal frames differ on the wire.
  const header = encoding.encode((e) => {
    encoding.writeVarUint(e, type);
    encoding.writeVarUint(e, length);
  });
  if (header.length !== decoder.pos) throw invalid('header uses non-minimal varint encoding');
  const rest = bytes.length - decoder.pos;
  if (length !== rest) {
    throw invalid(`payload length ${length} does not match the ${rest} bytes that follow the header`);
  }
  const payload = bytes.slice(decoder.pos);
  switch (type) {
    case messageYjsSyncStep1:
      return { kind: 'step1', stateVector: payload };
    case messageYjsSyncStep2:
      return { kind: 'step2', update: payload };
    case messageYjsUpdate:
      return { kind: 'update', update: payload };
    case MESSAGE_DIGEST:
      return { kind: 'update', update: emptyUpdateFor(payload), digest: payload };
    default:
      throw invalid(`unknown message type ${type}`);
  }
}

function invalid(reason: string): PlacementStoreError {
  return new PlacementStoreError('invalid_frame', `sync frame rejected: ${reason}`);
}
