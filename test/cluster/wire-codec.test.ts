// The message codec at the edge of the network: msgpack is pre-scanned against a budget before msgpackr
// materialises anything, msgpackr's extensions (structured clone, records, sets, dates) never decode, and
// whatever bytes arrive, decoding neither throws nor does work beyond the budget. The sending side encodes a
// message object once and remembers which registries' parse its bytes passed.
import fc from 'fast-check';
import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { CLUSTER_MESSAGES } from '../../src/cluster/membership/messages.js';
import {
  DEFAULT_DECODE_LIMITS,
  decodeFrameValue,
  decodeMessage,
  decodeValue,
  encodeCheckedMessage,
  encodeMessage,
  encodeMessageFrameOnce,
  encodeMessageOnce,
  encodeValue,
  messageCodecStats,
} from '../../src/cluster/transport/message-codec.js';
import {
  FRAME_HEADER_BYTES,
  FrameDecoder,
  PROTOCOL_VERSION,
  outgoingAtVersion,
} from '../../src/cluster/transport/frame-codec.js';
import { bytesAt, scanMsgpack, type DecodeConfig } from '../../src/cluster/transport/msgpack-scan.js';
import { FamilyRegistry } from '../../src/cluster/transport/wire-message.js';
import { MESSAGE_FAMILIES } from '../../src/protocol.js';
import { SHARDING_MESSAGES } from '../../src/sharding/protocol/messages.js';

const ALL = new FamilyRegistry();
for (const family of MESSAGE_FAMILIES) ALL.register(family);

/** A graph of 2^levels leaves in a few hundred bytes: every level references the previous one twice. */
function sharedGraph(levels: number): unknown {
  let node: unknown = ['leaf'];
  for (let i = 0; i < levels; i++) node = { l: node, r: node };
  return node;
}

/** What a hostile peer sends: an entity envelope whose payload is a structured-clone reference bomb. */
function referenceBomb(levels: number): Uint8Array {
  const cloner = new Packr({ structuredClone: true, useRecords: false });
  return cloner.pack({
    type: 'EntityEnvelope',
    typeName: 'Counter',
    shardId: 1,
    entityId: 'e',
    payload: sharedGraph(levels),
    hops: 0,
  });
}

const LIMITS: DecodeConfig = { maxDepth: 4, maxElements: 20, maxStringBytes: 8, maxBinaryBytes: 16 };

