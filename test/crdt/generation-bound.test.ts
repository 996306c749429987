// Issue 27 case 3: one forged update of generation 2^53 - 1 must not move any replica there, from a node that
// is not a member nor from one that is; a peer honestly several generations ahead is still followed.
import { describe, expect, it } from 'vitest';
import { PlacementReplicator, PlacementStore, encodeSyncFrame } from '../../crdt/index.js';
import { decodeWireUpdate, encodeWireUpdate } from '../../crdt/wire.js';
import { ManualTimers, MemoryNetwork, prng, recordingLog, view } from './helpers.js';

function mesh(names: readonly string[], seed = 7) {
  const random = prng(seed);
  const net = new MemoryNetwork(random);
  const timers = new ManualTimers();
  const { events, log } = recordingLog();
  const stores = names.map((node) => new PlacementStore({ node, now: () => 1_000_000 }));
  names.forEach((name, i) => {
    const replicator = new PlacementReplicator(stores[i] as PlacementStore, net.linkFor(name), {
      random,
      log,
      setInterval: timers.setInterval,
      clearInterval: timers.clearInterval,
    });
    net.replicators.set(name, replicator);
    for (const peer of names) if (peer !== name) replicator.addPeer(peer);
  });
  net.flush();
  const settle = (): void => {
    for (let round = 0; round < 30; round++) {
      timers.fire();
      net.flush();
    }
  };
  return {
    net,
    stores,
    events,
    settle,
    replicator: (name: string) => net.replicators.get(name) as PlacementReplicator,
  };
}

/** A well-formed update (a real write of `writer`) claiming `generation`: 56 bytes or so, like the issue's. */
function forgedUpdate(generation: number, writer = 'mallory'): Uint8Array {
  const source = new PlacementStore({ node: writer, now: () => 1_000_000 });
  let update: Uint8Array | undefined;
  source.onUpdate((bytes) => (update = bytes));
  source.set('T', 1, 'evil');
  const doc = decodeWireUpdate(update as Uint8Array, 1_000).doc;
  return encodeWireUpdate(generation, undefined, doc);
}

const POISON = Number.MAX_SAFE_INTEGER;

describe('generation bound (issue 27 case 3)', () => {
  it('a forged update of generation 2^53-1 from a non-member is rejected and changes nothing; replication goes on', () => {
    const { stores, settle, replicator, events } = mesh(['a', 'b', 'c']);
    const [a, b, c] = stores as [PlacementStore, PlacementStore, PlacementStore];
    replicator('a').receive('mallory', encodeSyncFrame({ kind: 'update', update: forgedUpdate(POISON) }));
    expect(a.generation).toBe(0);
    expect(replicator('a').stats().framesRejected).toBe(1);
    expect(events.some((e) => (e.details as { code?: string } | undefined)?.code === 'implausible_generation')).toBe(
      true,
    );
    a.compact();
    b.set('T', 2, 'b-target');
    c.set('T', 3, 'c-target');
    settle();
    for (const store of stores) {
      expect(store.generation).toBe(1);
      expect(view(store)).toEqual(view(a));
      expect(store.snapshot('T').placements.get(2)?.target).toBe('b-target');
      expect(store.snapshot('T').placements.has(1)).toBe(false);
    }
  });

  it('the same update sent as a member is not applied (deferred, not poisoning), and every replica keeps replicating', () => {
    const { stores, settle, replicator } = mesh(['a', 'b', 'c']);
    const [a, b] = stores as [PlacementStore, PlacementStore];
    // Sent "from b": a trusts b for one generation more per frame, not for 2^53.
    for (let i = 0; i < 5; i++)
      replicator('a').receive('b', encodeSyncFrame({ kind: 'update', update: forgedUpdate(POISON, 'b') }));
    expect(a.generation).toBe(0);
    expect(a.snapshot('T').placements.has(1)).toBe(false);
    b.compact();
    a.set('T', 4, 'a-target');
    settle();
    for (const store of stores) {
      expect(store.generation).toBeLessThan(10);
      expect(store.snapshot('T').placements.get(4)?.target).toBe('a-target');
      expect(view(store)).toEqual(view(a));
    }
  });

  it('a replica five generations behind (it was partitioned while a peer compacted) catches up without a rejected frame', () => {
    const { net, stores, settle, replicator } = mesh(['a', 'b', 'c']);
    const [a, , c] = stores as [PlacementStore, PlacementStore, PlacementStore];
    net.partition = new Map([['c', 1]]);
    for (let i = 0; i < 5; i++) {
      a.set('T', i, `gen-${i}`);
      a.compact();
      net.flush();
    }
    expect(c.generation).toBe(0);
    net.partition = new Map();
    settle();
    expect(c.generation).toBe(a.generation);
    expect(view(c)).toEqual(view(a));
    for (const name of ['a', 'b', 'c']) expect(replicator(name).stats().framesRejected).toBe(0);
  });
});
