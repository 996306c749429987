// Slot meta (protocol version 3): a small record stored with a target, replicated, compacted and
// validated like the target; values written by version 2 (no meta) still read.
import { describe, expect, it } from 'vitest';
import * as fc from 'fast-check';
import * as Y from 'yjs';
import { EMPTY_STATE_VECTOR, PlacementStore, PlacementStoreError } from '../../crdt/index.js';
import { MAX_META_STRING_LENGTH, metaProblem } from '../../crdt/slot-meta.js';
import { asWireUpdate } from './helpers.js';

const T = 'Counter';
const A = 'app@10.0.0.1:7701';

function clocked(node: string, start = 1_000) {
  const clock = { t: start };
  return new PlacementStore({ node, now: () => clock.t++ });
}

function sync(a: PlacementStore, b: PlacementStore): void {
  a.applyUpdate(b.encodeDiff(a.encodeStateVector()));
  b.applyUpdate(a.encodeDiff(b.encodeStateVector()));
}

/** A raw Yjs update writing `value` under writer `w`'s slot of shard 1, in the store's envelope. */
function rawSlot(value: unknown, writer = 'w'): Uint8Array {
  const doc = new Y.Doc();
  doc.getMap(T).set(`1\u0000${writer}`, value);
  return asWireUpdate(Y.encodeStateAsUpdateV2(doc));
}

