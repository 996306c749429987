// FrameDecoder: incremental decoding of a TCP byte stream, and refusal of frames it cannot trust.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FRAME_HEADER_BYTES,
  FrameDecoder,
  encodeFrame,
  writeFrameHeader,
  type Frame,
} from '../../src/cluster/transport/frame-codec.js';
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

  it('yields the same large frames for any cutting of the stream, each payload owning its bytes, and holds a cut-off tail', () => {
    // Large frames as a hand-off's state chunks make them, with small ones between: the stream cut at any points
    // (a header split over reads, a frame and the start of the next in one read) decodes to the same frames; a
    // frame that spanned reads is one buffer of its own (nothing of its neighbours), and a stream cut short leaves
    // the incomplete frame held, not delivered.
    const frameArb = fc.tuple(
      fc.constantFrom('handshake' as const, 'message' as const),
      fc.integer({ min: 0, max: 200_000 }),
      fc.integer({ min: 0, max: 255 }),
    );
    fc.assert(
      fc.property(
        fc.array(frameArb, { minLength: 1, maxLength: 5 }),
        fc.array(fc.integer({ min: 1, max: 70_000 }), { minLength: 1, maxLength: 12 }),
        fc.nat(),
        (input, cuts, cutShort) => {
          const payloadsIn = input.map(([, size, fill]) => Buffer.alloc(size, fill));
          const frames = input.map(([kind], i) =>
            encodeFrame(
              kind,
              payloadsIn[i] as Buffer,
              256 * 1024,
              kind === 'handshake' ? HANDSHAKE_FRAME_VERSION : PROTOCOL_VERSION,
            ),
          );
          const stream = Buffer.concat(frames);
          const end = stream.length - (cutShort % Math.min(stream.length, (frames.at(-1) as Buffer).length + 1));
          const decoder = new FrameDecoder({ maxFrameBytes: 256 * 1024 });
          const out: Frame[] = [];
          for (let offset = 0, i = 0; offset < end; i++) {
            const size = Math.min(cuts[i % cuts.length] as number, end - offset);
            const result = decoder.push(stream.subarray(offset, offset + size));
            expect(result.ok).toBe(true);
            out.push(...result.frames);
            offset += size;
          }
          const whole = end === stream.length ? input.length : input.length - 1;
          expect(out.map((f) => f.kind)).toEqual(input.slice(0, whole).map(([kind]) => kind));
          out.forEach((frame, i) => {
            expect(Buffer.compare(Buffer.from(frame.payload), payloadsIn[i] as Buffer)).toBe(0);
            // A view of the stream when it arrived in one read, else a buffer of exactly the frame.
            const shared = frame.payload.buffer === stream.buffer;
            if (!shared)
              expect(frame.payload.buffer.byteLength).toBeLessThanOrEqual(
                Math.max(8192, frame.payload.byteLength + FRAME_HEADER_BYTES),
              );
          });
          expect(decoder.bufferedBytes).toBe(end - frames.slice(0, whole).reduce((n, f) => n + f.length, 0));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('decodes a frame whose header was written in place, behind its payload', () => {
    const frame = Buffer.alloc(FRAME_HEADER_BYTES + 3);
    frame.set([7, 8, 9], FRAME_HEADER_BYTES);
    writeFrameHeader(frame, 'message', PROTOCOL_VERSION);
    expect(frame).toEqual(encodeFrame('message', new Uint8Array([7, 8, 9])));
    const result = new FrameDecoder().push(frame);
    expect(payloads(result.frames)).toEqual(['message:070809']);
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
