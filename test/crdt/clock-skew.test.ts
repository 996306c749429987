// Regressions of the far-future timestamp finding: a peer's value at wallMs 2^53-1 / counter 65535 once
// made the next write's successor unrepresentable, which every replica rejected while the write was
// acknowledged, and the writer's later updates then waited forever behind it. Also the timestamp rule's
// edges: out-of-range local writes throw, held values, forced removal, and the replicator's health stats.
import * as Y from 'yjs';
import { describe, expect, it } from 'vitest';
import {
  EMPTY_STATE_VECTOR,
  MAX_HLC_COUNTER,
  MAX_HLC_WALL_MS,
  PlacementReplicator,
  PlacementStore,
  PlacementStoreError,
  compareHlc,
} from '../../crdt/index.js';
import { ManualTimers, MemoryNetwork, asWireUpdate, prng, recordingLog } from './helpers.js';

const BASE = 1_700_000_000_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const MONTH = 30 * DAY;

/** A hostile peer's update: one slot of `writer` for shard `shardId` of 'T' with the given timestamp. */
function forged(writer: string, shardId: number, wallMs: number, counter: number): Uint8Array {
  const doc = new Y.Doc();
  doc.clientID = 4242;
  doc.getMap('T').set(`${shardId}\u0000${writer}`, ['app@forged:1', wallMs, counter]);
  return asWireUpdate(Y.encodeStateAsUpdateV2(doc));
}

/** Stores whose local updates are queued per receiver; `deliver()` hands every queued update over. */
function cluster(names: readonly string[], now: (name: string) => number = () => BASE) {
  const stores = names.map((node) => new PlacementStore({ node, now: () => now(node) }));
  const queue: Array<{ to: PlacementStore; update: Uint8Array }> = [];
  for (const from of stores) {
    from.onUpdate((update, origin) => {
      if (origin !== 'local') return;
      for (const to of stores) if (to !== from) queue.push({ to, update });
    });
  }
  const deliver = () => {
    for (const { to, update } of queue.splice(0)) to.applyUpdate(update);
  };
  return { stores, deliver };
}

