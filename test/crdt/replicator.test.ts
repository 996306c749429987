// PlacementReplicator over recorded and in-memory links with manual or fake timers, including corrupt frames.
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  DEFAULT_ANTI_ENTROPY_INTERVAL_MS,
  PlacementReplicator,
  EMPTY_STATE_VECTOR,
  PlacementStore,
  decodeSyncFrame,
  encodeSyncFrame,
  type SyncFrame,
} from '../../crdt/index.js';
import { decodeWireUpdate } from '../../crdt/wire.js';
import { decodeDigest } from '../../crdt/wire-digest.js';
import { ManualTimers, MemoryNetwork, prng, recordingLog, stateVectorOf, view } from './helpers.js';

interface Sent {
  readonly peer: string;
  readonly frame: SyncFrame;
}

/** A replicator whose link records what it sends; nothing is delivered unless the test does it. */
function recorded(node = 'a', options: { random?: () => number; relayFanout?: number } = {}) {
  const store = new PlacementStore({ node, now: () => 1_000 });
  const sent: Sent[] = [];
  const timers = new ManualTimers();
  const { events, log } = recordingLog();
  const replicator = new PlacementReplicator(
    store,
    { send: (peer, bytes) => sent.push({ peer, frame: decodeSyncFrame(bytes) }) },
    { setInterval: timers.setInterval, clearInterval: timers.clearInterval, log, ...options },
  );
  return { store, sent, timers, events, replicator };
}

