// Compaction: a replica folds its document into a base of per-shard winners and continues on an empty
// document of the next generation; peers on either generation keep every placement and converge.
import { describe, expect, it } from 'vitest';
import * as encoding from 'lib0/encoding';
import {
  EMPTY_STATE_VECTOR,
  PlacementReplicator,
  PlacementStore,
  PlacementStoreError,
  type PlacementStoreErrorCode,
} from '../../crdt/index.js';
import { ManualTimers, MemoryNetwork, prng, view } from './helpers.js';

const T = 'Counter';

function clocked(node: string, options: { compactAfterItems?: number; start?: number } = {}) {
  const clock = { t: options.start ?? 1_000 };
  const store = new PlacementStore({
    node,
    now: () => clock.t++,
    ...(options.compactAfterItems === undefined ? {} : { compactAfterItems: options.compactAfterItems }),
  });
  return { store, clock };
}

/** Applies everything `to` lacks from `from`, as one anti-entropy exchange in that direction does. */
function pull(to: PlacementStore, from: PlacementStore): void {
  to.applyUpdate(from.encodeDiff(to.encodeStateVector()));
}

/** A base of one type with the given string table and slots of [shardId, writer ref, target ref]. */
function base(
  strings: readonly string[],
  typeName: string,
  slots: ReadonlyArray<readonly [number, number, number]>,
  count = slots.length,
): Uint8Array {
  return encoding.encode((e) => {
    encoding.writeVarUint(e, strings.length);
    for (const text of strings) encoding.writeVarString(e, text);
    encoding.writeVarUint(e, 1);
    encoding.writeVarString(e, typeName);
    encoding.writeVarUint(e, count);
    for (const [shardId, writer, target] of slots) {
      for (const n of [shardId, writer, target, 5, 0]) encoding.writeVarUint(e, n);
    }
  });
}

/** The version-2 envelope around a base (flag 1 alone): its slots carry no meta, and must still read. */
function v2Update(generation: number, baseBytes: Uint8Array): Uint8Array {
  return encoding.encode((e) => {
    encoding.writeVarUint(e, generation);
    encoding.writeVarUint(e, 1);
    encoding.writeVarUint8Array(e, baseBytes);
  });
}

function overwrite(store: PlacementStore, writes: number, shards: number): void {
  for (let i = 0; i < writes; i++) store.set(T, i % shards, `app@10.0.0.${1 + (i % 7)}:7701`);
}

