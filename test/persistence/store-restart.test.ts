// The wiring documented in crdt/persistence/persistence.ts, checked end to end on a real directory: a store that
// appends its own updates and the remote updates it applies, and snapshots after compacting, is rebuilt
// from disk by a new store with the same placements, generation and base.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EMPTY_STATE_VECTOR, PlacementStore } from '../../crdt/index.js';
import { openLmdbPersistence } from '../../crdt/persistence/lmdb-persistence.js';

const T = 'Counter';
const root = mkdtempSync(join(tmpdir(), 'placement-restart-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('a store rebuilt from its persistence', () => {
  it('has the placements, generation and base it had before the restart', async () => {
    const dir = join(root, 'n1');
    const disk = await openLmdbPersistence(dir);
    let t = 1_000;
    const store = new PlacementStore({ node: 'n1', now: () => t++ });
    const peer = new PlacementStore({ node: 'n2', now: () => t++ });
    const writes: Array<Promise<void>> = [];
    store.onUpdate((update, origin) => {
      if (origin === 'local') writes.push(disk.append(update));
    });
    const fromPeer = (): void => {
      const update = peer.encodeDiff(store.encodeStateVector());
      store.applyUpdate(update);
      writes.push(disk.append(update));
    };
    for (let shard = 0; shard < 20; shard++) store.set(T, shard, `node-${shard % 3}`);
    peer.set(T, 3, 'peer-target');
    fromPeer();
    store.compact();
    writes.push(disk.writeSnapshot(store.encodeDiff(EMPTY_STATE_VECTOR)));
    store.set(T, 5, 'after-compaction');
    store.remove(T, 6);
    peer.set(T, 7, 'peer-late');
    fromPeer();
    await Promise.all(writes);
    await disk.close();

    const reopened = await openLmdbPersistence(dir);
    const { snapshot, log } = await reopened.load();
    expect(log.length).toBeGreaterThan(0);
    const rebuilt = new PlacementStore({ node: 'n1', now: () => t++ });
    if (snapshot !== undefined) rebuilt.applyUpdate(snapshot);
    for (const update of log) rebuilt.applyUpdate(update);
    await reopened.close();

    expect([...rebuilt.snapshot(T).placements]).toEqual([...store.snapshot(T).placements]);
    expect(rebuilt.generation).toBe(store.generation);
    expect(rebuilt.stats().baseSlots).toBe(store.stats().baseSlots);
    expect(rebuilt.snapshot(T).placements.get(3)?.target).toBe('peer-target');
    expect(rebuilt.snapshot(T).placements.get(6)).toBeUndefined();
  });
});