function mesh(names: readonly string[], seed = 1) {
  const random = prng(seed);
  const net = new MemoryNetwork(random);
  const timers = new ManualTimers();
  const stores = names.map((node) => new PlacementStore({ node }));
  names.forEach((name, i) => {
    net.replicators.set(
      name,
      new PlacementReplicator(stores[i] as PlacementStore, net.linkFor(name), {
        random,
        setInterval: timers.setInterval,
        clearInterval: timers.clearInterval,
      }),
    );
  });
  return { net, timers, stores, replicator: (name: string) => net.replicators.get(name) as PlacementReplicator };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('PlacementReplicator', () => {
  it('addPeer sends sync step 1; a step 1 is answered by a step 2 that brings the peer up to date', () => {
    const { net, stores, replicator } = mesh(['a', 'b']);
    const [a, b] = stores as [PlacementStore, PlacementStore];
    a.set('T', 1, 'x');
    a.remove('T', 2);
    b.set('U', 3, 'y');
    replicator('a').addPeer('b');
    expect(net.queue.map((m) => decodeSyncFrame(m.bytes).kind)).toEqual(['step1']);
    net.flush();
    // a asked b for what a lacks: a learns b's placement, b learns a's only when it asks in turn
    expect(a.snapshot('U').placements.get(3)?.target).toBe('y');
    expect(b.snapshot('T').placements.size).toBe(0);
    replicator('b').addPeer('a');
    net.flush();
    expect(view(a)).toEqual(view(b));
  });

  it('pushes every local update to every peer at once, and relays a digest of received ones, not back to the sender', () => {
    const { store, sent, replicator } = recorded('a');
    replicator.addPeer('b');
    replicator.addPeer('c');
    sent.length = 0;
    store.set('T', 1, 'x');
    expect(sent.map((s) => [s.peer, s.frame.kind])).toEqual([
      ['b', 'update'],
      ['c', 'update'],
    ]);
    sent.length = 0;
    const other = new PlacementStore({ node: 'z', now: () => 1_000 });
    const updates: Uint8Array[] = [];
    other.onUpdate((u) => updates.push(u));
    other.set('T', 2, 'y');
    replicator.receive('b', encodeSyncFrame({ kind: 'update', update: updates[0] as Uint8Array }));
    expect(sent.map((s) => [s.peer, s.frame.kind])).toEqual([['c', 'update']]);
    // not the content: which versions a holds, in an update that carries nothing
    const relayed = sent[0]?.frame as Extract<SyncFrame, { kind: 'update' }>;
    expect(decodeDigest(relayed.digest as Uint8Array)).toEqual({ generation: 0, clocks: stateVectorOf(other) });
    expect(decodeWireUpdate(relayed.update, 0)).toEqual({ generation: 0, base: undefined, doc: undefined });
    expect(store.snapshot('T').placements.get(2)?.target).toBe('y');
    // a duplicate is new to nobody: nothing is relayed
    sent.length = 0;
    replicator.receive('c', encodeSyncFrame({ kind: 'update', update: updates[0] as Uint8Array }));
    expect(sent).toEqual([]);
  });

  it('relays a digest of a received update to at most relayFanout random peers, never the sender; local updates go to all', () => {
    const updateFrom = (node: string) => {
      const other = new PlacementStore({ node, now: () => 1_000 });
      const updates: Uint8Array[] = [];
      other.onUpdate((u) => updates.push(u));
      other.set('T', 2, node);
      return encodeSyncFrame({ kind: 'update', update: updates[0] as Uint8Array });
    };
    const peers = Array.from({ length: 10 }, (_, i) => `p${i}`);
    for (const [fanout, expected] of [
      [undefined, 3],
      [1, 1],
      [0, 0],
      [Infinity, 9],
    ] as const) {
      const { store, sent, replicator } = recorded('a', {
        random: prng(7),
        ...(fanout !== undefined ? { relayFanout: fanout } : {}),
      });
      for (const peer of peers) replicator.addPeer(peer);
      sent.length = 0;
      replicator.receive('p4', updateFrom('z'));
      const relayedTo = sent.map((s) => s.peer);
      expect(sent.every((s) => s.frame.kind === 'update' && s.frame.digest !== undefined)).toBe(true);
      expect(relayedTo).toHaveLength(expected);
      expect(new Set(relayedTo).size).toBe(expected);
      expect(relayedTo).not.toContain('p4');
      sent.length = 0;
      store.set('T', 3, 'local');
      expect(sent.map((s) => s.peer).sort()).toEqual([...peers].sort());
    }
    expect(() => recorded('a', { relayFanout: -1 })).toThrow(/relayFanout/);
  });

  it('knows when it has applied a full sync from a peer (hasSynced / onSynced), once per peer', () => {
    const { net, replicator } = mesh(['a', 'b', 'c']);
    const seen: string[] = [];
    replicator('a').onSynced((peer) => seen.push(peer));
    expect(replicator('a').hasSynced()).toBe(false);
    replicator('a').addPeer('b');
    expect(replicator('a').hasSynced()).toBe(false);
    net.flush();
    expect(replicator('a').hasSynced()).toBe(true);
    replicator('a').addPeer('c');
    replicator('a').antiEntropy();
    net.flush();
    expect(seen.sort()).toEqual(['b', 'c']);
  });

  it('sends the prune a received update causes to every peer, the sender included', () => {
    let t = 1_000;
    const store = new PlacementStore({ node: 'a', now: () => t });
    const sent: Sent[] = [];
    const timers = new ManualTimers();
    const replicator = new PlacementReplicator(
      store,
      { send: (peer, bytes) => sent.push({ peer, frame: decodeSyncFrame(bytes) }) },
      timers,
    );
    const other = new PlacementStore({ node: 'b', now: () => t });
    store.set('T', 1, 'x');
    other.applyUpdate(store.encodeDiff(other.encodeStateVector()));
    t = 2_000;
    other.set('T', 1, 'y');
    replicator.addPeer('b');
    sent.length = 0;
    replicator.receive('b', encodeSyncFrame({ kind: 'step2', update: other.encodeDiff(store.encodeStateVector()) }));
    expect(sent.map((s) => [s.peer, s.frame.kind])).toEqual([['b', 'update']]);
    expect(store.stats().prunedSlots).toBe(1);
  });

  it('runs anti-entropy with one random peer per tick', () => {
    const { sent, timers, replicator } = recorded('a', { random: () => 0.99 });
    timers.fire();
    expect(sent).toEqual([]); // no peers yet
    for (const peer of ['b', 'c', 'd']) replicator.addPeer(peer);
    sent.length = 0;
    timers.fire();
    timers.fire();
    expect(sent.map((s) => [s.peer, s.frame.kind])).toEqual([
      ['d', 'step1'],
      ['d', 'step1'],
    ]);
  });

  it('uses setInterval with antiEntropyIntervalMs, 1000 ms by default', () => {
    vi.useFakeTimers();
    expect(DEFAULT_ANTI_ENTROPY_INTERVAL_MS).toBe(1000);
    const sent: string[] = [];
    const link = { send: (peer: string) => sent.push(peer) };
    const slow = new PlacementReplicator(new PlacementStore({ node: 'a' }), link, { random: () => 0 });
    const fast = new PlacementReplicator(new PlacementStore({ node: 'b' }), link, {
      random: () => 0,
      antiEntropyIntervalMs: 250,
    });
    slow.addPeer('slow-peer');
    fast.addPeer('fast-peer');
    sent.length = 0;
    vi.advanceTimersByTime(999);
    expect(sent.filter((p) => p === 'slow-peer')).toHaveLength(0);
    expect(sent.filter((p) => p === 'fast-peer')).toHaveLength(3);
    vi.advanceTimersByTime(1);
    expect(sent.filter((p) => p === 'slow-peer')).toHaveLength(1);
    slow.close();
    fast.close();
    sent.length = 0;
    vi.advanceTimersByTime(5_000);
    expect(sent).toEqual([]);
  });

  it('repairs a lost push by anti-entropy', () => {
    const { net, timers, stores, replicator } = mesh(['a', 'b']);
    replicator('a').addPeer('b');
    replicator('b').addPeer('a');
    net.flush();
    (stores[0] as PlacementStore).set('T', 1, 'x');
    net.queue.length = 0; // the push is lost
    expect((stores[1] as PlacementStore).snapshot('T').placements.size).toBe(0);
    timers.fire();
    net.flush();
    expect(view(stores[1] as PlacementStore)).toEqual(view(stores[0] as PlacementStore));
  });

  it('rejects malformed frames: counted, logged, no effect, nothing thrown', () => {
    const { store, sent, events, replicator } = recorded('a');
    store.set('T', 1, 'x');
    replicator.addPeer('b');
    sent.length = 0;
    const before = { snapshot: store.snapshot('T'), stateVector: store.encodeStateVector() };
    const goodUpdate = (() => {
      const other = new PlacementStore({ node: 'z', now: () => 1_000 });
      other.set('T', 5, 'y');
      return other.encodeDiff(EMPTY_STATE_VECTOR);
    })();
    const bad: unknown[] = [
      new Uint8Array(),
      new Uint8Array([7, 0]),
      new Uint8Array([2, 5, 1]),
      encodeSyncFrame({ kind: 'update', update: new Uint8Array([1, 2, 3, 4]) }),
      encodeSyncFrame({ kind: 'step2', update: goodUpdate.slice(0, goodUpdate.length - 3) }),
      encodeSyncFrame({ kind: 'step1', stateVector: new Uint8Array([3, 1]) }),
      'not bytes',
    ];
    for (const bytes of bad) expect(() => replicator.receive('b', bytes as Uint8Array)).not.toThrow();
    expect(() => replicator.receive('', encodeSyncFrame({ kind: 'update', update: goodUpdate }))).not.toThrow();
    const stats = replicator.stats();
    expect(stats.framesReceived).toBe(bad.length + 1);
    expect(stats.framesRejected).toBe(bad.length + 1);
    expect(sent).toEqual([]);
    expect(store.snapshot('T')).toBe(before.snapshot);
    expect(store.encodeStateVector()).toEqual(before.stateVector);
    const warnings = events.filter((e) => e.level === 'warn');
    expect(warnings).toHaveLength(bad.length + 1);
    expect(warnings[1]?.message).toMatch(
      /rejected placement sync frame from "b": sync frame rejected: unknown message type 7/,
    );
    expect(warnings.map((w) => (w.details as { code?: string }).code)).toContain('malformed_update');
    // a good frame after all that still works
    replicator.receive('b', encodeSyncFrame({ kind: 'update', update: goodUpdate }));
    expect(store.snapshot('T').placements.get(5)?.target).toBe('y');
  });

  it('rejects frames above maxFrameBytes', () => {
    const store = new PlacementStore({ node: 'a' });
    const replicator = new PlacementReplicator(store, { send: () => {} }, { ...new ManualTimers(), maxFrameBytes: 16 });
    replicator.receive('b', encodeSyncFrame({ kind: 'update', update: new Uint8Array(20) }));
    expect(replicator.stats().framesRejected).toBe(1);
    replicator.close();
  });

  it('counts frames and bytes both ways', () => {
    const { net, replicator } = mesh(['a', 'b']);
    replicator('a').addPeer('b');
    const sentBytes = net.queue.reduce((n, m) => n + m.bytes.length, 0);
    net.flush();
    const a = replicator('a').stats();
    const b = replicator('b').stats();
    expect(a.framesSent).toBe(1);
    expect(a.bytesSent).toBe(sentBytes);
    expect(b.framesReceived).toBe(1);
    expect(b.bytesReceived).toBe(sentBytes);
    expect(b.framesSent).toBe(1); // the step 2
    expect(a.framesReceived).toBe(1);
    expect(a.bytesReceived).toBe(b.bytesSent);
  });

  it('survives a failing link: counted, logged, the write itself succeeds', () => {
    const { events, log } = recordingLog();
    const store = new PlacementStore({ node: 'a' });
    const replicator = new PlacementReplicator(
      store,
      {
        send: () => {
          throw new Error('socket closed');
        },
      },
      { ...new ManualTimers(), log },
    );
    replicator.addPeer('b');
    expect(store.set('T', 1, 'x').target).toBe('x');
    expect(replicator.stats()).toMatchObject({ framesSent: 0, sendFailures: 2 });
    expect(events.filter((e) => e.message.includes('socket closed'))).toHaveLength(2);
  });

  it('removePeer stops pushes to that peer; close stops everything and is idempotent', () => {
    const { store, sent, timers, replicator } = recorded('a');
    replicator.addPeer('b');
    replicator.addPeer('c');
    replicator.removePeer('b');
    expect(replicator.peers()).toEqual(['c']);
    sent.length = 0;
    store.set('T', 1, 'x');
    expect(sent.map((s) => s.peer)).toEqual(['c']);
    replicator.close();
    replicator.close();
    expect(timers.count).toBe(0);
    sent.length = 0;
    store.set('T', 2, 'y');
    replicator.addPeer('d');
    replicator.receive('c', encodeSyncFrame({ kind: 'step1', stateVector: EMPTY_STATE_VECTOR }));
    expect(sent).toEqual([]);
    expect(replicator.peers()).toEqual([]);
  });

  it('rejects bad options', () => {
    const store = new PlacementStore({ node: 'a' });
    const link = { send: () => {} };
    expect(() => new PlacementReplicator(store, link, { antiEntropyIntervalMs: 0 })).toThrow(
      expect.objectContaining({ code: 'invalid_option' }),
    );
    expect(() => new PlacementReplicator(store, link, { maxFrameBytes: -1 })).toThrow(
      expect.objectContaining({ code: 'invalid_option' }),
    );
    expect(() => new PlacementReplicator(store, {} as typeof link)).toThrow(
      expect.objectContaining({ code: 'invalid_option' }),
    );
    const timers = new ManualTimers();
    const replicator = new PlacementReplicator(store, link, timers);
    expect(() => replicator.addPeer('')).toThrow(expect.objectContaining({ code: 'invalid_option' }));
    replicator.close();
  });
});