describe('PlacementStore.compact', () => {
  it('keeps every placement and the snapshot object, and shrinks the state to the winners', () => {
    const writers = ['a', 'b', 'c'].map((node) => clocked(node, { compactAfterItems: Infinity }).store);
    const store = writers[0] as PlacementStore;
    for (let round = 0; round < 10; round++) {
      for (const writer of writers) overwrite(writer, 100, 50);
      for (const to of writers) for (const from of writers) if (to !== from) pull(to, from);
    }
    store.remove(T, 3);
    const before = store.encodeDiff(EMPTY_STATE_VECTOR).length;
    const snapshot = store.snapshot(T);
    const shown = view(store);

    expect(store.compact()).toBe(1);

    expect(store.snapshot(T)).toBe(snapshot);
    expect(view(store)).toEqual(shown);
    const after = store.encodeDiff(EMPTY_STATE_VECTOR).length;
    expect(after * 10).toBeLessThan(before);
    expect(store.stats()).toMatchObject({
      generation: 1,
      baseSlots: 50,
      slots: 0,
      documentItems: 0,
      compactions: 1,
      previousGeneration: 0,
    });
  });

  it('lets a fresh replica bootstrap from the compacted state, and writes continue on the new document', () => {
    const { store: a } = clocked('a', { compactAfterItems: Infinity });
    overwrite(a, 500, 20);
    a.compact();
    const { store: b } = clocked('b', { start: 5_000 });
    pull(b, a);
    expect(b.generation).toBe(1);
    expect(view(b)).toEqual(view(a));

    b.set(T, 4, 'app@10.0.0.9:7701');
    a.set(T, 5, 'app@10.0.0.8:7701');
    pull(a, b);
    pull(b, a);
    expect(view(a)).toEqual(view(b));
    expect(a.snapshot(T).placements.get(4)?.target).toBe('app@10.0.0.9:7701');
    expect(b.snapshot(T).placements.get(5)?.target).toBe('app@10.0.0.8:7701');
  });

  it('a write after compaction beats the compacted winner even from a clock far behind (per-key dominance)', () => {
    const { store: a } = clocked('a', { start: 10_000_000 });
    a.set(T, 1, 'app@10.0.0.1:7701');
    a.compact();
    const { store: behind } = clocked('behind', { start: 1_000 });
    pull(behind, a);
    behind.set(T, 1, 'app@10.0.0.2:7701');
    pull(a, behind);
    expect(a.snapshot(T).placements.get(1)?.target).toBe('app@10.0.0.2:7701');
  });

  it('prunes an own slot that a merged base outranks', () => {
    const { store: a } = clocked('a', { start: 1_000 });
    const { store: c } = clocked('c', { start: 9_000 });
    a.compact();
    a.set(T, 3, 'app@10.0.0.1:7701');
    c.set(T, 3, 'app@10.0.0.3:7701');
    // c is a generation behind: what it sends a peer ahead is its placements folded into a base.
    pull(a, c);
    expect(a.snapshot(T).placements.get(3)?.target).toBe('app@10.0.0.3:7701');
    expect(a.stats()).toMatchObject({ slots: 0, prunedSlots: 1, generation: 1 });
  });

  it('folds late updates of the previous generation into the base, and recovers what arrives after its release', () => {
    const { store: a } = clocked('a');
    const { store: b } = clocked('b', { start: 2_000 });
    const pushed: Uint8Array[] = [];
    b.onUpdate((update) => pushed.push(update));
    b.set(T, 1, 'app@10.0.0.1:7701');
    pull(a, b);
    a.compact();

    b.set(T, 5, 'app@10.0.0.5:7701');
    a.applyUpdate(pushed[pushed.length - 1] as Uint8Array);
    expect(a.snapshot(T).placements.get(5)?.target).toBe('app@10.0.0.5:7701');
    // Also for an entity type the old document never held.
    b.set('Cart', 2, 'app@10.0.0.2:7701');
    a.applyUpdate(pushed[pushed.length - 1] as Uint8Array);
    expect(a.snapshot('Cart').placements.get(2)?.target).toBe('app@10.0.0.2:7701');

    expect(a.releasePreviousGeneration()).toBe(true);
    expect(a.releasePreviousGeneration()).toBe(false);
    b.set(T, 6, 'app@10.0.0.6:7701');
    a.applyUpdate(pushed[pushed.length - 1] as Uint8Array);
    expect(a.snapshot(T).placements.has(6)).toBe(false);
    expect(a.stats().staleUpdates).toBe(1);

    // b learns of generation 1 at its next sync, folds its own document, and its base reaches a.
    pull(b, a);
    expect(b.generation).toBe(1);
    pull(a, b);
    expect(a.snapshot(T).placements.get(6)?.target).toBe('app@10.0.0.6:7701');
    expect(view(a)).toEqual(view(b));
  });

  it('compacts by itself past compactAfterItems when history outweighs live slots, never otherwise', () => {
    const { store } = clocked('a', { compactAfterItems: 500 });
    overwrite(store, 2_000, 10);
    expect(store.generation).toBeGreaterThanOrEqual(3);
    expect(store.stats().documentItems).toBeLessThanOrEqual(500);
    expect(Object.keys(view(store)[T] ?? {})).toHaveLength(10);

    // 600 live slots: 601 items do not outweigh them four times over.
    const { store: wide } = clocked('w', { compactAfterItems: 500 });
    for (let shard = 0; shard < 601; shard++) wide.set(T, shard, 'app@10.0.0.1:7701');
    expect(wide.generation).toBe(0);

    const { store: manual } = clocked('m', { compactAfterItems: Infinity });
    overwrite(manual, 2_000, 10);
    expect(manual.generation).toBe(0);
  });

  it('settles equal timestamps with different targets the same way in any merge order', () => {
    const x = v2Update(0, base(['w', 'x'], T, [[1, 0, 2]]));
    const y = v2Update(0, base(['w', 'y'], T, [[1, 0, 2]]));
    const { store: first } = clocked('a');
    const { store: second } = clocked('b');
    first.applyUpdate(x);
    first.applyUpdate(y);
    second.applyUpdate(y);
    second.applyUpdate(x);
    expect(first.snapshot(T).placements.get(1)?.target).toBe('y');
    expect(view(second)).toEqual(view(first));
  });

  it('rejects an invalid compactAfterItems', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, '10']) {
      expect(() => new PlacementStore({ node: 'a', compactAfterItems: bad as number })).toThrow(
        /compactAfterItems must be/,
      );
    }
  });
});