describe('a far-future timestamp cannot freeze a shard or stall replication', () => {
  it('the value at 2^53-1 / 65535 is quarantined, the shard stays writable, and the writer keeps replicating', () => {
    const { stores, deliver } = cluster(['a', 'b', 'c']);
    const [a, b, c] = stores as [PlacementStore, PlacementStore, PlacementStore];
    const evil = forged('evil', 0, Number.MAX_SAFE_INTEGER, MAX_HLC_COUNTER);
    for (const store of stores) store.applyUpdate(evil);
    for (const store of stores) {
      expect(store.snapshot('T').placements.has(0)).toBe(false);
      expect(store.stats()).toMatchObject({
        rejectedUpdates: 0,
        quarantinedValues: 1,
        rejectedValues: { outOfRange: 1, aheadOfClock: 0 },
      });
    }

    const write = a.set('T', 0, 'app@a:1');
    expect(write.hlc.wallMs).toBe(BASE);
    deliver();
    for (const store of stores) expect(store.snapshot('T').placements.get(0)).toEqual(write);
    // the same writer's later writes to other shards reach the others
    const later = a.set('T', 1, 'app@a:2');
    const fromB = b.set('T', 2, 'app@b:1');
    deliver();
    for (const store of [b, c]) expect(store.snapshot('T').placements.get(1)).toEqual(later);
    expect(c.snapshot('T').placements.get(2)).toEqual(fromB);
    for (const store of stores) expect(store.stats().awaitingMissingUpdates).toBe(false);

    // a node (re)started afterwards syncs every placement
    const fresh = new PlacementStore({ node: 'fresh', now: () => BASE });
    fresh.applyUpdate(a.encodeDiff(EMPTY_STATE_VECTOR));
    expect([...fresh.snapshot('T').placements.keys()]).toEqual([0, 1, 2]);
  });

  it('a local write whose timestamp would leave the representable range throws hlc_out_of_range and writes nothing', () => {
    const store = new PlacementStore({ node: 'a', now: () => MAX_HLC_WALL_MS + 1 });
    const updates: Uint8Array[] = [];
    store.onUpdate((update) => updates.push(update));
    expect(() => store.set('T', 1, 'x')).toThrow(
      expect.objectContaining({ name: 'PlacementStoreError', code: 'hlc_out_of_range' }),
    );
    expect(() => store.remove('T', 1)).toThrow(PlacementStoreError);
    expect(() => store.setMany('T', [{ shardId: 2, target: 'y' }])).toThrow(PlacementStoreError);
    expect(updates).toEqual([]);
    expect(store.snapshot('T').placements.size).toBe(0);
    expect(store.stats().slots).toBe(0);
  });

  it('a value at the range limit is refused as a successor base too: the next write stays representable', () => {
    const store = new PlacementStore({ node: 'a', now: () => BASE });
    store.applyUpdate(forged('evil', 3, MAX_HLC_WALL_MS + 1, 0));
    expect(store.set('T', 3, 'x').hlc).toEqual({ wallMs: BASE, counter: 0, node: 'a' });
  });

  it('a value more than maxAheadMs ahead is held: not shown, not a successor base, counted, logged once per node; shown once the clock is near', () => {
    const { events, log } = recordingLog();
    const now = { t: 10 * HOUR };
    const local = new PlacementStore({ node: 'local', now: () => now.t, log, maxAheadMs: HOUR });
    const fast = new PlacementStore({ node: 'fast', now: () => 12 * HOUR });
    const faster = new PlacementStore({ node: 'faster', now: () => 13 * HOUR });
    const fast1 = fast.set('T', 1, 'fast-1');
    fast.set('T', 2, 'fast-2');
    faster.set('T', 3, 'faster-3');
    for (const from of [fast, faster]) local.applyUpdate(from.encodeDiff(EMPTY_STATE_VECTOR));

    expect(local.snapshot('T').placements.size).toBe(0);
    // A write to a shard with a held value would lose to it wherever the clock is right: refused (issue 27).
    expect(() => local.set('T', 2, 'mine')).toThrow(expect.objectContaining({ code: 'clock_skew' }));
    expect(local.snapshot('T').placements.has(2)).toBe(false);
    const mine = local.set('T', 4, 'mine');
    expect(mine.hlc.wallMs).toBe(10 * HOUR); // the clock did not follow the held values
    expect(local.snapshot('T').placements.get(4)).toEqual(mine);
    expect(local.stats()).toMatchObject({
      heldValues: 3,
      rejectedValues: { outOfRange: 0, aheadOfClock: 3 },
      rejectedUpdates: 0,
    });
    const warnings = events.filter((e) => e.level === 'warn');
    expect(warnings.map((w) => (w.details as { node: string }).node).sort()).toEqual(['fast', 'faster']);
    expect(warnings[0]?.message).toMatch(/held until the clock is within 3600000 ms/);

    // once the local clock is within maxAheadMs of a held value, it counts like any other
    now.t = 11 * HOUR;
    expect(local.snapshot('T').placements.get(1)).toEqual(fast1);
    expect(local.snapshot('T').placements.get(2)?.target).toBe('fast-2');
    expect(local.snapshot('T').placements.has(3)).toBe(false);
    expect(local.stats().heldValues).toBe(1);
    // and admission is not taken back when the clock steps back: the operator overrides it by successor
    now.t = 10 * HOUR;
    const override = local.set('T', 1, 'operator-choice');
    expect(compareHlc(override.hlc, fast1.hlc)).toBeGreaterThan(0);
    fast.applyUpdate(local.encodeDiff(fast.encodeStateVector()));
    for (const s of [local, fast]) expect(s.snapshot('T').placements.get(1)).toEqual(override);
  });

  it('maxAheadMs must be a finite number no smaller than maxDriftMs', () => {
    for (const maxAheadMs of [Number.NaN, Infinity, -1, 59_999]) {
      expect(() => new PlacementStore({ node: 'a', maxAheadMs })).toThrow(
        expect.objectContaining({ code: 'invalid_option' }),
      );
    }
    expect(() => new PlacementStore({ node: 'a', maxDriftMs: 10, maxAheadMs: 10 })).not.toThrow();
  });

  it('a node restarted with its clock an hour behind still overrides what its earlier incarnation wrote', () => {
    const before = new PlacementStore({ node: 'a', now: () => BASE });
    const b = new PlacementStore({ node: 'b', now: () => BASE });
    const old = before.set('T', 1, 'app@a:1');
    b.applyUpdate(before.encodeDiff(b.encodeStateVector()));
    // Even with a hold threshold below its lag: values under its own name are its own past, never held.
    const restarted = new PlacementStore({ node: 'a', now: () => BASE - HOUR, maxAheadMs: 60_000 });
    restarted.applyUpdate(b.encodeDiff(EMPTY_STATE_VECTOR));
    expect(restarted.snapshot('T').placements.get(1)).toEqual(old);
    const next = restarted.set('T', 1, 'app@a:2');
    expect(compareHlc(next.hlc, old.hlc)).toBeGreaterThan(0);
    b.applyUpdate(restarted.encodeDiff(b.encodeStateVector()));
    expect(b.snapshot('T').placements.get(1)).toEqual(next);
  });

  it('a value a month ahead is held everywhere, and a forced removal deletes it on every replica', () => {
    const clocks: Record<string, number> = { a: BASE, b: BASE, x: BASE + MONTH };
    const { stores, deliver } = cluster(['a', 'b', 'x'], (name) => clocks[name] ?? BASE);
    const [a, b, x] = stores as [PlacementStore, PlacementStore, PlacementStore];
    const before = a.set('T', 0, 'app@a:1');
    deliver();
    x.set('T', 0, 'app@x:1');
    deliver();
    for (const store of [a, b]) {
      expect(store.snapshot('T').placements.get(0)).toEqual(before);
      expect(store.stats()).toMatchObject({ heldValues: 1, rejectedValues: { aheadOfClock: 1, outOfRange: 0 } });
    }
    expect(() => a.remove('T', 0, { force: 'yes' } as unknown as { force: boolean })).toThrow(
      expect.objectContaining({ code: 'invalid_option' }),
    );
    // x's clock is fixed; then the operator clears the shard
    clocks['x'] = BASE;
    a.remove('T', 0, { force: true });
    deliver();
    expect(a.stats().forcedRemovals).toBe(1);
    for (const store of stores) {
      expect(store.snapshot('T').placements.has(0)).toBe(false);
      expect(store.stats().heldValues).toBe(0);
    }
    // x, its clock fixed, does not bring its far-future value back...
    expect(x.stats().repairedSlots).toBe(0);
    // ...but its clock never runs backwards within one incarnation: writes are ordinary again after a restart
    expect(x.set('T', 5, 'app@x:5').hlc.wallMs).toBeGreaterThanOrEqual(BASE + MONTH);
    const restarted = new PlacementStore({ node: 'x', now: () => BASE });
    restarted.applyUpdate(a.encodeDiff(EMPTY_STATE_VECTOR));
    const again = restarted.set('T', 0, 'app@x:2');
    expect(again.hlc.wallMs).toBe(BASE);
    for (const store of [a, b]) {
      store.applyUpdate(restarted.encodeDiff(store.encodeStateVector()));
      expect(store.snapshot('T').placements.get(0)).toEqual(again);
    }
  });
});