describe('message codec', () => {
  it('refuses a structured-clone reference bomb before decoding it (432 bytes that decoded to 2^26 leaves)', () => {
    const bytes = referenceBomb(26);
    expect(bytes.byteLength).toBeLessThan(1024);
    expect(decodeValue(bytes)).toEqual({ ok: false, reason: 'extension types are not part of the protocol' });
    expect(decodeMessage(bytes, ALL)).toBeUndefined();
  });

  it.each([
    [
      'record definition (msgpackr records)',
      new Packr({ useRecords: true }).pack({ type: 'Heartbeat', sequence: 1, incarnation: 'x' }),
    ],
    ['Set (structured clone)', new Packr({ structuredClone: true }).pack({ type: 'Heartbeat', s: new Set([1]) })],
    ['Date (timestamp extension)', encodeValue({ type: 'Heartbeat', at: new Date(0) })],
    ['Error (moreTypes)', new Packr({ moreTypes: true }).pack({ type: 'Heartbeat', e: new Error('x') })],
  ])('refuses a %s', (_name, bytes) => {
    expect(decodeValue(bytes).ok).toBe(false);
  });

  it("admits msgpackr's undefined, and plain protocol values round-trip", () => {
    expect(decodeValue(encodeValue({ a: undefined, b: [1, -1, 2 ** 40, 0.5, 'x', null, true] }))).toEqual({
      ok: true,
      value: { a: undefined, b: [1, -1, 2 ** 40, 0.5, 'x', null, true] },
    });
    const decoded = decodeMessage(encodeMessage({ type: 'PlacementUpdate', update: new Uint8Array([9, 8, 7]) }), ALL);
    expect(decoded?.type).toBe('PlacementUpdate');
    expect([...((decoded as { update?: Uint8Array } | undefined)?.update ?? [])]).toEqual([9, 8, 7]);
  });

  it('checks every budget before the work it bounds', () => {
    const nest = (depth: number): unknown => (depth === 0 ? 1 : [nest(depth - 1)]);
    expect(scanMsgpack(encodeValue(nest(4)), LIMITS)).toBeUndefined();
    expect(scanMsgpack(encodeValue(nest(5)), LIMITS)).toMatch(/deeper than 4/);
    expect(scanMsgpack(encodeValue(Array(20).fill(0)), LIMITS)).toBeUndefined();
    expect(scanMsgpack(encodeValue(Array(21).fill(0)), LIMITS)).toMatch(/more than 20 elements/);
    expect(scanMsgpack(encodeValue('x'.repeat(9)), LIMITS)).toMatch(/string of 9 bytes/);
    expect(scanMsgpack(encodeValue(new Uint8Array(17)), LIMITS)).toMatch(/binary of 17 bytes/);
    // An array32 header claiming 2^32-1 elements in 5 bytes: msgpackr would allocate for the claim.
    expect(scanMsgpack(Uint8Array.of(0xdd, 0xff, 0xff, 0xff, 0xff))).toMatch(/more than 500000 elements/);
    expect(scanMsgpack(Uint8Array.of(0xdd, 0x00, 0x00, 0x01, 0x00, 0xc0))).toMatch(/larger than the buffer/);
    // Lengths are unsigned, their top bit included (a signed read would make them negative and pass the bounds).
    expect(scanMsgpack(Uint8Array.of(0xc6, 0x80, 0x00, 0x00, 0x01, 0x00))).toMatch(/binary of 2147483649 bytes/);
    expect(scanMsgpack(Uint8Array.of(0xda, 0x80, 0x00, 0x41), LIMITS)).toMatch(/string of 32768 bytes/);
    expect(scanMsgpack(Uint8Array.of(0xc5, 0x01, 0x02, ...new Uint8Array(258)))).toBeUndefined();
    expect(scanMsgpack(Uint8Array.of(0xdb, 0x00, 0x00, 0x10, 0x00, 0x41))).toMatch(/truncated/);
    expect(scanMsgpack(Uint8Array.of(0xc0, 0xc0))).toMatch(/trailing/);
    expect(scanMsgpack(Uint8Array.of(0xc1))).toMatch(/0xc1/);
    expect(scanMsgpack(new Uint8Array(0))).toMatch(/truncated/);
  });

  it('keeps a decoded graph within the element budget: 2^26 leaves cannot be spelled out in a frame either', () => {
    // Without references the same payload needs elements per leaf: 17 levels already exceed the default budget.
    const bytes = encodeValue(sharedGraph(17));
    expect(decodeValue(bytes)).toMatchObject({
      ok: false,
      reason: `more than ${DEFAULT_DECODE_LIMITS.maxElements} elements`,
    });
  });

  it('never throws on arbitrary bytes, and what it admits is exactly what msgpackr decodes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const result = decodeValue(bytes);
        if (result.ok) expect(scanMsgpack(bytes)).toBeUndefined();
        expect(decodeMessage(bytes, ALL)).toSatisfy((m: unknown) => m === undefined || typeof m === 'object');
      }),
      { numRuns: 2000 },
    );
  });

  it('admits every plain value the encoder produces and decodes it unchanged', () => {
    const plain = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.constant(null),
        fc.boolean(),
        fc.integer(),
        fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)),
        fc.string(),
        fc.uint8Array({ maxLength: 40 }),
        fc.array(tie('value'), { maxLength: 5 }),
        fc.dictionary(
          fc.string().filter((k) => k !== '__proto__'),
          tie('value'),
          { maxKeys: 5 },
        ),
      ),
    })).value;
    fc.assert(
      fc.property(plain, (value) => {
        const bytes = encodeValue(value);
        expect(scanMsgpack(bytes)).toBeUndefined();
        const decoded = decodeValue(bytes);
        // Re-encoding what was decoded gives the same bytes (msgpackr decodes binaries as Buffers, equal bytes).
        expect(decoded.ok && Buffer.from(encodeValue(decoded.value)).equals(Buffer.from(bytes))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('only registered families parse, and a family cannot relabel a message as another type', () => {
    const cluster = new FamilyRegistry();
    cluster.register(CLUSTER_MESSAGES);
    const hb = encodeMessage({ type: 'Heartbeat', sequence: 1, incarnation: 'x' });
    const ask = encodeMessage({ type: 'GetShardHome', typeName: 'Counter', shardId: 1 });
    expect(decodeMessage(hb, cluster)).toEqual({ type: 'Heartbeat', sequence: 1, incarnation: 'x' });
    expect(decodeMessage(ask, cluster)).toBeUndefined();
    const liar = new FamilyRegistry();
    liar.register({ name: 'liar', types: new Set(['Heartbeat']), parse: () => ({ type: 'GetShardHome' }) });
    expect(decodeMessage(hb, liar)).toBeUndefined();
    const throwing = new FamilyRegistry();
    throwing.register({
      ...SHARDING_MESSAGES,
      name: 'throwing',
      parse: () => {
        throw new Error('bug');
      },
    });
    expect(decodeMessage(ask, throwing)).toBeUndefined();
  });

  it('keeps a small encoding while it is among the last 8 sent, a large one for as long as its message lives', () => {
    const small = { type: 'Heartbeat', sequence: 4, incarnation: 'y' };
    const large = { type: 'PlacementUpdate', update: new Uint8Array(8_192) };
    const others = (n: number): void => {
      for (let i = 0; i < n; i++) encodeMessageOnce({ type: 'Heartbeat', sequence: i, incarnation: 'z' });
    };
    const encodesOf = (send: () => void): number => {
      const before = messageCodecStats().encodes;
      send();
      return messageCodecStats().encodes - before;
    };
    expect(encodesOf(() => encodeMessageOnce(small))).toBe(1);
    expect(encodesOf(() => encodeMessageOnce(large))).toBe(1);
    others(7);
    // Sent again within 8: reused, and kept from now on like any message sent twice.
    expect(encodesOf(() => encodeMessageOnce(small))).toBe(0);
    others(20);
    expect(encodesOf(() => encodeMessageOnce(small))).toBe(0);
    expect(encodesOf(() => encodeMessageOnce(large))).toBe(0);
    // A small one-off pushed out by 8 others is encoded again.
    const once = { type: 'Heartbeat', sequence: 5, incarnation: 'y' };
    encodeMessageOnce(once);
    others(8);
    expect(encodesOf(() => encodeMessageOnce(once))).toBe(1);
  });

  it('encodes a message object once, into bytes of their own, and another object (even an equal one) again', () => {
    const message = { type: 'Heartbeat', sequence: 3, incarnation: 'x' };
    const before = messageCodecStats();
    const first = encodeMessageOnce(message);
    expect(encodeMessageOnce(message)).toBe(first);
    expect(messageCodecStats().encodes - before.encodes).toBe(1);
    expect(Buffer.from(first)).toEqual(Buffer.from(encodeMessage(message)));
    // Not a view into msgpackr's working buffer, which it would keep alive as long as the message lives: the
    // bytes of its own frame, header then message.
    const { head: frame, tail } = encodeMessageFrameOnce(message);
    expect(tail).toBeUndefined();
    expect(frame.buffer).toBe(first.buffer);
    expect(frame.buffer.byteLength).toBe(FRAME_HEADER_BYTES + first.byteLength);
    expect(frame.subarray(FRAME_HEADER_BYTES)).toEqual(Buffer.from(first));
    expect(new FrameDecoder().push(frame).frames).toEqual([{ kind: 'message', payload: Buffer.from(first) }]);
    const equal = { ...message };
    expect(encodeMessageOnce(equal)).not.toBe(first);
    expect(decodeMessage(first, ALL)).toEqual(message);
  });

  it('frames a large message where msgpackr wrote it, within eight times its size (else copied), and decodes it the same', () => {
    const states = Buffer.alloc(210 * 1024, 7);
    // The binary is not the last field: the message is encoded whole (see the next test for the other case).
    const message = { type: 'Heartbeat', states, sequence: 1, incarnation: 'x' };
    const before = messageCodecStats();
    const encoded = encodeMessageFrameOnce(message);
    const frame = encoded.head;
    expect(encoded.tail).toBeUndefined();
    expect(encodeMessageFrameOnce(message)).toBe(encoded);
    expect(messageCodecStats().encodes - before.encodes).toBe(1);
    // Kept where msgpackr wrote it, or (its buffer grown larger by an earlier test's message) a copy of its own.
    const kept = frame.buffer.byteLength > frame.byteLength;
    expect(kept ? frame.buffer.byteLength <= 8 * frame.byteLength : frame.byteOffset === 0).toBe(true);
    const [received] = new FrameDecoder().push(frame).frames;
    expect(Buffer.compare(received?.payload ?? Buffer.alloc(0), encodeMessage(message))).toBe(0);
    // Later encodings never write over it (msgpackr only writes past what it returned, or into a new buffer).
    for (let i = 0; i < 20; i++) encodeMessageOnce({ ...message, sequence: i + 2 });
    const decoded = decodeValue(frame.subarray(FRAME_HEADER_BYTES));
    if (!decoded.ok) throw new Error(decoded.reason);
    expect(Buffer.compare((decoded.value as typeof message).states, states)).toBe(0);
  });

  it('frames a message ending with a large binary as the rest, then that binary itself: the same bytes', () => {
    const sizes = fc.integer({ min: 60 * 1024, max: 70 * 1024 });
    fc.assert(
      fc.property(sizes, fc.string({ maxLength: 20 }), fc.boolean(), (size, text, buffer) => {
        const binary = buffer ? Buffer.alloc(size, 3) : new Uint8Array(size).fill(5);
        const message = { type: 'Heartbeat', sequence: size, text, states: binary };
        const frame = encodeMessageFrameOnce(message);
        const whole = encodeMessage(message);
        // Split from 64 KiB: the tail is the message's own binary, not a copy.
        expect(frame.tail === undefined).toBe(size < 64 * 1024);
        if (frame.tail !== undefined) expect(frame.tail).toBe(binary);
        const joined = Buffer.concat([frame.head, frame.tail ?? new Uint8Array(0)]);
        expect(joined.byteLength).toBe(frame.byteLength);
        const [received] = new FrameDecoder().push(joined).frames;
        expect(Buffer.compare(received?.payload ?? Buffer.alloc(0), whole)).toBe(0);
        expect(Buffer.compare(encodeMessageOnce(message), whole)).toBe(0);
        // To an older connection only the head is restamped, a copy; the tail is still the binary itself.
        const older = outgoingAtVersion(frame, PROTOCOL_VERSION - 1);
        expect([older.head[4], frame.head[4], older.tail, older.byteLength]).toEqual([
          PROTOCOL_VERSION - 1,
          PROTOCOL_VERSION,
          frame.tail,
          frame.byteLength,
        ]);
        const decoded = decodeValue(encodeMessageOnce(message));
        expect(decoded.ok && Buffer.compare((decoded.value as typeof message).states, binary)).toBe(0);
      }),
      { numRuns: 30 },
    );
  });

  it('decodes a payload owning its memory into views of it, and one inside a larger read into copies', () => {
    const bytes = encodeValue({ states: Buffer.alloc(5000, 1) });
    const owned = Buffer.from(bytes);
    const fromOwned = decodeFrameValue(owned);
    const read = Buffer.alloc(owned.byteLength * 3);
    read.set(owned, 100);
    const fromRead = decodeFrameValue(read.subarray(100, 100 + owned.byteLength));
    expect(fromOwned).toEqual(decodeValue(owned));
    expect(fromRead).toEqual(decodeValue(owned));
    const states = (value: unknown): Uint8Array => (value as { states: Uint8Array }).states;
    if (!fromOwned.ok || !fromRead.ok) throw new Error('expected both to decode');
    expect(states(fromOwned.value).buffer).toBe(owned.buffer);
    expect(states(fromRead.value).buffer).not.toBe(read.buffer);
    // The budget applies as to any decode: a binary above its limit is refused before anything is made of it.
    expect(decodeFrameValue(owned, { ...DEFAULT_DECODE_LIMITS, maxBinaryBytes: 4999 }).ok).toBe(false);
  });

  it('remembers a passed check per registry, never a failed one, and never caches what cannot be encoded', () => {
    const cluster = new FamilyRegistry();
    cluster.register(CLUSTER_MESSAGES);
    const message = { type: 'Heartbeat', sequence: 4, incarnation: 'x' };
    const before = messageCodecStats();
    expect(encodeCheckedMessage(message, cluster)).toEqual({ ok: true, bytes: encodeMessageOnce(message) });
    expect(encodeCheckedMessage(message, cluster).ok).toBe(true);
    expect(messageCodecStats().checks - before.checks).toBe(1);
    expect(encodeCheckedMessage(message, ALL).ok).toBe(true);
    expect(messageCodecStats().checks - before.checks).toBe(2);

    const sharding = { type: 'GetShardHome', typeName: 'Counter', shardId: 1 };
    for (let i = 0; i < 3; i++) expect(encodeCheckedMessage(sharding, cluster)).toEqual({ ok: false });
    expect(messageCodecStats().checks - before.checks).toBe(5);
    expect(messageCodecStats().encodes - before.encodes).toBe(2);

    const unencodable = { type: 'Heartbeat', sequence: 2n ** 70n, incarnation: 'x' };
    for (let i = 0; i < 2; i++) expect(() => encodeMessageOnce(unencodable)).toThrow(/cannot encode/);
    expect(messageCodecStats().encodes - before.encodes).toBe(2);
  });
});

describe('bytesAt (reading in place)', () => {
  it('is true exactly when the bytes hold the expected ones from the offset, and false where they end first', () => {
    const small = fc.uint8Array({ maxLength: 12 });
    fc.assert(
      fc.property(small, small, fc.nat(14), (bytes, expected, at) => {
        const window = Buffer.from(bytes.subarray(at, at + expected.length));
        const holds = at + expected.length <= bytes.length && window.equals(Buffer.from(expected));
        expect(bytesAt(bytes, at, expected)).toBe(holds);
      }),
    );
    // A prefix matches where the rest is past the end: the bounds decide, not an undefined byte.
    expect(bytesAt(Uint8Array.of(1, 2), 1, Uint8Array.of(2, 3))).toBe(false);
    expect(bytesAt(Uint8Array.of(1, 2), 2, new Uint8Array(0))).toBe(true);
  });
});
