// Slot key and value encoding: round trips and rejection of anything the store would not write.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeSlotValue, encodeSlotValue, isSlotValue, parseSlotKey, slotKey } from '../../crdt/slots.js';

describe('slot encoding', () => {
  it('round-trips keys for every shard id and writer name', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
        fc.string({ minLength: 1, maxLength: 30 }).filter((s) => !/[\u0000-\u001f\u007f]/.test(s)),
        (shardId, writer) => {
          expect(parseSlotKey(slotKey(shardId, writer))).toEqual({ shardId, writer });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('rejects keys this store would never write', () => {
    for (const key of [
      '1',
      '\u0000a',
      '01\u0000a',
      '-1\u0000a',
      '1.5\u0000a',
      '1\u0000',
      '1\u0000a\u0000b',
      '99999999999999999\u0000a',
      'x\u0000a',
    ]) {
      expect(parseSlotKey(key)).toBeNull();
    }
  });

  it('round-trips values and rejects malformed ones', () => {
    const hlc = { wallMs: 1_700_000_000_000, counter: 3, node: 'a' };
    expect(decodeSlotValue(encodeSlotValue('t', hlc), 'a')).toEqual({ target: 't', hlc });
    expect(decodeSlotValue(encodeSlotValue(null, hlc), 'a')).toEqual({ target: null, hlc });
    for (const bad of [
      null,
      [],
      ['t', 1],
      ['t', 1, 0, 0],
      ['', 1, 0],
      ['t', -1, 0],
      ['t', 1, 65_536],
      ['t', 1.5, 0],
      [3, 1, 0],
      { 0: 't', 1: 1, 2: 0 },
    ]) {
      expect(isSlotValue(bad)).toBe(false);
      expect(decodeSlotValue(bad, 'a')).toBeNull();
    }
  });
});
