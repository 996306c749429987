// The processed sends read in place (sends-reader.ts) against the general reading they stand in for (decodeValue
// then parseProcessedSends): whatever the bytes, the reader gives the same value or leaves them to it, and it
// does read what an old host writes (else it would be dead code that only costs a try).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeValue, encodeValue } from '../../src/cluster/transport/message-codec.js';
import { parseProcessedSends, type ProcessedSends } from '../../src/sharding/region/dedup-table.js';
import { readProcessedSends } from '../../src/sharding/region/sends-reader.js';

const general = (bytes: Uint8Array): ProcessedSends[] | undefined => {
  const decoded = decodeValue(bytes);
  return decoded.ok ? parseProcessedSends(decoded.value) : undefined;
};
const inPlace = (bytes: Uint8Array): ProcessedSends[] | undefined => readProcessedSends(bytes, 0, bytes.length);

/** Sequence numbers and incarnations in every encoding msgpackr picks for them, and some the checks refuse. */
const id = fc.oneof(
  fc.integer({ min: 1, max: 127 }),
  fc.integer({ min: 128, max: 2 ** 32 - 1 }),
  fc.integer({ min: 2 ** 32, max: Number.MAX_SAFE_INTEGER }),
  fc.constantFrom(0, -1, 1.5, 2 ** 53, Number.NaN),
);
const node = fc.oneof(
  fc.constantFrom('sys@127.0.0.1:7001', 'bench@10.0.0.2:41234', `s@${'h'.repeat(200)}:1`),
  fc.constantFrom('not an address', 'sys@127.0.0.1:70000', 'sÿs@127.0.0.1:7001', ''),
  fc.string({ maxLength: 40 }),
);
const entry = fc.record(
  { node, incarnation: id, done: fc.array(id, { maxLength: 30 }), failed: fc.array(id, { maxLength: 5 }) },
  { requiredKeys: ['node', 'incarnation', 'done', 'failed'] },
);
/** Entries as written, and with their keys reordered or one more key (the general reading ignores it). */
const sender = fc.oneof(
  entry,
  entry.map(({ node, incarnation, done, failed }) => ({ failed, done, incarnation, node })),
  entry.map((value) => ({ ...value, extra: 1 })),
);

describe('processed sends read in place', () => {
  it('reads what an old host writes, as the general reading does', () => {
    const sends: ProcessedSends[] = [
      { node: 'sys@127.0.0.1:7001', incarnation: 1_733_456_789_012, done: [1, 200, 70_000, 2 ** 33], failed: [200] },
      { node: 'sys@127.0.0.1:7002', incarnation: 5, done: [], failed: [] },
    ];
    const bytes = encodeValue(sends).slice();
    expect(inPlace(bytes)).toEqual(sends);
    expect(inPlace(bytes)).toEqual(general(bytes));
    // Within a larger buffer: only its range is read.
    const framed = Uint8Array.from([0xc0, ...bytes, 0xc0]);
    expect(readProcessedSends(framed, 1, framed.length - 1)).toEqual(sends);
    expect(readProcessedSends(framed, 1, framed.length)).toBeUndefined();
  });

  it('leaves a list over the decoder’s element budget to the general reading, which refuses it', () => {
    const done = Array.from({ length: 500 }, (_, i) => i + 1);
    const senders = Array.from({ length: 1_000 }, (_, i) => ({
      node: 'sys@127.0.0.1:7001',
      incarnation: i + 1,
      done,
      failed: [],
    }));
    const bytes = encodeValue(senders).slice();
    expect(general(bytes)).toBeUndefined();
    expect(inPlace(bytes)).toBeUndefined();
    expect(inPlace(encodeValue(senders.slice(0, 900)).slice())).toEqual(senders.slice(0, 900));
  });

  it('gives the general reading’s value or leaves the bytes to it, for any list of senders', () => {
    fc.assert(
      fc.property(fc.array(sender, { maxLength: 4 }), (senders) => {
        const bytes = encodeValue(senders).slice();
        const read = inPlace(bytes);
        if (read !== undefined) expect(read).toEqual(general(bytes));
      }),
      { numRuns: 2_000 },
    );
  });

  it('reads every valid list as written (the general reading never has to decide one)', () => {
    const valid = fc.record({
      node: fc.constantFrom('sys@127.0.0.1:7001', 'bench@10.0.0.2:41234'),
      incarnation: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
      done: fc.array(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), { maxLength: 30 }),
      failed: fc.array(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), { maxLength: 5 }),
    });
    fc.assert(
      fc.property(fc.array(valid, { maxLength: 4 }), (senders) => {
        expect(inPlace(encodeValue(senders).slice())).toEqual(senders);
      }),
      { numRuns: 1_000 },
    );
  });

  it('never reads garbled or truncated bytes differently from the general reading', () => {
    const written = fc.array(entry, { minLength: 1, maxLength: 3 }).map((senders) => encodeValue(senders).slice());
    const garbled = fc
      .tuple(written, fc.nat(), fc.integer({ min: 0, max: 255 }), fc.nat())
      .map(([bytes, at, byte, cut]) => {
        const copy = Uint8Array.from(bytes);
        copy[at % copy.length] = byte;
        return copy.subarray(0, copy.length - (cut % 3));
      });
    fc.assert(
      fc.property(garbled, (bytes) => {
        const read = inPlace(bytes);
        if (read !== undefined) expect(read).toEqual(general(bytes));
      }),
      { numRuns: 5_000 },
    );
  });
});
