// Review fixes of the placement store: bulk writes in one transaction, a throwing log sink or clock that
// must not leave an applied update unindexed, and the cached typeNames().
import { describe, expect, it } from 'vitest';
import { PlacementStore, PlacementStoreError } from '../../crdt/index.js';
import { view } from './helpers.js';

describe('setMany: a bulk write is one transaction', () => {
  it('emits one update and one change notice for many shards, and replicates like single sets', () => {
    const a = new PlacementStore({ node: 'a', now: () => 1_000 });
    const b = new PlacementStore({ node: 'b', now: () => 1_000 });
    const updates: Uint8Array[] = [];
    const changes: Array<readonly number[]> = [];
    a.onUpdate((update) => updates.push(update));
    a.onChange((_, shardIds) => changes.push(shardIds));
    const written = a.setMany('T', [
      { shardId: 3, target: 'x' },
      { shardId: 1, target: 'y' },
      { shardId: 2, target: 'z' },
    ]);
    expect(updates).toHaveLength(1);
    expect(changes).toEqual([[1, 2, 3]]);
    expect(a.snapshot('T').version).toBe(1);
    expect(written.map((p) => p.target)).toEqual(['x', 'y', 'z']);
    for (const p of written) expect(a.snapshot('T').placements.get([3, 1, 2][written.indexOf(p)] as number)).toEqual(p);
    b.applyUpdate(updates[0] as Uint8Array);
    expect(view(b)).toEqual(view(a));
  });

  it('a shard named twice ends with its last entry, and every write dominates what was seen', () => {
    const a = new PlacementStore({ node: 'a', now: () => 1_000 });
    const b = new PlacementStore({ node: 'b', now: () => 9_000 });
    b.set('T', 7, 'future');
    a.applyUpdate(b.encodeDiff(a.encodeStateVector()));
    const [first, second] = a.setMany('T', [
      { shardId: 7, target: 'one' },
      { shardId: 7, target: 'two' },
    ]);
    expect(first?.hlc.wallMs).toBe(9_000);
    expect(second && first && second.hlc.counter > first.hlc.counter).toBe(true);
    expect(a.snapshot('T').placements.get(7)).toEqual(second);
    b.applyUpdate(a.encodeDiff(b.encodeStateVector()));
    expect(b.snapshot('T').placements.get(7)).toEqual(second);
    a.applyUpdate(b.encodeDiff(a.encodeStateVector())); // b's pruned slot
    for (const s of [a, b]) expect(s.stats().slots).toBe(1);
  });

  it('validates every entry before writing any', () => {
    const a = new PlacementStore({ node: 'a' });
    const updates: Uint8Array[] = [];
    a.onUpdate((update) => updates.push(update));
    expect(() =>
      a.setMany('T', [
        { shardId: 1, target: 'x' },
        { shardId: -1, target: 'y' },
      ]),
    ).toThrow(expect.objectContaining({ code: 'invalid_shard_id' }));
    expect(() =>
      a.setMany('T', [
        { shardId: 1, target: 'x' },
        { shardId: 2, target: '' },
      ]),
    ).toThrow(expect.objectContaining({ code: 'invalid_target' }));
    expect(() => a.setMany('T', null as unknown as [])).toThrow(PlacementStoreError);
    expect(updates).toHaveLength(0);
    expect(a.snapshot('T').placements.size).toBe(0);
    expect(a.setMany('T', [])).toEqual([]);
    expect(updates).toHaveLength(0);
  });
});

describe('callbacks cannot leave an applied update out of the snapshot', () => {
  it('a throwing log sink (drift report) neither hides the slots nor rejects the update', () => {
    const hour = 3_600_000;
    const local = new PlacementStore({
      node: 'local',
      now: () => 10 * hour,
      log: () => {
        throw new Error('log sink down');
      },
    });
    const fast = new PlacementStore({ node: 'fast', now: () => 12 * hour });
    fast.set('T', 1, 'x');
    fast.set('T', 2, 'y');
    local.applyUpdate(fast.encodeDiff(local.encodeStateVector()));
    expect([...local.snapshot('T').placements.keys()]).toEqual([1, 2]);
    expect(local.stats().rejectedUpdates).toBe(0);
    expect(local.stats().driftRejected).toBe(2);
  });

  it('a throwing listener with a throwing log sink still lets other listeners run', () => {
    const local = new PlacementStore({
      node: 'a',
      log: () => {
        throw new Error('log sink down');
      },
    });
    const seen: number[][] = [];
    local.onChange(() => {
      throw new Error('boom');
    });
    local.onChange((_, shardIds) => seen.push([...shardIds]));
    local.set('T', 4, 'x');
    expect(seen).toEqual([[4]]);
  });

  it('a clock that fails while merging a remote timestamp does not hide the slot', () => {
    let broken = false;
    const local = new PlacementStore({ node: 'a', now: () => (broken ? Number.NaN : 1_000) });
    const remote = new PlacementStore({ node: 'b', now: () => 1_000 });
    remote.set('T', 1, 'x');
    broken = true;
    local.applyUpdate(remote.encodeDiff(local.encodeStateVector()));
    expect(local.snapshot('T').placements.get(1)?.target).toBe('x');
  });
});

describe('typeNames', () => {
  it('is the same frozen array until a type is added, sorted, including types learnt from peers', () => {
    const a = new PlacementStore({ node: 'a' });
    const b = new PlacementStore({ node: 'b' });
    a.set('Zeta', 1, 'x');
    const first = a.typeNames();
    a.set('Zeta', 2, 'y');
    expect(a.typeNames()).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    b.set('Alpha', 1, 'x');
    a.applyUpdate(b.encodeDiff(a.encodeStateVector()));
    expect(a.typeNames()).toEqual(['Alpha', 'Zeta']);
    expect(first).toEqual(['Zeta']);
  });
});
