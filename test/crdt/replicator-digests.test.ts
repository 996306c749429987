// PlacementReplicator's digests over recorded frame links: a lost push pulled from a digest's sender, digests of
// what a replica holds left alone, forged digests rejected, and the empty update a digest rides in for a replica
// that knows no digests.
import { describe, expect, it } from 'vitest';
import { PlacementReplicator, PlacementStore, type SyncFrame } from '../../crdt/index.js';
import { emptyUpdateFor, encodeDigest } from '../../crdt/wire-digest.js';
import { ManualTimers, recordingLog, stateVectorOf, view } from './helpers.js';

interface Sent {
  readonly from: string;
  readonly to: string;
  readonly frame: SyncFrame;
}

/** Replicas a, b, c, ... all peered, whose frames wait in `queue` until `deliver` hands them over. */
function cluster(names: readonly string[]) {
  const queue: Sent[] = [];
  const timers = new ManualTimers();
  const { events, log } = recordingLog();
  const stores = new Map(names.map((node) => [node, new PlacementStore({ node, now: () => 1_000 })]));
  const replicators = new Map<string, PlacementReplicator>();
  for (const [node, store] of stores) {
    const link = { sendFrame: (to: string, frame: SyncFrame) => queue.push({ from: node, to, frame }) };
    const options = { setInterval: timers.setInterval, clearInterval: timers.clearInterval, log, random: () => 0 };
    replicators.set(node, new PlacementReplicator(store, link, options));
  }
  for (const node of names) for (const peer of names) if (peer !== node) replicators.get(node)?.addPeer(peer);
  /** Hands over what is queued now (not what that sends), except frames `lose` says are lost; returns them all. */
  const deliver = (lose: (sent: Sent) => boolean = () => false): Sent[] => {
    const batch = queue.splice(0);
    for (const sent of batch) if (!lose(sent)) replicators.get(sent.to)?.receiveFrame(sent.from, sent.frame);
    return batch;
  };
  const settle = (lose?: (sent: Sent) => boolean): Sent[] => {
    const all: Sent[] = [];
    while (queue.length > 0) all.push(...deliver(lose));
    return all;
  };
  settle();
  const store = (node: string) => stores.get(node) as PlacementStore;
  const replicator = (node: string) => replicators.get(node) as PlacementReplicator;
  return { queue, events, store, replicator, deliver, settle };
}

const isDigest = (frame: SyncFrame): boolean => frame.kind === 'update' && frame.digest !== undefined;
const isContent = (frame: SyncFrame): boolean =>
  frame.kind === 'step2' || (frame.kind === 'update' && !isDigest(frame));

describe('PlacementReplicator digests', () => {
  it('a push lost to one peer is pulled from a digest sender: its content reaches that peer once, as the answer', () => {
    const { store, deliver, settle } = cluster(['a', 'b', 'c', 'd']);
    store('a').set('T', 1, 'app@10.0.0.1:7701');
    const pushes = deliver((s) => s.to === 'd');
    expect(pushes.map((s) => [s.to, s.frame.kind])).toEqual([
      ['b', 'update'],
      ['c', 'update'],
      ['d', 'update'],
    ]);
    const rest = settle();
    // b and c relay digests to the others but a, and d, once repaired, to the others but b; d pulls from b only
    expect(
      rest
        .filter((s) => isDigest(s.frame))
        .map((s) => `${s.from}>${s.to}`)
        .sort(),
    ).toEqual(['b>c', 'b>d', 'c>b', 'c>d', 'd>a', 'd>c']);
    const toD = rest.filter((s) => s.to === 'd' && isContent(s.frame));
    expect(toD.map((s) => [s.from, s.frame.kind])).toEqual([['b', 'step2']]);
    expect(rest.filter((s) => s.from === 'd' && !isDigest(s.frame)).map((s) => [s.to, s.frame.kind])).toEqual([
      ['b', 'step1'],
    ]);
    expect(rest.filter((s) => isContent(s.frame) && s.to !== 'd')).toEqual([]);
    expect(view(store('d'))).toEqual(view(store('a')));
  });

  it('with no push lost, one write costs N-1 pushes and small digests, and no other content', () => {
    const { store, settle } = cluster(['a', 'b', 'c', 'd', 'e']);
    store('c').set('T', 1, 'app@10.0.0.1:7701');
    const frames = settle();
    const content = frames.filter((s) => isContent(s.frame));
    expect(content.map((s) => s.to).sort()).toEqual(['a', 'b', 'd', 'e']);
    const digests = frames.filter((s) => isDigest(s.frame));
    expect(digests).toHaveLength(4 * 3);
    for (const { frame } of digests) {
      const size = frame.kind === 'update' ? frame.update.length + (frame.digest?.length ?? 0) : Infinity;
      expect(size).toBeLessThan(16);
    }
    expect(frames.filter((s) => s.frame.kind === 'step1')).toEqual([]);
  });

  it('a digest showing a later generation is answered by a pull; one of versions held, by nothing', () => {
    const { store, replicator, queue } = cluster(['a', 'b']);
    replicator('a').receiveFrame('b', digestFrame(encodeDigest({ generation: 0, clocks: stateVectorOf(store('a')) })));
    expect(queue).toEqual([]);
    replicator('a').receiveFrame('b', digestFrame(encodeDigest({ generation: 1, clocks: new Map() })));
    expect(queue.map((s) => [s.from, s.to, s.frame.kind])).toEqual([['a', 'b', 'step1']]);
  });

  it('a forged digest is rejected: counted, logged, nothing sent, nothing changed', () => {
    const { store, replicator, queue, events } = cluster(['a', 'b']);
    const before = view(store('a'));
    replicator('a').receiveFrame('b', digestFrame(new Uint8Array([0, 200, 1])));
    replicator('a').receiveFrame('b', {
      kind: 'update',
      update: new Uint8Array([0, 0]),
      digest: 'x' as unknown as Uint8Array,
    });
    expect(replicator('a').stats().framesRejected).toBe(2);
    expect(events.filter((e) => e.level === 'warn')).toHaveLength(2);
    expect(queue).toEqual([]);
    expect(view(store('a'))).toEqual(before);
  });

  it('a replica that knows no digests reads one as an empty update: it applies nothing and sends nothing', () => {
    const { store, replicator, queue } = cluster(['a', 'b']);
    store('b').set('T', 1, 'app@10.0.0.1:7701');
    queue.splice(0);
    const digest = encodeDigest({ generation: 0, clocks: stateVectorOf(store('b')) });
    const updates: Uint8Array[] = [];
    store('a').onUpdate((u) => updates.push(u));
    // what its parser leaves of the message: the update, without the field it does not know
    replicator('a').receiveFrame('b', { kind: 'update', update: emptyUpdateFor(digest) });
    expect(updates).toEqual([]);
    expect(queue).toEqual([]);
    expect(replicator('a').stats().framesRejected).toBe(0);
    expect(store('a').generation).toBe(0);
  });
});

function digestFrame(digest: Uint8Array): SyncFrame {
  return { kind: 'update', update: emptyUpdateFor(digest), digest };
}
