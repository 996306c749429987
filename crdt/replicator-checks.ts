// Checks and defaults of the replicator that need none of its state: frame sizes and shapes, peer names,
// and the unref'd anti-entropy timer.
import { PlacementStoreError, describe } from './errors.js';
import type { SyncFrame } from './sync-frame.js';

/** A frame link's frame: its payload size, as the byte limit counts it. */
export function frameSize(frame: SyncFrame): number {
  const payload = frame.kind === 'step1' ? frame.stateVector : frame.update;
  return payload instanceof Uint8Array ? payload.length : 0;
}

/** The checks decodeSyncFrame makes, for a frame that arrived decoded: a known kind and a bounded payload. */
export function checkFrame(frame: SyncFrame, maxBytes: number): SyncFrame {
  if (typeof frame !== 'object' || frame === null)
    throw new PlacementStoreError('invalid_frame', `expected a sync frame, got ${describe(frame)}`);
  const kind: unknown = frame.kind;
  if (kind !== 'step1' && kind !== 'step2' && kind !== 'update') {
    throw new PlacementStoreError('invalid_frame', `unknown sync frame kind ${describe(kind)}`);
  }
  const payload: unknown = frame.kind === 'step1' ? frame.stateVector : frame.update;
  if (!(payload instanceof Uint8Array))
    throw new PlacementStoreError('invalid_frame', `frame payload is ${describe(payload)}, not bytes`);
  if (payload.length > maxBytes) {
    throw new PlacementStoreError(
      'invalid_frame',
      `frame payload of ${payload.length} bytes exceeds the limit of ${maxBytes}`,
    );
  }
  return frame;
}

export function assertPeer(peer: unknown): asserts peer is string {
  if (typeof peer !== 'string' || peer.length === 0) {
    throw new PlacementStoreError('invalid_option', `peer must be a non-empty string, got ${describe(peer)}`);
  }
}

// Unref'd, so an idle replicator never keeps a process alive on its own.
export function defaultSetInterval(callback: () => void, ms: number): unknown {
  const handle = setInterval(callback, ms);
  handle.unref();
  return handle;
}
