// FrameDecoder: incremental decoding of a TCP byte stream, and refusal of frames it cannot trust.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FRAME_HEADER_BYTES, FrameDecoder, encodeFrame, type Frame } from '../../src/cluster/transport/frame-codec.js';
import { HANDSHAKE_FRAME_VERSION, PROTOCOL_RANGE } from '../../src/cluster/transport/protocol-versions.js';
import { ActorTsError } from '../../src/errors.js';
import { PROTOCOL_VERSION } from '../../src/protocol.js';

function header(length: number, version = PROTOCOL_VERSION, kind = 2): Buffer {
  const b = Buffer.alloc(FRAME_HEADER_BYTES);
  b.writeUInt32BE(length, 0);
  b.writeUInt8(version, 4);
  b.writeUInt8(kind, 5);
  return b;
}

function payloads(frames: ReadonlyArray<Frame>): string[] {
  return frames.map((f) => `${f.kind}:${Buffer.from(f.payload).toString('hex')}`);
}

/** Every version this release speaks: the codec must hold at each (issue 35). */
const VERSIONS = Array.from({ length: PROTOCOL_RANGE.max - PROTOCOL_RANGE.min + 1 }, (_, i) => PROTOCOL_RANGE.min + i);

describe('frame codec', () => {
  it.each(VERSIONS)('round-trips frames however the stream is split, at protocol version %i', (version) => {
    const versionOf = (kind: 'handshake' | 'message'): number =>
      kind === 'handshake' ? HANDSHAKE_FRAME_VERSION : version;
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.constantFrom('handshake' as const, 'message' as const), fc.uint8Array({ maxLength: 300 })),
          {
            maxLength: 8,
          },
        ),
        fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 20 }),
        (input, cuts) => {
          const stream = Buffer.concat(
            input.map(([kind, payload]) => encodeFrame(kind, payload, undefined, versionOf(kind))),
          );
          const decoder = new FrameDecoder({ maxFrameBytes: 1024, messageVersion: version });
          const out: Frame[] = [];
          let offset = 0;
          let i = 0;
          while (offset < stream.length) {
            const size = cuts[i++ % cuts.length] ?? 1;
            const result = decoder.push(stream.subarray(offset, offset + size));
            expect(result.ok).toBe(true);
            out.push(...result.frames);
            offset += size;
          }
          expect(payloads(out)).toEqual(input.map(([kind, p]) => `${kind}:${Buffer.from(p).toString('hex')}`));
          expect(decoder.stats()).toEqual({ frames: input.length, bytes: stream.length, errors: 0 });
        },
      ),
    );
  });

  it('refuses an oversized frame from its header alone, before the body arrives, and stays failed', () => {
    const decoder = new FrameDecoder({ maxFrameBytes: 100 });
    const ok = encodeFrame('message', new Uint8Array(10));
    const result = decoder.push(Buffer.concat([ok, header(1_000_000)]));
    expect(result.ok).toBe(false);
    expect(result.frames).toHaveLength(1);
    if (!result.ok) expect(result.error.code).toBe('frame_too_large');
    expect(decoder.failed).toBe(true);
    expect(decoder.stats().errors).toBe(1);
    const later = decoder.push(encodeFrame('message', new Uint8Array(1)));
    expect(later.ok).toBe(false);
    expect(later.frames).toEqual([]);
    expect(decoder.stats().errors).toBe(1);
  });

  it('accepts a frame of exactly the maximum size', () => {
    const decoder = new FrameDecoder({ maxFrameBytes: 100 });
    const result = decoder.push(encodeFrame('message', new Uint8Array(100), 100));
    expect(result.ok).toBe(true);
    expect(result.frames[0]?.payload.byteLength).toBe(100);
  });

  it.each([
    ['a wrong protocol version', header(3, PROTOCOL_VERSION + 1), /protocol version/],
    ['an unknown frame kind', header(3, PROTOCOL_VERSION, 9), /unknown frame kind/],
    ['a length below the header', header(1), /below the header/],
  ])('refuses %s as a corrupt frame', (_name, bytes, message) => {
    const decoder = new FrameDecoder();
    const result = decoder.push(bytes);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error).toBeInstanceOf(ActorTsError);
      expect(result.error.code).toBe('malformed_message');
      expect(result.error.message).toMatch(message);
    }
    expect(decoder.stats().errors).toBe(1);
  });

  it('refuses to encode a payload above the limit', () => {
    expect(() => encodeFrame('message', new Uint8Array(101), 100)).toThrow(/exceeds the maximum frame size of 100/);
    expect(() => new FrameDecoder({ maxFrameBytes: 0 })).toThrow(/maxFrameBytes/);
  });

  it('reports what an incomplete frame holds, and raises its limit only for frames not yet started', () => {
    const decoder = new FrameDecoder({ maxFrameBytes: 16 });
    expect(decoder.push(header(2 + 10)).ok).toBe(true);
    expect(decoder.bufferedBytes).toBe(FRAME_HEADER_BYTES);
    expect(decoder.push(new Uint8Array(10)).frames).toHaveLength(1);
    expect(decoder.bufferedBytes).toBe(0);
    decoder.setMaxFrameBytes(1024);
    const big = decoder.push(Buffer.concat([header(2 + 1000), Buffer.alloc(400)]));
    expect(big).toMatchObject({ ok: true, frames: [] });
    expect(decoder.bufferedBytes).toBe(FRAME_HEADER_BYTES + 400);
    expect(() => decoder.setMaxFrameBytes(0)).toThrow(/maxFrameBytes/);
  });

  it('drops an incomplete frame on discard and refuses everything after it', () => {
    const decoder = new FrameDecoder();
    const frame = encodeFrame('message', new Uint8Array(1000));
    decoder.push(frame.subarray(0, 600));
    expect(decoder.bufferedBytes).toBe(600);
    decoder.discard();
    expect(decoder.bufferedBytes).toBe(0);
    expect(decoder.failed).toBe(true);
    expect(decoder.push(frame.subarray(600))).toMatchObject({ ok: false, frames: [] });
    expect(decoder.bufferedBytes).toBe(0);
  });
});