describe('malformed bases change nothing', () => {
  it.each<[string, Uint8Array, RegExp]>([
    ['a writer with a control character', base(['b\nc', 'x'], T, [[1, 0, 2]]), /writer must not contain control/],
    ['an empty target', base(['', 'b'], T, [[1, 1, 1]]), /target must not be empty/],
    ['a string index out of the table', base(['b'], T, [[1, 3, 0]]), /refers to string 3 of 1/],
    ['an empty type name', base(['b', 'x'], '', [[1, 0, 2]]), /type name must not be empty/],
    ['a missing slot', base(['b', 'x'], T, [[1, 0, 2]], 2), /end of array/],
    ['trailing bytes', encoding.encode((e) => [0, 0, 9].forEach((n) => encoding.writeVarUint(e, n))), /trailing bytes/],
  ])('rejects a base with %s', (_, base, message) => {
    const { store } = clocked('a');
    store.set(T, 1, 'app@10.0.0.1:7701');
    const before = {
      view: view(store),
      vector: store.encodeStateVector(),
      state: store.encodeDiff(EMPTY_STATE_VECTOR),
    };
    let code: PlacementStoreErrorCode | undefined;
    try {
      store.applyUpdate(v2Update(3, base));
    } catch (error) {
      expect(error).toBeInstanceOf(PlacementStoreError);
      expect((error as Error).message).toMatch(message);
      code = (error as PlacementStoreError).code;
    }
    expect(code).toBe('malformed_update');
    expect(store.generation).toBe(0);
    expect(view(store)).toEqual(before.view);
    expect(store.encodeStateVector()).toEqual(before.vector);
    expect(store.encodeDiff(EMPTY_STATE_VECTOR)).toEqual(before.state);
  });

  it('rejects a base with more slots than maxUpdateStructs', () => {
    const { store: source } = clocked('s');
    for (let shard = 0; shard < 10; shard++) source.set(T, shard, 'app@10.0.0.1:7701');
    source.compact();
    const small = new PlacementStore({ node: 'b', maxUpdateStructs: 9 });
    expect(() => small.applyUpdate(source.encodeDiff(EMPTY_STATE_VECTOR))).toThrow(/more than 9 slots/);
    expect(small.generation).toBe(0);
  });
});

describe('replicators across generations', () => {
  it('bring a lagging replica with unsynced writes onto the new generation and release the previous document', () => {
    const random = prng(7);
    const clocks = { t: 1_000 };
    const stores = ['a', 'b', 'c'].map((node) => new PlacementStore({ node, now: () => clocks.t++ }));
    const net = new MemoryNetwork(random);
    const timers = new ManualTimers();
    for (const store of stores) {
      const replicator = new PlacementReplicator(store, net.linkFor(store.node), {
        random,
        setInterval: timers.setInterval,
        clearInterval: timers.clearInterval,
      });
      net.replicators.set(store.node, replicator);
    }
    for (const store of stores)
      for (const peer of stores) if (peer !== store) net.replicators.get(store.node)?.addPeer(peer.node);
    net.flush();
    const [a, b, c] = stores as [PlacementStore, PlacementStore, PlacementStore];
    overwrite(a, 300, 30);
    net.flush();
    // c is cut off while a compacts and keeps writing, and writes on its own.
    net.partition = new Map([['c', 1]]);
    a.compact();
    a.set(T, 40, 'app@10.0.0.4:7701');
    c.set(T, 41, 'app@10.0.0.5:7701');
    net.flush();
    expect(b.generation).toBe(1);
    expect(c.generation).toBe(0);
    expect(a.stats().previousGeneration).toBe(0);

    net.partition = new Map();
    for (let round = 0; round < 10; round++) {
      timers.fire();
      net.flush();
    }
    for (const store of stores) {
      expect(store.generation).toBe(1);
      expect(view(store)).toEqual(view(a));
    }
    expect(a.snapshot(T).placements.get(41)?.target).toBe('app@10.0.0.5:7701');
    expect(a.stats().previousGeneration).toBeNull();
    for (const replicator of net.replicators.values()) expect(replicator.stats().framesRejected).toBe(0);
  });
});
