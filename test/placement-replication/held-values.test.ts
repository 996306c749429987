// Issue 27 case 7 (held values): a value planted 30 days ahead was held everywhere, and when a node's clock
// came within 7 days of it, that node showed it instead of every write acknowledged since (the operator's
// later pin disappeared there). A write made while the value is held now carries it as an `over` mark and
// outranks it on every replica, whatever the clocks do later; later writes of the shard carry the mark on.
import * as Y from 'yjs';
import { afterEach, describe, expect, it } from 'vitest';
import type { PlacementStore } from '../../crdt/index.js';
import { encodeWireUpdate } from '../../crdt/wire.js';
import { testAddress } from '../support/members.js';
import { forgedCluster, type ForgedCluster } from './forged-harness.js';

const NOW = 1_780_000_000_000;
const DAY = 24 * 3_600_000;

let cluster: ForgedCluster | undefined;
afterEach(() => cluster?.close());

function planted(shardId: number, wallMs: number): Uint8Array {
  const doc = new Y.Doc();
  doc.clientID = 777_777;
  doc.getMap('T').set(`${shardId}\u0000mallory`, ['app@10.6.6.6:1', wallMs, 0]);
  return encodeWireUpdate(0, undefined, Y.encodeStateAsUpdateV2(doc));
}

describe('a value planted far ahead (issue 27 case 7)', () => {
  it('never overrides a write acknowledged after it arrived, on any replica, when clocks later reach it', () => {
    const clocks = [{ t: NOW }, { t: NOW }, { t: NOW }];
    cluster = forgedCluster(3, { clocks: clocks.map((clock) => () => clock.t) });
    const [a, b, c] = cluster.stores as [PlacementStore, PlacementStore, PlacementStore];
    cluster.forger(testAddress(41_980))(cluster.addresses[0] as ReturnType<typeof testAddress>, {
      type: 'PlacementUpdate',
      update: planted(1, NOW + 30 * DAY),
    });
    cluster.settle();
    for (const store of cluster.stores) expect(store.stats().heldValues).toBe(1);

    const pin = a.set('T', 1, 'app@10.0.0.1:1'); // the operator's pin, acknowledged
    cluster.settle();
    for (const store of cluster.stores) expect(store.snapshot('T').placements.get(1)).toEqual(pin);

    // b's clock comes within 7 days of the planted value: it is admitted there, and still does not win.
    (clocks[1] as { t: number }).t = NOW + 24 * DAY;
    cluster.settle();
    expect(b.stats().heldValues).toBe(0);
    for (const store of cluster.stores) expect(store.snapshot('T').placements.get(1)).toEqual(pin);

    // A later write, through the node whose clock passed the value, wins and carries the mark on.
    const later = b.set('T', 1, 'app@10.0.0.2:1');
    cluster.settle();
    a.compact(); // the mark survives compaction into the base
    cluster.settle();
    for (const clock of clocks) clock.t = NOW + 40 * DAY;
    cluster.settle();
    for (const store of [a, b, c]) expect(store.snapshot('T').placements.get(1)).toEqual(later);
  });

  it('a value planted ahead after the write was acknowledged may still win once clocks reach it (it arrived later)', () => {
    const clocks = [{ t: NOW }, { t: NOW }];
    cluster = forgedCluster(2, { clocks: clocks.map((clock) => () => clock.t) });
    const [a, b] = cluster.stores as [PlacementStore, PlacementStore];
    a.set('T', 2, 'app@10.0.0.1:1');
    cluster.settle();
    cluster.forger(testAddress(41_981))(cluster.addresses[1] as ReturnType<typeof testAddress>, {
      type: 'PlacementUpdate',
      update: planted(2, NOW + 30 * DAY),
    });
    cluster.settle();
    for (const clock of clocks) clock.t = NOW + 24 * DAY;
    cluster.settle();
    for (const store of [a, b]) expect(store.snapshot('T').placements.get(2)?.target).toBe('app@10.6.6.6:1');
  });
});
