// Issue 27: forged but well-formed placement messages (random generations, shard ids and timestamps, as
// updates, full syncs, state vectors and digests) from a node that is not a member and from one that is, mixed with
// honest writes. Afterwards every honest replica converges (same generation, same placements), stays in a
// small generation, and every write it acknowledges reaches every replica; a write it refuses is refused
// with clock_skew, only where a value within the refusal window is held.
import fc from 'fast-check';
import * as Y from 'yjs';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_HLC_COUNTER, MAX_HLC_WALL_MS, PlacementStoreError, type PlacementStore } from '../../crdt/index.js';
import { BaseState } from '../../crdt/base.js';
import { encodeBase, encodeWireStateVector, encodeWireUpdate } from '../../crdt/wire.js';
import { emptyUpdateFor, encodeDigest } from '../../crdt/wire-digest.js';
import type { PlacementSyncMessage } from '../../src/placement-replication/sync-messages.js';
import { view } from '../crdt/helpers.js';
import { testAddress } from '../support/members.js';
import { forgedCluster, type ForgedCluster } from './forged-harness.js';

const NOW = 1_780_000_000_000;
const DAY = 24 * 3_600_000;
const SHARDS = 32;
const TYPES = new Map([['T', { numberOfShards: SHARDS }]]);

const generationArb = fc.oneof(
  fc.nat(3),
  fc.integer({ min: 4, max: Number.MAX_SAFE_INTEGER }),
  fc.constant(Number.MAX_SAFE_INTEGER),
);
const shardArb = fc.oneof(
  { weight: 4, arbitrary: fc.nat(SHARDS - 1) },
  { weight: 1, arbitrary: fc.integer({ min: SHARDS, max: 2 ** 40 }) },
);
const wallArb = fc.oneof(
  fc.integer({ min: NOW - DAY, max: NOW + DAY }),
  fc.integer({ min: NOW + 7 * DAY, max: NOW + 30 * DAY }),
  fc.integer({ min: NOW, max: MAX_HLC_WALL_MS }),
  fc.integer({ min: MAX_HLC_WALL_MS, max: Number.MAX_SAFE_INTEGER }),
);
const slotArb = fc.record({
  shardId: shardArb,
  writer: fc.constantFrom('mallory', 'm2'),
  target: fc.option(fc.constantFrom('app@10.0.0.9:1', 'app@10.0.0.8:1'), { nil: null }),
  wallMs: wallArb,
  counter: fc.integer({ min: 0, max: MAX_HLC_COUNTER }),
  // An override mark (slots.ts `over`), as a write made over a held value carries: any timestamp at all.
  over: fc.option(
    fc.record({
      wallMs: wallArb,
      counter: fc.integer({ min: 0, max: MAX_HLC_COUNTER }),
      node: fc.constantFrom('mallory', 'm2', 'x'),
    }),
    { nil: undefined },
  ),
});
const forgeryArb = fc.record({
  kind: fc.constantFrom('PlacementUpdate', 'PlacementSyncStep2', 'PlacementSyncStep1', 'digest'),
  generation: generationArb,
  base: fc.array(slotArb, { maxLength: 4 }),
  doc: fc.array(slotArb, { maxLength: 4 }),
  fromMember: fc.boolean(),
  to: fc.nat(2),
});
const stepArb = fc.oneof(
  { weight: 2, arbitrary: forgeryArb.map((forgery) => ({ forgery })) },
  { weight: 1, arbitrary: fc.record({ write: fc.record({ replica: fc.nat(2), shard: fc.nat(SHARDS - 1) }) }) },
);

type Forgery = typeof forgeryArb extends fc.Arbitrary<infer F> ? F : never;
type Slot = Forgery['base'][number];

function baseOf(slots: readonly Slot[]): Uint8Array | undefined {
  if (slots.length === 0) return undefined;
  const base = new BaseState();
  for (const s of slots) {
    const slot = {
      shardId: s.shardId,
      writer: s.writer,
      target: s.target,
      hlc: { wallMs: s.wallMs, counter: s.counter, node: s.writer },
    };
    base.merge('T', s.over === undefined ? slot : { ...slot, over: s.over });
  }
  return encodeBase(base);
}

