// Replicator wire frames: round trips, y-protocols shapes, and rejection of bad framing.
import fc from 'fast-check';
import * as encoding from 'lib0/encoding';
import { describe, expect, it } from 'vitest';
import * as syncProtocol from 'y-protocols/sync';
import * as Y from 'yjs';
import {
  DEFAULT_MAX_FRAME_BYTES,
  PlacementStoreError,
  decodeSyncFrame,
  encodeSyncFrame,
  type SyncFrame,
} from '../../crdt/index.js';
import { MESSAGE_DIGEST } from '../../crdt/sync-frame.js';
import { decodeWireUpdate } from '../../crdt/wire.js';
import { emptyUpdateFor, encodeDigest } from '../../crdt/wire-digest.js';

const frameArb: fc.Arbitrary<SyncFrame> = fc.oneof(
  fc.uint8Array({ maxLength: 300 }).map((stateVector) => ({ kind: 'step1' as const, stateVector })),
  fc.uint8Array({ maxLength: 300 }).map((update) => ({ kind: 'step2' as const, update })),
  fc.uint8Array({ maxLength: 300 }).map((update) => ({ kind: 'update' as const, update })),
  // A digest travels alone on a byte link; its update is the empty one it is read back with.
  fc
    .uint8Array({ maxLength: 300 })
    .map((digest) => ({ kind: 'update' as const, update: emptyUpdateFor(digest), digest })),
);

function code(action: () => unknown): string | undefined {
  try {
    action();
  } catch (error) {
    return error instanceof PlacementStoreError ? error.code : 'untyped';
  }
  return undefined;
}

describe('sync frames', () => {
  it('round-trip every kind and payload', () => {
    fc.assert(
      fc.property(frameArb, (frame) => {
        expect(decodeSyncFrame(encodeSyncFrame(frame))).toEqual(frame);
      }),
      { numRuns: 300 },
    );
  });

  it('use the y-protocols sync message shapes', () => {
    const doc = new Y.Doc();
    doc.getMap('T').set('k', 1);
    const step1 = encoding.createEncoder();
    syncProtocol.writeSyncStep1(step1, doc);
    expect(encodeSyncFrame({ kind: 'step1', stateVector: Y.encodeStateVector(doc) })).toEqual(
      encoding.toUint8Array(step1),
    );
    const update = Y.encodeStateAsUpdate(doc);
    const msg = encoding.createEncoder();
    syncProtocol.writeUpdate(msg, update);
    expect(encodeSyncFrame({ kind: 'update', update })).toEqual(encoding.toUint8Array(msg));
    expect(encodeSyncFrame({ kind: 'step2', update })[0]).toBe(syncProtocol.messageYjsSyncStep2);
  });

  it('carry a digest as message type 3 with the digest alone, read back with an empty update of its generation', () => {
    const digest = encodeDigest({ generation: 4, clocks: new Map([[77, 3]]) });
    const bytes = encodeSyncFrame({ kind: 'update', update: new Uint8Array([9, 9]), digest });
    expect(bytes[0]).toBe(MESSAGE_DIGEST);
    const frame = decodeSyncFrame(bytes);
    expect(frame.kind === 'update' && frame.digest).toEqual(digest);
    expect(frame.kind === 'update' && decodeWireUpdate(frame.update, 0)).toEqual({
      generation: 4,
      base: undefined,
      doc: undefined,
    });
  });

  it('hands out a copy of the payload', () => {
    const bytes = encodeSyncFrame({ kind: 'update', update: new Uint8Array([1, 2, 3]) });
    const frame = decodeSyncFrame(bytes);
    bytes.fill(0);
    expect(frame.kind === 'update' && [...frame.update]).toEqual([1, 2, 3]);
  });

  it('rejects bad framing with invalid_frame', () => {
    const good = encodeSyncFrame({ kind: 'step2', update: new Uint8Array([9, 9, 9]) });
    expect(code(() => decodeSyncFrame(new Uint8Array()))).toBe('invalid_frame');
    expect(code(() => decodeSyncFrame(new Uint8Array([4, 0])))).toBe('invalid_frame');
    expect(code(() => decodeSyncFrame(good.slice(0, -1)))).toBe('invalid_frame');
    expect(code(() => decodeSyncFrame(new Uint8Array([...good, 0])))).toBe('invalid_frame');
    expect(code(() => decodeSyncFrame(new Uint8Array([0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])))).toBe(
      'invalid_frame',
    );
    expect(code(() => decodeSyncFrame(good, good.length - 1))).toBe('invalid_frame');
    expect(code(() => decodeSyncFrame(new Uint8Array([0x80, 0x00, 0])))).toBe('invalid_frame');
    expect(code(() => decodeSyncFrame(new Uint8Array([2, 0x81, 0x00, 7])))).toBe('invalid_frame');
    expect(code(() => decodeSyncFrame([0, 0] as unknown as Uint8Array))).toBe('invalid_frame');
    expect(code(() => encodeSyncFrame({ kind: 'nope' } as unknown as SyncFrame))).toBe('invalid_frame');
    expect(DEFAULT_MAX_FRAME_BYTES).toBe(16 * 1024 * 1024);
  });

  it('any byte string either decodes to a frame that re-encodes to it, or is rejected as invalid_frame', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 40 }),
          fc.uint8Array({ maxLength: 6 }).map((b) => new Uint8Array([0x80, 0x00, ...b])),
        ),
        (bytes) => {
          let frame: SyncFrame;
          try {
            frame = decodeSyncFrame(bytes);
          } catch (error) {
            expect((error as PlacementStoreError).code).toBe('invalid_frame');
            return;
          }
          expect(encodeSyncFrame(frame)).toEqual(bytes);
        },
      ),
      { numRuns: 300 },
    );
  });
});
