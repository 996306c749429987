// Checks and defaults of the replicator that need none of its state: its settings, frame sizes and shapes, peer
// names, the unref'd anti-entropy timer, and the random choice of relay targets.
import { PlacementStoreError, describe } from './errors.js';
import { DEFAULT_YIELD_ABOVE_BYTES } from './frame-inbox.js';
import {
  DEFAULT_ANTI_ENTROPY_INTERVAL_MS,
  DEFAULT_RELAY_FANOUT,
  type PlacementLink,
  type PlacementReplicatorOptions,
} from './replicator-options.js';
import { DEFAULT_MAX_FRAME_BYTES, type SyncFrame } from './sync-frame.js';

/** A frame link's frame: its payload size, as the byte limit counts it. */
export function frameSize(frame: SyncFrame): number {
  const payload: unknown = frame.kind === 'step1' ? frame.stateVector : frame.update;
  const digest: unknown = frame.kind === 'update' ? frame.digest : undefined;
  return (payload instanceof Uint8Array ? payload.length : 0) + (digest instanceof Uint8Array ? digest.length : 0);
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
  const digest: unknown = frame.kind === 'update' ? frame.digest : undefined;
  // Its size and entries are checked when it is decoded (wire.ts decodeDigest), before any work on them.
  if (digest !== undefined && !(digest instanceof Uint8Array))
    throw new PlacementStoreError('invalid_frame', `frame digest is ${describe(digest)}, not bytes`);
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

/** Keeps `count` random elements of `items` in place (a partial Fisher-Yates shuffle). */
export function pickRandom(items: string[], count: number, random: () => number): void {
  if (items.length <= count) return;
  for (let i = 0; i < count; i++) {
    const j = i + Math.min(items.length - i - 1, Math.floor(random() * (items.length - i)));
    [items[i], items[j]] = [items[j] as string, items[i] as string];
  }
  items.length = count;
}

/** A replicator's settings with their defaults, each checked; `invalid_option` for the first one out of range. */
export function checkSettings(
  options: PlacementReplicatorOptions,
  link: PlacementLink,
): { interval: number; maxFrameBytes: number; relayFanout: number; yieldAboveBytes: number } {
  const interval = options.antiEntropyIntervalMs ?? DEFAULT_ANTI_ENTROPY_INTERVAL_MS;
  if (!Number.isFinite(interval) || interval <= 0)
    throw invalidOption(`antiEntropyIntervalMs must be a positive number, got ${describe(interval)}`);
  const maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  if (!Number.isSafeInteger(maxFrameBytes) || maxFrameBytes <= 0)
    throw invalidOption(`maxFrameBytes must be a positive integer, got ${describe(maxFrameBytes)}`);
  if (
    typeof link !== 'object' ||
    link === null ||
    (!('send' in link && typeof link.send === 'function') &&
      !('sendFrame' in link && typeof link.sendFrame === 'function'))
  )
    throw invalidOption('link must have a send(peer, bytes) or a sendFrame(peer, frame) function');
  const relayFanout = options.relayFanout ?? DEFAULT_RELAY_FANOUT;
  if (relayFanout !== Infinity && (!Number.isSafeInteger(relayFanout) || relayFanout < 0))
    throw invalidOption(`relayFanout must be a non-negative integer or Infinity, got ${describe(relayFanout)}`);
  const yieldAboveBytes = options.yieldAboveBytes ?? DEFAULT_YIELD_ABOVE_BYTES;
  if (!Number.isSafeInteger(yieldAboveBytes) || yieldAboveBytes < 0)
    throw invalidOption(`yieldAboveBytes must be a non-negative integer, got ${describe(yieldAboveBytes)}`);
  return { interval, maxFrameBytes, relayFanout, yieldAboveBytes };
}

function invalidOption(message: string): PlacementStoreError {
  return new PlacementStoreError('invalid_option', message);
}