/** A document update from a client id no one else uses (a client writing two different histories is another attack). */
function docOf(slots: readonly Slot[], clientId: number): Uint8Array | undefined {
  if (slots.length === 0) return undefined;
  const doc = new Y.Doc();
  doc.clientID = clientId;
  const map = doc.getMap('T');
  for (const s of slots) {
    const value =
      s.over === undefined
        ? [s.target, s.wallMs, s.counter]
        : [s.target, s.wallMs, s.counter, null, [s.over.wallMs, s.over.counter, s.over.node]];
    map.set(`${s.shardId}\u0000${s.writer}`, value);
  }
  return Y.encodeStateAsUpdateV2(doc);
}

function messageOf(forgery: Forgery, clientId: number): PlacementSyncMessage {
  if (forgery.kind === 'digest') {
    // Versions claimed of writers no one has, or of a generation far ahead: a replica pulls from the sender.
    const clocks = new Map(forgery.doc.map((s, i) => [clientId + i, s.counter + 1]));
    const digest = encodeDigest({ generation: forgery.generation, clocks });
    return { type: 'PlacementUpdate', update: emptyUpdateFor(digest), digest };
  }
  if (forgery.kind === 'PlacementSyncStep1') {
    return {
      type: 'PlacementSyncStep1',
      stateVector: encodeWireStateVector({
        generation: forgery.generation,
        baseDigest: new Uint8Array(0),
        doc: new Uint8Array([0]),
      }),
    };
  }
  return {
    type: forgery.kind,
    update: encodeWireUpdate(forgery.generation, baseOf(forgery.base), docOf(forgery.doc, clientId)),
  };
}

let cluster: ForgedCluster | undefined;
afterEach(() => cluster?.close());

describe('forged placement messages (issue 27)', () => {
  it('from a non-member or a member: honest replicas converge, stay in small generations, and their acknowledged writes replicate', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 25 }), (steps) => {
        const clock = { t: NOW };
        cluster?.close();
        const current = forgedCluster(3, { entityTypes: TYPES, clocks: [0, 1, 2].map(() => () => clock.t) });
        cluster = current;
        const stores = current.stores as readonly PlacementStore[];
        const mallory = current.forger(testAddress(41_990));
        const asMember = current.forger(current.addresses[1] as ReturnType<typeof testAddress>);
        let clientId = 900_000;
        steps.forEach((step, i) => {
          clock.t += 10;
          if ('write' in step) {
            tryWrite(stores[step.write.replica] as PlacementStore, step.write.shard, `honest-${i}`);
            current.drain();
            return;
          }
          const { forgery } = step;
          const to = current.addresses[
            forgery.fromMember ? (forgery.to === 1 ? 0 : forgery.to) : forgery.to
          ] as ReturnType<typeof testAddress>;
          (forgery.fromMember ? asMember : mallory)(to, messageOf(forgery, clientId++));
        });
        current.settle(40);
        const first = stores[0] as PlacementStore;
        for (const store of stores) {
          expect(store.generation).toBeLessThan(steps.length + 5);
          expect(store.generation).toBe(first.generation);
          expect(view(store)).toEqual(view(first));
        }
        // Every shard: a final write from each replica in turn is either acknowledged and shown everywhere,
        // or refused with clock_skew.
        for (let shard = 0; shard < SHARDS; shard++) {
          clock.t += 10;
          const writer = stores[shard % stores.length] as PlacementStore;
          const written = tryWrite(writer, shard, `final-${shard}`);
          current.settle(3);
          if (written === undefined) continue;
          for (const store of stores) expect(store.snapshot('T').placements.get(shard)?.target).toBe(`final-${shard}`);
        }
      }),
      { numRuns: 40 },
    );
  });
});

/** The write, or undefined when it was refused with clock_skew (the only refusal allowed here). */
function tryWrite(store: PlacementStore, shard: number, target: string): string | undefined {
  try {
    return store.set('T', shard, target).target;
  } catch (error) {
    expect(error).toBeInstanceOf(PlacementStoreError);
    expect((error as PlacementStoreError).code).toBe('clock_skew');
    return undefined;
  }
}
