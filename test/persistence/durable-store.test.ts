// The durable store (crdt/persistence/durable-store.ts): a replica rebuilt from its persistence equals the one that
// wrote it, whatever was written; replication sends only committed state; a failed commit rejects the write, keeps
// reads, and stops this replica sending anything that could carry the rejected write.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DurablePlacementStore,
  EMPTY_STATE_VECTOR,
  PersistenceError,
  PlacementReplicator,
  PlacementStore,
  createMemoryVolume,
  memoryPersistence,
  whenDurable,
  type MemoryVolume,
  type PlacementPersistence,
  type SyncFrame,
} from '../../crdt/index.js';

const T = 'Counter';

/** A memory persistence whose commits the test releases (or fails) by hand. */
function heldPersistence(volume: MemoryVolume): {
  persistence: PlacementPersistence;
  release(): void;
  failNext(): void;
  held(): number;
} {
  const inner = memoryPersistence({ volume });
  let waiting: Array<{ run: () => void; fail: () => void }> = [];
  let failing = false;
  const hold = (write: () => Promise<void>): Promise<void> =>
    new Promise((resolve, reject) => {
      waiting.push({
        run: () => void write().then(resolve, reject),
        fail: () => reject(new PersistenceError('storage_unavailable', 'commit failed: ENOSPC (injected)')),
      });
    });
  return {
    persistence: {
      load: () => inner.load(),
      append: (update) => hold(() => inner.append(update)),
      writeSnapshot: (snapshot) => hold(() => inner.writeSnapshot(snapshot)),
      stats: () => inner.stats(),
      close: () => inner.close(),
    },
    release: () => {
      const batch = waiting;
      waiting = [];
      for (const write of batch) (failing ? write.fail : write.run)();
    },
    failNext: () => {
      failing = true;
    },
    held: () => waiting.length,
  };
}

/** A replicator whose link records frames per peer instead of sending them. */
function recordingReplicator(store: PlacementStore): {
  replicator: PlacementReplicator;
  sent: Array<{ peer: string; frame: SyncFrame }>;
} {
  const sent: Array<{ peer: string; frame: SyncFrame }> = [];
  const replicator = new PlacementReplicator(
    store,
    { sendFrame: (peer, frame) => void sent.push({ peer, frame }) },
    {
      setInterval: () => 0,
      clearInterval: () => undefined,
    },
  );
  return { replicator, sent };
}

const placementsOf = (store: PlacementStore): Array<[number, string]> =>
  [...store.snapshot(T).placements]
    .map(([shard, p]): [number, string] => [shard, p.target])
    .sort((a, b) => a[0] - b[0]);

/** Opens `node`'s durable store on a memory volume, with the test's clock. */
const openOn = (volume: MemoryVolume, now: () => number, node = 'n1'): Promise<DurablePlacementStore> =>
  DurablePlacementStore.open({ node, now, persistence: memoryPersistence({ volume }) });

