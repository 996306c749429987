// The store speaks Yjs V2 because its state is much smaller than V1's once history piles up (crdt/codec.ts).
import fc from 'fast-check';
import * as Y from 'yjs';
import { describe, expect, it } from 'vitest';
import { EMPTY_STATE_VECTOR, PlacementStore } from '../../crdt/index.js';
import { documentOf, prng, view } from './helpers.js';

describe('update encoding', () => {
  it('emits V2 updates, and a V2 state is smaller than the same state in V1 after many overwrites', () => {
    let t = 1_000;
    const writers = [0, 1, 2, 3, 4].map((i) => new PlacementStore({ node: `app@10.0.0.${i + 1}:7701`, now: () => t }));
    const random = prng(7);
    const local: Uint8Array[] = [];
    (writers[0] as PlacementStore).onUpdate((u, origin) => origin === 'local' && local.push(u));
    for (let step = 0; step < 5_000; step++) {
      t += 1;
      (writers[step % 5] as PlacementStore).set(
        'Counter',
        Math.floor(random() * 100),
        `app@10.0.0.${1 + (step % 3)}:7701`,
      );
      if (step % 500 === 499) {
        for (const a of writers)
          for (const b of writers) if (a !== b) b.applyUpdate(a.encodeDiff(b.encodeStateVector()));
      }
    }
    const v2 = documentOf((writers[0] as PlacementStore).encodeDiff(EMPTY_STATE_VECTOR));
    const v1 = Y.convertUpdateFormatV2ToV1(v2);
    expect(v2.length).toBeLessThan(v1.length / 2);
    expect(() => Y.decodeUpdateV2(documentOf(local[0] as Uint8Array))).not.toThrow();
    // an update for one placement stays small on the wire
    expect((local[local.length - 1] as Uint8Array).length).toBeLessThan(120);
  });
});

describe('corrupted updates', () => {
  it('a corrupted update is either rejected with nothing changed, or accepted as well-formed slots', () => {
    const source = new PlacementStore({ node: 'src', now: () => 5_000 });
    source.set('Counter', 1, 'app@10.0.0.1:7701');
    source.set('Counter', 2, 'app@10.0.0.2:7701');
    source.remove('Counter', 1);
    source.set('Cart', 3, 'app@10.0.0.3:7701');
    // a second source with several writers, overwrite chains and pruned slots
    let t = 5_000;
    const writers = ['w1', 'w2', 'w3'].map((node) => new PlacementStore({ node, now: () => t }));
    for (let i = 0; i < 30; i++) {
      t += 3;
      (writers[i % 3] as PlacementStore).set('Counter', i % 4, `app@10.0.0.${i % 5}:7701`);
      if (i % 7 === 0)
        for (const a of writers)
          for (const b of writers) if (a !== b) b.applyUpdate(a.encodeDiff(b.encodeStateVector()));
    }
    const sources = [
      source.encodeDiff(EMPTY_STATE_VECTOR),
      (writers[0] as PlacementStore).encodeDiff(EMPTY_STATE_VECTOR),
    ];
    fc.assert(
      fc.property(
        fc.nat(1),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 4 }),
        (which, flips) => {
          const update = sources[which] as Uint8Array;
          const corrupt = update.slice();
          for (const [at, mask] of flips) corrupt[at % update.length] = (corrupt[at % update.length] as number) ^ mask;
          const store = new PlacementStore({ node: 'dst', now: () => 5_000 });
          store.set('Counter', 9, 'app@10.0.0.9:7701');
          const before = { view: view(store), sv: store.encodeStateVector(), snapshot: store.snapshot('Counter') };
          try {
            store.applyUpdate(corrupt);
          } catch (error) {
            expect((error as { code?: string }).code).toBe('malformed_update');
            expect(store.encodeStateVector()).toEqual(before.sv);
            expect(store.snapshot('Counter')).toBe(before.snapshot);
            expect(view(store)).toEqual(before.view);
            return;
          }
          for (const typeName of store.typeNames()) {
            for (const [shardId, p] of store.snapshot(typeName).placements) {
              expect(Number.isSafeInteger(shardId)).toBe(true);
              expect(typeof p.target).toBe('string');
              expect(p.target.length).toBeGreaterThan(0);
              expect(p.hlc.node).toBe(p.writer);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
