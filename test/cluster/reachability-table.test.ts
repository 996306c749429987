// The gossiped reachability table: rows merge by version whatever order, loss or duplication gossip meets,
// an observer's own row is replaced whole, and the table travels by member index and comes back equal.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  EMPTY_TABLE,
  liveEdges,
  mergeTables,
  retainKnown,
  tableDigest,
  tableFromWire,
  tableToWire,
  withOwnRow,
  type ObserverRow,
  type ReachabilityTable,
} from '../../src/cluster/membership/reachability-table.js';

const KEYS = ['a#1', 'b#1', 'c#1', 'd#1', 'e#1'];

const row: fc.Arbitrary<[string, ObserverRow]> = fc
  .tuple(fc.constantFrom(...KEYS), fc.integer({ min: 0, max: 5 }), fc.subarray(KEYS))
  .map(([observer, version, subjects]) => [observer, { version, subjects: new Set(subjects) }]);
const table: fc.Arbitrary<ReachabilityTable> = fc
  .array(row, { maxLength: 8 })
  .map((rows) => rows.reduce<ReachabilityTable>((t, [o, r]) => mergeTables(t, new Map([[o, r]])), EMPTY_TABLE));

describe('reachability table merge', () => {
  it('is commutative, associative and idempotent', () => {
    fc.assert(
      fc.property(table, table, table, (a, b, c) => {
        expect(tableDigest(mergeTables(a, b))).toBe(tableDigest(mergeTables(b, a)));
        expect(tableDigest(mergeTables(mergeTables(a, b), c))).toBe(tableDigest(mergeTables(a, mergeTables(b, c))));
        expect(tableDigest(mergeTables(a, a))).toBe(tableDigest(a));
      }),
    );
  });

  it('converges to the same table whatever order and duplication the rows arrive in', () => {
    fc.assert(
      fc.property(
        fc.array(row, { minLength: 1, maxLength: 12 }),
        fc.array(fc.nat(), { maxLength: 30 }),
        (rows, picks) => {
          const inOrder = rows.reduce<ReachabilityTable>((t, [o, r]) => mergeTables(t, new Map([[o, r]])), EMPTY_TABLE);
          // Replay in another order, with duplicates, and then every row once more (nothing lost in the end).
          const replay = [...picks.map((p) => rows[p % rows.length]!), ...[...rows].reverse()];
          const shuffled = replay.reduce<ReachabilityTable>(
            (t, [o, r]) => mergeTables(t, new Map([[o, r]])),
            EMPTY_TABLE,
          );
          expect(tableDigest(shuffled)).toBe(tableDigest(inOrder));
        },
      ),
    );
  });

  it('keeps the newer version of a row, so an observer that sees a member again clears it everywhere', () => {
    const older: ReachabilityTable = new Map([['a#1', { version: 1, subjects: new Set(['b#1']) }]]);
    const cleared = withOwnRow(older, 'a#1', new Set());
    expect(cleared.get('a#1')).toEqual({ version: 2, subjects: new Set() });
    expect(mergeTables(older, cleared).get('a#1')?.subjects.size).toBe(0);
    expect(mergeTables(cleared, older).get('a#1')?.subjects.size).toBe(0);
  });

  it('writes an own row only when it changes, and none while there is nothing to say', () => {
    expect(withOwnRow(EMPTY_TABLE, 'a#1', new Set())).toBe(EMPTY_TABLE);
    const once = withOwnRow(EMPTY_TABLE, 'a#1', new Set(['b#1']));
    expect(withOwnRow(once, 'a#1', new Set(['b#1']))).toBe(once);
    expect(withOwnRow(once, 'a#1', new Set(['b#1', 'c#1'])).get('a#1')?.version).toBe(2);
  });
});

describe('reachability table edges and wire form', () => {
  it('lists edges between live distinct members only, sorted', () => {
    const t: ReachabilityTable = new Map([
      ['c#1', { version: 1, subjects: new Set(['a#1', 'c#1', 'gone#1']) }],
      ['a#1', { version: 1, subjects: new Set(['c#1', 'b#1']) }],
      ['gone#1', { version: 1, subjects: new Set(['a#1']) }],
    ]);
    const live = (k: string): boolean => k !== 'gone#1';
    expect(liveEdges(t, live)).toEqual([
      { observer: 'a#1', subject: 'b#1' },
      { observer: 'a#1', subject: 'c#1' },
      { observer: 'c#1', subject: 'a#1' },
    ]);
  });

  it('round-trips through member indexes, dropping what names no member', () => {
    fc.assert(
      fc.property(table, (t) => {
        const known = KEYS.slice(0, 4);
        const indexOf = new Map(known.map((k, i) => [k, i]));
        const back = tableFromWire(tableToWire(t, indexOf), known);
        expect(tableDigest(back)).toBe(tableDigest(retainKnown(t, (k) => indexOf.has(k))));
      }),
    );
  });
});