describe('the replicator does not stall on a refused value, and reports when it is behind', () => {
  function mesh(names: readonly string[]) {
    const random = prng(7);
    const net = new MemoryNetwork(random);
    const timers = new ManualTimers();
    const stores = names.map((node) => new PlacementStore({ node, now: () => BASE }));
    names.forEach((name, i) => {
      const replicator = new PlacementReplicator(stores[i] as PlacementStore, net.linkFor(name), {
        random,
        setInterval: timers.setInterval,
        clearInterval: timers.clearInterval,
      });
      net.replicators.set(name, replicator);
    });
    for (const name of names) for (const peer of names) if (peer !== name) net.replicators.get(name)?.addPeer(peer);
    net.flush();
    return { net, stores, replicator: (name: string) => net.replicators.get(name) as PlacementReplicator };
  }

  it('one refused value from a peer does not hold back the later updates of the writer that overrode it', () => {
    const { net, stores, replicator } = mesh(['a', 'b', 'c']);
    const [a, b, c] = stores as [PlacementStore, PlacementStore, PlacementStore];
    // the far-future value arrives at a as a push from a hostile peer, and spreads by relay
    replicator('a').receive(
      'x',
      Uint8Array.from([2, ...lengthPrefixed(forged('evil', 0, Number.MAX_SAFE_INTEGER, MAX_HLC_COUNTER))]),
    );
    net.flush();
    const first = a.set('T', 0, 'app@a:1');
    const second = a.set('T', 1, 'app@a:2');
    net.flush();
    for (const store of [b, c]) {
      expect(store.snapshot('T').placements.get(0)).toEqual(first);
      expect(store.snapshot('T').placements.get(1)).toEqual(second);
      expect(store.stats().awaitingMissingUpdates).toBe(false);
    }
    for (const name of ['a', 'b', 'c']) {
      expect(replicator(name).stats()).toMatchObject({ framesRejected: 0, peersBehind: 0 });
    }
  });

  it('a replica missing an update says so (store and per peer) until anti-entropy fills the gap', () => {
    const { net, stores, replicator } = mesh(['a', 'b']);
    const [a, b] = stores as [PlacementStore, PlacementStore];
    net.dropRate = 1;
    a.set('T', 0, 'lost');
    net.flush();
    net.dropRate = 0;
    a.set('T', 1, 'arrives');
    net.flush();
    expect(b.snapshot('T').placements.has(1)).toBe(false); // waits for the lost predecessor
    expect(b.stats().awaitingMissingUpdates).toBe(true);
    replicator('a').antiEntropy(); // a's step 1 tells b what a has; b answers a, but is itself still behind
    net.queue.splice(0).forEach(({ from, to, bytes }) => net.replicators.get(to)?.receive(from, bytes));
    expect(replicator('b').stats()).toMatchObject({
      peersBehind: 1,
      peers: [expect.objectContaining({ peer: 'a', behind: true })],
    });
    replicator('b').antiEntropy();
    net.flush();
    expect(b.snapshot('T').placements.get(1)?.target).toBe('arrives');
    expect(b.stats().awaitingMissingUpdates).toBe(false);
    expect(replicator('b').stats()).toMatchObject({
      peersBehind: 0,
      peers: [expect.objectContaining({ peer: 'a', behind: false, synced: true })],
    });
  });
});

/** varUint length + bytes, as a sync frame payload (the frame type byte goes first). */
function lengthPrefixed(bytes: Uint8Array): number[] {
  const out: number[] = [];
  let n = bytes.length;
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return [...out, ...bytes];
}
