// Issue 27 case 4: a well-formed update whose base holds slots with shard ids beyond the type's shard
// count (the issue's: 1,000,000 slots, ids 1,000-1,000,999, of a 1,000-shard type) is rejected with a typed
// error and changes nothing; so is one that brings more slots at once than the store's maxUpdateSlots.
import { afterEach, describe, expect, it } from 'vitest';
import { PlacementStore, PlacementStoreError } from '../../crdt/index.js';
import { BaseState } from '../../crdt/base.js';
import { encodeBase, encodeWireUpdate } from '../../crdt/wire.js';
import { testAddress } from '../support/members.js';
import { forgedCluster, type ForgedCluster } from './forged-harness.js';

const TYPES = new Map([['Counter', { numberOfShards: 1_000 }]]);

function baseUpdate(typeName: string, firstShard: number, count: number, writer = 'mallory'): Uint8Array {
  const base = new BaseState();
  for (let i = 0; i < count; i++) {
    base.merge(typeName, {
      shardId: firstShard + i,
      writer,
      target: 'evil',
      hlc: { wallMs: 1_000, counter: 0, node: writer },
    });
  }
  return encodeWireUpdate(0, encodeBase(base), undefined);
}

let cluster: ForgedCluster | undefined;
afterEach(() => cluster?.close());

describe('slot bounds (issue 27 case 4)', () => {
  it('slots beyond the type shard count are rejected (shard_out_of_range) by every replica, from a non-member or a member', () => {
    cluster = forgedCluster(3, { entityTypes: TYPES });
    const { addresses, stores, replications } = cluster;
    const update = baseUpdate('Counter', 1_000, 20_000);
    cluster.forger(testAddress(41_999))(addresses[0] as NodeAddressOf, { type: 'PlacementUpdate', update });
    cluster.forger(addresses[2] as NodeAddressOf)(addresses[1] as NodeAddressOf, {
      type: 'PlacementSyncStep2',
      update,
    });
    for (const store of stores) {
      expect(store.stats().slots).toBe(0);
      expect(store.stats().baseSlots).toBe(0);
    }
    expect(stores[0]?.stats().rejectedUpdates).toBe(1);
    expect(stores[1]?.stats().rejectedUpdates).toBe(1);
    // Replication goes on: a write anywhere reaches every replica.
    (stores[2] as PlacementStore).set('Counter', 999, 'home');
    cluster.settle();
    for (const store of stores) expect(store.snapshot('Counter').placements.get(999)?.target).toBe('home');
    expect(replications[0]?.stats().framesRejected).toBe(1);
  });

  it('the store rejects the slot with a typed error and changes nothing', () => {
    const store = new PlacementStore({
      node: 'a',
      slotCheck: (typeName, shardId) => (typeName === 'Counter' && shardId >= 1_000 ? 'is beyond 1000' : null),
    });
    const error = (() => {
      try {
        store.applyUpdate(baseUpdate('Counter', 999, 2));
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(PlacementStoreError);
    expect((error as PlacementStoreError).code).toBe('shard_out_of_range');
    expect(store.snapshot('Counter').placements.size).toBe(0);
    // In range, the same kind of update is taken.
    store.applyUpdate(baseUpdate('Counter', 0, 1_000));
    expect(store.snapshot('Counter').placements.size).toBe(1_000);
  });

  it('an update bringing more than maxUpdateSlots slots at once is rejected (too_many_slots), even of a type this node does not know', () => {
    cluster = forgedCluster(2, { entityTypes: TYPES, store: { maxUpdateSlots: 5_000 } });
    const { addresses, stores } = cluster;
    cluster.forger(testAddress(41_998))(addresses[0] as NodeAddressOf, {
      type: 'PlacementUpdate',
      update: baseUpdate('Unknown', 0, 5_001),
    });
    expect(stores[0]?.stats().baseSlots).toBe(0);
    expect(stores[0]?.typeNames()).not.toContain('Unknown');
    cluster.forger(testAddress(41_998))(addresses[0] as NodeAddressOf, {
      type: 'PlacementUpdate',
      update: baseUpdate('Unknown', 0, 5_000),
    });
    expect(stores[0]?.stats().baseSlots).toBe(5_000);
    // Document slots count too: a store writing 5,001 shards in one go reaches its peer only through smaller updates.
    const big = new PlacementStore({ node: 'w' });
    let update: Uint8Array | undefined;
    big.onUpdate((bytes) => (update = bytes));
    big.setMany(
      'Counter',
      Array.from({ length: 5_001 }, (_, shardId) => ({ shardId: shardId % 1_000, target: `t${shardId}` })),
    );
    const small = new PlacementStore({ node: 'r', maxUpdateSlots: 999 });
    expect(() => small.applyUpdate(update as Uint8Array)).toThrow(/more than 999 slots/);
    expect(small.stats().slots).toBe(0);
  });
});

type NodeAddressOf = ReturnType<typeof testAddress>;
