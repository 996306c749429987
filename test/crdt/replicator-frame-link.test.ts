// PlacementReplicator over a frame link: frames travel decoded (the transport encodes them once), with the same
// checks a byte link's decoder makes, and replicas converge exactly as over bytes.
import { describe, expect, it } from 'vitest';
import { PlacementReplicator, PlacementStore, type SyncFrame } from '../../crdt/index.js';
import { ManualTimers, recordingLog } from './helpers.js';

/** Two replicas whose frame links deliver into each other's receiveFrame, synchronously. */
function pair() {
  const timers = new ManualTimers();
  const stores = {
    a: new PlacementStore({ node: 'a', now: () => 1_000 }),
    b: new PlacementStore({ node: 'b', now: () => 2_000 }),
  };
  const sent: Array<{ from: string; to: string; frame: SyncFrame }> = [];
  const replicators = new Map<string, PlacementReplicator>();
  const { events, log } = recordingLog();
  for (const name of ['a', 'b'] as const) {
    replicators.set(
      name,
      new PlacementReplicator(
        stores[name],
        {
          sendFrame: (peer, frame) => {
            sent.push({ from: name, to: peer, frame });
            replicators.get(peer)?.receiveFrame(name, frame);
          },
        },
        { setInterval: timers.setInterval, clearInterval: timers.clearInterval, log, maxFrameBytes: 4096 },
      ),
    );
  }
  const get = (name: string) => replicators.get(name) as PlacementReplicator;
  return { stores, sent, events, get };
}

describe('PlacementReplicator over a frame link', () => {
  it('syncs and pushes with frames, never bytes, and both replicas show the same winners', () => {
    const { stores, sent, get } = pair();
    stores.a.set('T', 1, 'x');
    get('a').addPeer('b');
    get('b').addPeer('a');
    stores.b.set('T', 2, 'y');
    stores.a.set('T', 2, 'z');
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every(({ frame }) => frame.kind === 'step1' || frame.kind === 'step2' || frame.kind === 'update')).toBe(
      true,
    );
    for (const store of [stores.a, stores.b]) {
      expect(store.snapshot('T').placements.get(1)?.target).toBe('x');
      expect(store.snapshot('T').placements.get(2)?.target).toBe('z');
    }
    expect(get('a').stats().framesRejected + get('b').stats().framesRejected).toBe(0);
  });

  it('rejects an oversized payload, an unknown kind and a payload that is not bytes, counts them and changes nothing', () => {
    const { stores, events, get } = pair();
    const b = get('b');
    b.receiveFrame('a', { kind: 'update', update: new Uint8Array(5000) });
    b.receiveFrame('a', { kind: 'gossip', update: new Uint8Array(1) } as unknown as SyncFrame);
    b.receiveFrame('a', { kind: 'step1', stateVector: [0] } as unknown as SyncFrame);
    expect(b.stats().framesRejected).toBe(3);
    expect(stores.b.snapshot('T').placements.size).toBe(0);
    expect(events.filter((event) => event.message.includes('rejected placement sync frame'))).toHaveLength(3);
  });

  it('refuses a link with neither send nor sendFrame', () => {
    expect(() => new PlacementReplicator(new PlacementStore({ node: 'a' }), {} as never)).toThrow(
      /send\(peer, bytes\) or a sendFrame/,
    );
  });
});