describe('DurablePlacementStore', () => {
  it('a store reopened on the same volume has every placement, removal, remote write and compaction', async () => {
    const volume = createMemoryVolume();
    let t = 1_000;
    const first = await openOn(volume, () => t++);
    expect(first.restored).toBe(false);
    const peer = new PlacementStore({ node: 'n2', now: () => t++ });
    for (let shard = 0; shard < 10; shard++) first.set(T, shard, `a-${shard}`);
    peer.set(T, 20, 'from-peer');
    first.applyUpdate(peer.encodeDiff(first.encodeStateVector()));
    first.compact();
    first.remove(T, 3);
    first.setMany(T, [
      { shardId: 4, target: 'b-4' },
      { shardId: 5, target: 'b-5' },
    ]);
    await first.flush();
    // The compaction wrote a snapshot and dropped the log before it: only the later writes remain as records.
    expect(first.storageHealth().logRecordsSinceSnapshot).toBe(2);
    await first.persistence.close();

    const second = await openOn(volume, () => t++);
    expect(second.restored).toBe(true);
    expect(placementsOf(second)).toEqual(placementsOf(first));
    expect(second.snapshot(T).placements.get(3)).toBeUndefined();
    expect(second.snapshot(T).placements.get(20)?.target).toBe('from-peer');
    expect(second.generation).toBe(first.generation);
    await second.persistence.close();
  });

  it('rebuilds exactly what it held for any sequence of writes, removals, remote updates and compactions', async () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), shard: fc.nat(7), target: fc.constantFrom('x', 'y', 'z') }),
      fc.record({ kind: fc.constant('remove' as const), shard: fc.nat(7) }),
      fc.record({ kind: fc.constant('peer' as const), shard: fc.nat(7), target: fc.constantFrom('p', 'q') }),
      fc.record({ kind: fc.constant('compact' as const) }),
    );
    await fc.assert(
      // A byte bound of 1 or 200 compacts the store at (almost) every snapshot the log's length calls for.
      fc.asyncProperty(
        fc.array(op, { maxLength: 40 }),
        fc.constantFrom(1, 2, 5, 1_000),
        fc.constantFrom(1, 200, 1_000_000),
        async (ops, snapshotAfterRecords, snapshotAfterLogBytes) => {
          const volume = createMemoryVolume();
          let t = 1_000;
          const options = { snapshotAfterRecords, snapshotAfterLogBytes };
          const store = await DurablePlacementStore.open({
            node: 'n1',
            now: () => t++,
            persistence: memoryPersistence({ volume }),
            ...options,
          });
          const peer = new PlacementStore({ node: 'n2', now: () => t++ });
          for (const o of ops) {
            if (o.kind === 'set') store.set(T, o.shard, o.target);
            else if (o.kind === 'remove') store.remove(T, o.shard);
            else if (o.kind === 'compact') store.compact();
            else {
              peer.set(T, o.shard, o.target);
              store.applyUpdate(peer.encodeDiff(store.encodeStateVector()));
            }
          }
          await store.flush();
          await store.persistence.close();
          const rebuilt = await openOn(volume, () => t++);
          expect(placementsOf(rebuilt)).toEqual(placementsOf(store));
          expect(rebuilt.storageHealth().logRecordsSinceSnapshot).toBeLessThanOrEqual(snapshotAfterRecords);
          await rebuilt.persistence.close();
        },
      ),
      { numRuns: 60 },
    );
  });

  it('pushes a local write to peers only once its append is committed, and answers sync only with committed state', async () => {
    const held = heldPersistence(createMemoryVolume());
    const store = await DurablePlacementStore.open({ node: 'n1', persistence: held.persistence });
    const { replicator, sent } = recordingReplicator(store);
    replicator.addPeer('n2');
    sent.length = 0;
    store.set(T, 1, 'a');
    replicator.receiveFrame('n2', { kind: 'step1', stateVector: EMPTY_STATE_VECTOR });
    expect(sent).toEqual([]);
    const durable = whenDurable(store);
    held.release();
    await durable;
    await Promise.resolve();
    expect(sent.map(({ frame }) => frame.kind).sort()).toEqual(['step2', 'update']);
    const receiver = new PlacementStore({ node: 'n2' });
    for (const { frame } of sent) if (frame.kind !== 'step1') receiver.applyUpdate(frame.update);
    expect(receiver.snapshot(T).placements.get(1)?.target).toBe('a');
    replicator.close();
  });

  it('after a failed commit: the write is rejected, later writes are refused, reads go on, and nothing of it is sent', async () => {
    const volume = createMemoryVolume();
    const held = heldPersistence(volume);
    const logged: string[] = [];
    const store = await DurablePlacementStore.open({
      node: 'n1',
      persistence: held.persistence,
      log: (event) => void logged.push(event.message),
    });
    store.set(T, 1, 'kept');
    held.release();
    await store.flush();
    const { replicator, sent } = recordingReplicator(store);
    replicator.addPeer('n2');
    sent.length = 0;

    store.set(T, 2, 'rejected');
    held.failNext();
    held.release();
    const error = await store.flush().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PersistenceError);
    expect((error as PersistenceError).code).toBe('storage_unavailable');
    expect(() => store.set(T, 3, 'x')).toThrow(PersistenceError);
    expect(() => store.remove(T, 1)).toThrow(PersistenceError);
    expect(store.storageHealth().failure).toMatch(/refuses placement writes/);
    expect(logged.filter((message) => message.includes('ENOSPC'))).toHaveLength(1);
    expect(store.snapshot(T).placements.get(1)?.target).toBe('kept');

    replicator.receiveFrame('n2', { kind: 'step1', stateVector: EMPTY_STATE_VECTOR });
    const peer = new PlacementStore({ node: 'n2' });
    peer.set(T, 9, 'peer');
    replicator.receiveFrame('n2', { kind: 'update', update: peer.encodeDiff(EMPTY_STATE_VECTOR) });
    await Promise.resolve();
    expect(sent.filter(({ frame }) => frame.kind !== 'step1')).toEqual([]);
    // Remote updates still apply: this node's reads stay current.
    expect(store.snapshot(T).placements.get(9)?.target).toBe('peer');
    replicator.close();
    await held.persistence.close();

    // On disk only the acknowledged write: a restart drops the rejected one.
    const again = await DurablePlacementStore.open({ node: 'n1', persistence: memoryPersistence({ volume }) });
    expect(placementsOf(again)).toEqual([[1, 'kept']]);
    await again.persistence.close();
  });

  it('refuses to open over a record it cannot apply, saying how to recover', async () => {
    const volume = createMemoryVolume();
    const disk = memoryPersistence({ volume });
    const writer = new PlacementStore({ node: 'n1' });
    const valid: Uint8Array[] = [];
    writer.onUpdate((update) => void valid.push(update));
    writer.set(T, 1, 'a');
    writer.set(T, 2, 'b');
    // Stored intact but not a placement update (what a bug or a foreign writer could leave), between two
    // good records: the replay, which merges runs of records, still names the bad one.
    await disk.append(valid[0] as Uint8Array);
    await disk.append(new Uint8Array([255, 1, 2, 3]));
    await disk.append(valid[1] as Uint8Array);
    await disk.close();
    const error = await DurablePlacementStore.open({ node: 'n1', persistence: memoryPersistence({ volume }) }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PersistenceError);
    expect((error as PersistenceError).code).toBe('corrupt');
    expect((error as PersistenceError).message).toMatch(/log record 2 .* cannot be applied.*empty data directory/s);
  });

  it('keeps what a pin carries beyond its target (mode, expiry, provenance) through set, setMany and a reopen', async () => {
    const volume = createMemoryVolume();
    let t = 1_000;
    const first = await openOn(volume, () => t++);
    first.set(T, 1, 'zone=b', { mode: 'require', reason: 'GDPR tenant 17' });
    first.setMany(T, [{ shardId: 2, target: 'app@h:1', meta: { by: 'ops@host', expiresAt: 9_000 } }]);
    await whenDurable(first);
    await first.persistence.close();
    const second = await openOn(volume, () => t++);
    expect(second.snapshot(T).placements.get(1)?.meta).toEqual({ mode: 'require', reason: 'GDPR tenant 17' });
    expect(second.snapshot(T).placements.get(2)?.meta).toEqual({ by: 'ops@host', expiresAt: 9_000 });
    await second.persistence.close();
  });

  it('an in-memory store is durable at once (whenDurable resolves)', async () => {
    const store = new PlacementStore({ node: 'n1' });
    store.set(T, 1, 'a');
    await expect(whenDurable(store)).resolves.toBeUndefined();
  });
});
