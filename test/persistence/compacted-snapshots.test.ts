// What keeps a durable replica's restart fast and its disk near its state (crdt/persistence/durable-store.ts): a log
// grown past its bound is compacted away before the snapshot, so the snapshot is the compacted state; a
// peer's late update folded into the base is written as a snapshot at once (its own record would replay
// stale); and any mix of writes, peer updates, compactions on either side and reopens rebuilds the replica.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DurablePlacementStore,
  EMPTY_STATE_VECTOR,
  PlacementStore,
  createMemoryVolume,
  memoryPersistence,
  type MemoryVolume,
} from '../../crdt/index.js';

const T = 'Counter';

const placementsOf = (store: PlacementStore): Array<[number, string, string]> =>
  [...store.snapshot(T).placements]
    .map(([shard, p]): [number, string, string] => [shard, p.target, p.writer])
    .sort((a, b) => a[0] - b[0]);

async function reopen(
  store: DurablePlacementStore,
  volume: MemoryVolume,
  options: object,
  now: () => number,
): Promise<DurablePlacementStore> {
  await store.flush();
  await store.persistence.close();
  return DurablePlacementStore.open({ node: store.node, now, persistence: memoryPersistence({ volume }), ...options });
}

describe('snapshots of a durable store are the compacted state', () => {
  it('compacts a log grown past its byte bound: the snapshot holds no history and the reopen replays only the log since', async () => {
    let t = 1_000;
    const now = (): number => t++;
    const volume = createMemoryVolume();
    const options = { snapshotAfterLogBytes: 4_096 };
    const store = await DurablePlacementStore.open({
      node: 'n1',
      now,
      persistence: memoryPersistence({ volume }),
      ...options,
    });
    for (let i = 0; i < 2_000; i++) store.set(T, i % 20, `t-${i % 7}`);
    await store.flush();
    expect(store.generation).toBeGreaterThan(0);
    const health = store.storageHealth();
    expect(health.logBytesSinceSnapshot).toBeLessThanOrEqual(4_096 + 200);

    // The snapshot carries the base alone: applied to an empty replica it leaves no document items.
    const { snapshot } = await store.persistence.load();
    const fromSnapshot = new PlacementStore({ node: 'probe', now });
    fromSnapshot.applyUpdate(snapshot as Uint8Array);
    expect(fromSnapshot.stats().documentItems).toBe(0);
    expect(fromSnapshot.stats().baseSlots).toBe(20);

    const rebuilt = await reopen(store, volume, options, now);
    expect(placementsOf(rebuilt)).toEqual(placementsOf(store));
    expect(rebuilt.generation).toBe(store.generation);
    expect(rebuilt.stats().documentItems).toBe(health.logRecordsSinceSnapshot);
    await rebuilt.persistence.close();
  });

  it('without the bound reached nothing is compacted: the snapshot policy alone moves no generation', async () => {
    const volume = createMemoryVolume();
    const store = await DurablePlacementStore.open({
      node: 'n1',
      persistence: memoryPersistence({ volume }),
      snapshotAfterLogBytes: 1_000_000,
    });
    for (let i = 0; i < 500; i++) store.set(T, i % 20, `t-${i % 7}`);
    await store.flush();
    expect(store.generation).toBe(0);
    expect(store.storageHealth().logRecordsSinceSnapshot).toBe(500);
    await store.persistence.close();
  });

  it('a peer update of the generation before is on disk at once, folded into a snapshot', async () => {
    let t = 1_000;
    const now = (): number => t++;
    const volume = createMemoryVolume();
    const store = await DurablePlacementStore.open({ node: 'n1', now, persistence: memoryPersistence({ volume }) });
    const peer = new PlacementStore({ node: 'n2', now });
    store.set(T, 1, 'mine');
    peer.applyUpdate(store.encodeDiff(peer.encodeStateVector()));
    store.compact();
    await store.flush();
    // The peer has not followed yet: what it writes is an update of generation 0, folded into the base here.
    const late: Uint8Array[] = [];
    peer.onUpdate((update) => void late.push(update));
    peer.set(T, 2, 'late');
    expect(late).toHaveLength(1);
    store.applyUpdate(late[0] as Uint8Array);
    expect(store.snapshot(T).placements.get(2)?.target).toBe('late');
    await store.flush();
    expect(store.storageHealth().logRecordsSinceSnapshot).toBe(0);

    const rebuilt = await reopen(store, volume, {}, now);
    expect(rebuilt.snapshot(T).placements.get(2)?.target).toBe('late');
    expect(placementsOf(rebuilt)).toEqual(placementsOf(store));
    await rebuilt.persistence.close();
  });

  it('rebuilds the replica after any mix of writes, peer updates, compactions on both sides and reopens', async () => {
    const op = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record({
          kind: fc.constant('set' as const),
          shard: fc.nat(9),
          target: fc.constantFrom('x', 'y', 'z'),
        }),
      },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove' as const), shard: fc.nat(9) }) },
      {
        weight: 2,
        arbitrary: fc.record({
          kind: fc.constant('peer' as const),
          shard: fc.nat(9),
          target: fc.constantFrom('p', 'q'),
          sync: fc.boolean(),
        }),
      },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('peerCompacts' as const) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('compact' as const) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('reopen' as const) }) },
    );
    const policy = fc.record({
      snapshotAfterRecords: fc.constantFrom(1, 3, 1_000_000),
      snapshotAfterLogBytes: fc.constantFrom(1, 300, 1_000_000),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 50 }), policy, async (ops, options) => {
        let t = 1_000;
        const now = (): number => t++;
        const volume = createMemoryVolume();
        let store = await DurablePlacementStore.open({
          node: 'n1',
          now,
          persistence: memoryPersistence({ volume }),
          ...options,
        });
        const peer = new PlacementStore({ node: 'n2', now });
        // Peer updates reach the store as they are made; the store's reach the peer by sync, now and then.
        peer.onUpdate((update, origin) => {
          if (origin === 'local') store.applyUpdate(update);
        });
        for (const o of ops) {
          if (o.kind === 'set') store.set(T, o.shard, o.target);
          else if (o.kind === 'remove') store.remove(T, o.shard);
          else if (o.kind === 'compact') store.compact();
          else if (o.kind === 'peerCompacts') peer.compact();
          else if (o.kind === 'peer') {
            // Without the sync first, a peer behind the store's compaction writes an update it folds late.
            if (o.sync) peer.applyUpdate(store.encodeDiff(peer.encodeStateVector()));
            peer.set(T, o.shard, o.target);
          } else {
            const before = placementsOf(store);
            store = await reopen(store, volume, options, now);
            expect(placementsOf(store)).toEqual(before);
          }
        }
        const before = placementsOf(store);
        const rebuilt = await reopen(store, volume, options, now);
        expect(placementsOf(rebuilt)).toEqual(before);
        // And it still converges with the peer: nothing it lost, nothing it invented.
        for (let round = 0; round < 3; round++) {
          rebuilt.applyUpdate(peer.encodeDiff(rebuilt.encodeStateVector()));
          peer.applyUpdate(rebuilt.encodeDiff(peer.encodeStateVector()));
        }
        expect(placementsOf(rebuilt)).toEqual(placementsOf(peer));
        expect(rebuilt.encodeDiff(EMPTY_STATE_VECTOR).length).toBeGreaterThan(0);
        await rebuilt.persistence.close();
      }),
      { numRuns: 80 },
    );
  });
});
