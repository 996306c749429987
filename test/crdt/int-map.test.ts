// The persistent map behind snapshots: Map semantics, untouched old versions, ascending iteration.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IntMap } from '../../crdt/int-map.js';

// Small keys, keys around 2^31 and 2^32 (where the digit computation changes method) and huge keys, mixed.
const keyArb = fc.oneof(
  fc.integer({ min: 0, max: 70 }),
  fc.integer({ min: 0, max: 5_000_000 }),
  fc.constantFrom(2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32 + 5, 2 ** 35 + 3),
  fc.constant(Number.MAX_SAFE_INTEGER),
);

describe('IntMap (persistent snapshot map)', () => {
  it('behaves like a Map under random sets and deletes, and old versions never change', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(keyArb, fc.option(fc.string({ maxLength: 3 }), { nil: undefined })), { maxLength: 60 }),
        (ops) => {
          let map = IntMap.empty<string>();
          const model = new Map<number, string>();
          const history: Array<[IntMap<string>, Array<[number, string]>]> = [];
          for (const [key, value] of ops) {
            map = map.with(key, value);
            if (value === undefined) model.delete(key);
            else model.set(key, value);
            history.push([map, [...model].sort((a, b) => a[0] - b[0])]);
          }
          for (const [version, expected] of history) {
            expect([...version]).toEqual(expected);
            expect(version.size).toBe(expected.length);
            for (const [k, v] of expected) expect(version.get(k)).toBe(v);
            for (const [k] of ops) if (!expected.some(([key]) => key === k)) expect(version.get(k)).toBeUndefined();
          }
          expect([...map.keys()]).toEqual([...model.keys()].sort((a, b) => a - b));
          expect([...map.values()]).toEqual([...model].sort((a, b) => a[0] - b[0]).map(([, v]) => v));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('returns itself when nothing changes', () => {
    const map = IntMap.empty<string>().with(3, 'x');
    expect(map.with(3, 'x')).toBe(map);
    expect(map.with(4, undefined)).toBe(map);
  });

  it('supports forEach and has, and answers undefined for keys it cannot hold', () => {
    const map = IntMap.empty<string>().with(1, 'a').with(40, 'b');
    const seen: string[] = [];
    map.forEach((v, k, m) => {
      expect(m).toBe(map);
      seen.push(`${k}=${v}`);
    });
    expect(seen).toEqual(['1=a', '40=b']);
    expect(map.has(40)).toBe(true);
    expect(map.has(41)).toBe(false);
    expect(map.get(-1)).toBeUndefined();
    expect(map.get(1.5)).toBeUndefined();
    expect(() => map.with(-1, 'x')).toThrow(RangeError);
  });
});