describe('slot meta', () => {
  it('is stored canonical, replicated and returned with the placement', () => {
    const a = clocked('a');
    const b = clocked('b');
    const written = a.set(T, 1, 'zone=b', { reason: 'maintenance', mode: 'require', expiresAt: 5_000 });
    expect(Object.keys(written.meta ?? {})).toEqual(['expiresAt', 'mode', 'reason']);
    sync(a, b);
    const seen = b.snapshot(T).placements.get(1);
    expect(seen?.target).toBe('zone=b');
    expect(seen?.meta).toEqual({ expiresAt: 5_000, mode: 'require', reason: 'maintenance' });
    expect(Object.isFrozen(seen?.meta)).toBe(true);
  });

  it('changing only the meta is a visible change', () => {
    const a = clocked('a');
    a.set(T, 1, A, { mode: 'prefer' });
    const before = a.snapshot(T);
    const changes: number[][] = [];
    a.onChange((_, shards) => changes.push([...shards]));
    a.set(T, 1, A, { mode: 'require' });
    expect(a.snapshot(T)).not.toBe(before);
    expect(a.snapshot(T).placements.get(1)?.meta).toEqual({ mode: 'require' });
    expect(changes).toEqual([[1]]);
  });

  it('survives compaction on both sides, and a tombstone drops it', () => {
    const a = clocked('a');
    const b = clocked('b');
    a.setMany(T, [
      { shardId: 1, target: A, meta: { by: 'ops' } },
      { shardId: 2, target: A },
    ]);
    a.compact();
    b.applyUpdate(a.encodeDiff(EMPTY_STATE_VECTOR));
    expect(b.generation).toBe(1);
    expect(b.snapshot(T).placements.get(1)?.meta).toEqual({ by: 'ops' });
    expect(b.snapshot(T).placements.get(2)?.meta).toBeUndefined();
    a.remove(T, 1);
    a.set(T, 1, A);
    sync(a, b);
    expect(b.snapshot(T).placements.get(1)?.meta).toBeUndefined();
  });

  it('reads a version-2 value (three elements) as a placement without meta', () => {
    const store = clocked('a');
    store.applyUpdate(rawSlot([A, 900, 0]));
    expect(store.snapshot(T).placements.get(1)).toEqual({
      target: A,
      hlc: { wallMs: 900, counter: 0, node: 'w' },
      writer: 'w',
    });
  });

  it.each<[string, unknown]>([
    ['a tombstone with meta', [null, 900, 0, { by: 'x' }]],
    ['an empty meta', [A, 900, 0, {}]],
    ['a meta that is an array', [A, 900, 0, ['x']]],
    ['a meta field that is an object', [A, 900, 0, { by: { nested: 1 } }]],
    ['a meta field that is a float', [A, 900, 0, { expiresAt: 1.5 }]],
    ['a meta field name outside the alphabet', [A, 900, 0, { 'a-b': 'x' }]],
    ['a meta string over the limit', [A, 900, 0, { reason: 'r'.repeat(MAX_META_STRING_LENGTH + 1) }]],
    ['too many meta fields', [A, 900, 0, Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`f${i}`, i]))]],
    ['five elements', [A, 900, 0, { by: 'x' }, 1]],
  ])('rejects %s from the network and changes nothing', (_, value) => {
    const store = clocked('a');
    store.set(T, 2, A);
    const before = store.encodeDiff(EMPTY_STATE_VECTOR);
    expect(() => store.applyUpdate(rawSlot(value))).toThrow(PlacementStoreError);
    expect(store.encodeDiff(EMPTY_STATE_VECTOR)).toEqual(before);
    expect(store.snapshot(T).placements.has(1)).toBe(false);
  });

  it('rejects bad meta on a local write and writes nothing', () => {
    const store = clocked('a');
    const bad = [
      {},
      { 'x y': 1 },
      { n: Number.NaN },
      { s: 's'.repeat(MAX_META_STRING_LENGTH + 1) },
      Object.create({ inherited: 1 }) as object,
    ];
    for (const meta of bad) {
      expect(() => store.set(T, 1, A, meta as Record<string, string>)).toThrow(/meta/);
      expect(() =>
        store.setMany(T, [
          { shardId: 2, target: A },
          { shardId: 1, target: A, meta: meta as Record<string, string> },
        ]),
      ).toThrow(/meta/);
    }
    expect(store.snapshot(T).placements.size).toBe(0);
  });

  it('is ordered the same way on every replica when one writer wrote two metas at one timestamp', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 10 }), fc.string({ maxLength: 10 }), fc.boolean(), (x, y, order) => {
        const updates = [rawSlot([A, 900, 0, { reason: x }]), rawSlot([A, 900, 0, { reason: y }])];
        const first = clocked('a');
        const second = clocked('b');
        for (const u of order ? updates : [...updates].reverse()) first.applyUpdate(u);
        for (const u of order ? [...updates].reverse() : updates) second.applyUpdate(u);
        // Both documents hold the same two items (one Yjs key, last integration wins per Yjs' rule), so
        // what matters is that the replicas agree.
        expect(first.snapshot(T).placements.get(1)?.meta).toEqual(second.snapshot(T).placements.get(1)?.meta);
      }),
      { numRuns: 50 },
    );
  });

  it('converges with meta across replicas, compactions and any sync order (property)', () => {
    const op = fc.record({
      writer: fc.nat({ max: 2 }),
      shardId: fc.nat({ max: 4 }),
      kind: fc.constantFrom('set', 'remove', 'compact', 'sync'),
      meta: fc.option(fc.record({ reason: fc.string({ maxLength: 5 }), expiresAt: fc.nat({ max: 10 }) }), {
        nil: undefined,
      }),
      peer: fc.nat({ max: 2 }),
    });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const stores = ['a', 'b', 'c'].map((node) => clocked(node));
        for (const { writer, shardId, kind, meta, peer } of ops) {
          const store = stores[writer] as PlacementStore;
          if (kind === 'set') store.set(T, shardId, A, meta);
          else if (kind === 'remove') store.remove(T, shardId);
          else if (kind === 'compact') store.compact();
          else if (peer !== writer) sync(store, stores[peer] as PlacementStore);
        }
        for (let round = 0; round < 2; round++) for (const x of stores) for (const y of stores) if (x !== y) sync(x, y);
        const views = stores.map((store) =>
          JSON.stringify(
            [...store.snapshot(T).placements].map(([shardId, p]) => [shardId, p.target, p.meta ?? null, p.writer]),
          ),
        );
        expect(views[1]).toBe(views[0]);
        expect(views[2]).toBe(views[0]);
      }),
      { numRuns: 100 },
    );
  });

  it('metaProblem accepts the shapes the sharding layer writes', () => {
    expect(
      metaProblem({ mode: 'require', expiresAt: 1_900_000_000_000, reason: 'r'.repeat(500), by: 'ops' }),
    ).toBeNull();
  });
});
