// explicitPlacementState: the strategy's view of store snapshots, wrapped rather than copied per change.
import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { PlacementStore } from '../../crdt/index.js';
import { explicitPlacementState } from '../../src/sharding/placements/explicit-placement-state.js';
import { tryParsePlacementTarget } from '../../src/sharding/placements/placement-target.js';

const TYPE = 'counter';
const targets = [
  'app@127.0.0.1:7701',
  'app@127.0.0.1:7702',
  'not an address',
  'app@127.0.0.1:7703',
  'rack=r1,zone=b',
  'zone=',
];

function storeWithClock(): PlacementStore {
  let now = 1_000;
  return new PlacementStore({ node: 'writer', now: () => now++ });
}

/** What the view must equal: the valid placements copied into a Map, in ascending shard order. */
function reference(store: PlacementStore): Map<number, string> {
  const copy = new Map<number, string>();
  for (const [shardId, placement] of store.snapshot(TYPE).placements) {
    const target = tryParsePlacementTarget(placement.target);
    if (target !== undefined) copy.set(shardId, target.canonical);
  }
  return copy;
}

describe('explicitPlacementState', () => {
  it('shows only targets that are addresses or selectors, in get, has, size and iteration alike', () => {
    const store = storeWithClock();
    const getState = explicitPlacementState(() => store.snapshot(TYPE));
    store.set(TYPE, 1, 'app@127.0.0.1:7701');
    store.set(TYPE, 2, 'written by a foreign tool');
    store.set(TYPE, 3, 'app@127.0.0.1:7702');
    const pins = getState().explicitPlacements;
    expect(pins.get(1)?.toString()).toBe('app@127.0.0.1:7701');
    expect(pins.get(2)).toBeUndefined();
    expect(pins.has(2)).toBe(false);
    expect(pins.has(3)).toBe(true);
    expect(pins.size).toBe(2);
    expect([...pins.keys()]).toEqual([1, 3]);
    expect([...pins.values()].map(String)).toEqual(['app@127.0.0.1:7701', 'app@127.0.0.1:7702']);
    const seen: number[] = [];
    pins.forEach((_, shardId, map) => {
      expect(map).toBe(pins);
      seen.push(shardId);
    });
    expect(seen).toEqual([1, 3]);
  });

  it('reads mode and expiry from the stored rule, and a selector as a parsed target', () => {
    const store = storeWithClock();
    const getState = explicitPlacementState(() => store.snapshot(TYPE));
    store.set(TYPE, 1, 'zone=b', { mode: 'require', expiresAt: 9_000, reason: 'drain' });
    store.set(TYPE, 2, 'zone=b');
    const pins = getState().explicitPlacements;
    expect(pins.get(1)).toMatchObject({
      mode: 'require',
      expiresAt: 9_000,
      target: { kind: 'selector', canonical: 'zone=b' },
    });
    expect(pins.get(2)).toMatchObject({ mode: 'prefer', expiresAt: null });
  });

  it('returns the same state while the snapshot is unchanged, and keeps an old state as it was', () => {
    const store = storeWithClock();
    const getState = explicitPlacementState(() => store.snapshot(TYPE));
    store.set(TYPE, 7, 'app@127.0.0.1:7701');
    const before = getState();
    expect(getState()).toBe(before);
    store.set(TYPE, 7, 'app@127.0.0.1:7702');
    store.remove(TYPE, 8);
    const after = getState();
    expect(after).not.toBe(before);
    expect(after.explicitPlacements.get(7)?.toString()).toBe('app@127.0.0.1:7702');
    expect(before.explicitPlacements.get(7)?.toString()).toBe('app@127.0.0.1:7701');
  });

  it('equals a copy of the valid placements after any sequence of sets and removes', () => {
    const op = fc.record({
      shardId: fc.nat({ max: 40 }),
      target: fc.option(fc.constantFrom(...targets), { nil: null }),
    });
    fc.assert(
      fc.property(fc.array(fc.array(op, { maxLength: 8 }), { maxLength: 12 }), (batches) => {
        const store = storeWithClock();
        const getState = explicitPlacementState(() => store.snapshot(TYPE));
        for (const batch of batches) {
          for (const { shardId, target } of batch) {
            if (target === null) store.remove(TYPE, shardId);
            else store.set(TYPE, shardId, target);
          }
          const pins = getState().explicitPlacements;
          const expected = reference(store);
          expect([...pins].map(([shardId, address]) => [shardId, address.toString()])).toEqual([...expected]);
          expect(pins.size).toBe(expected.size);
          for (let shardId = 0; shardId <= 40; shardId++) {
            expect(pins.get(shardId)?.toString()).toBe(expected.get(shardId));
            expect(pins.has(shardId)).toBe(expected.has(shardId));
          }
        }
      }),
      { numRuns: 200 },
    );
  });
});
