// The timestamp rule as a property: one member's clock runs far ahead (+1 h and +1 day: admitted, within
// maxAheadMs; +100 years: held; beyond the representable range: its writes fail), a forged 2^53-1 value
// may be in the pool, updates arrive in random order with duplicates. The members with sane clocks must
// converge on the greatest admitted write per shard, and every shard must stay writable by them.
import fc from 'fast-check';
import * as Y from 'yjs';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_AHEAD_MS,
  MAX_HLC_COUNTER,
  PlacementStore,
  PlacementStoreError,
  type Placement,
} from '../../crdt/index.js';
import { compareSlots, type Slot } from '../../crdt/slots.js';
import { UpdatePool, asWireUpdate, prng, view } from './helpers.js';

const BASE = 1_700_000_000_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const YEAR = 365 * DAY;

const scenarioArb = fc.record({
  fastSkew: fc.constantFrom(HOUR, DAY, 100 * YEAR, 300 * YEAR),
  saneSkews: fc.array(fc.integer({ min: -20_000, max: 20_000 }), { minLength: 2, maxLength: 4 }),
  forge: fc.boolean(),
  ops: fc.array(
    fc.record({
      replica: fc.nat(4),
      remove: fc.boolean(),
      shard: fc.nat(4),
      target: fc.constantFrom('app@10.0.0.1:7701', 'app@10.0.0.2:7701'),
      advance: fc.nat(40),
      deliveries: fc.nat(4),
    }),
    { minLength: 1, maxLength: 30 },
  ),
  seed: fc.noShrink(fc.integer()),
});

function forgedUpdate(): Uint8Array {
  const doc = new Y.Doc();
  doc.clientID = 4242;
  doc.getMap('T').set('0\u0000evil', ['app@forged:1', Number.MAX_SAFE_INTEGER, MAX_HLC_COUNTER]);
  return asWireUpdate(Y.encodeStateAsUpdateV2(doc));
}

describe('a member with a clock far ahead', () => {
  it('cannot freeze a shard: sane replicas converge on the greatest admitted write, and every shard stays writable by them', () => {
    fc.assert(
      fc.property(scenarioArb, ({ fastSkew, saneSkews, forge, ops, seed }) => {
        const clock = { t: 0 };
        const random = prng(seed);
        const skews = [fastSkew, ...saneSkews];
        const stores = skews.map(
          (skew, i) => new PlacementStore({ node: `node-${i}`, now: () => BASE + clock.t + skew }),
        );
        const [fast, ...sane] = stores as [PlacementStore, ...PlacementStore[]];
        const fastCounts = fastSkew <= DEFAULT_MAX_AHEAD_MS;
        const pool = new UpdatePool(stores);
        if (forge) pool.updates.push(forgedUpdate());
        const last = new Map<
          number,
          { target: string | null; placement: Placement | undefined; hlc: Placement['hlc']; slot: Slot }
        >();
        for (const op of ops) {
          clock.t += op.advance;
          const store = stores[op.replica % stores.length] as PlacementStore;
          try {
            // What the writer's slot holds, `over` mark included: a write made over a held value ranks at it.
            const slot = () => store.slotOf('T', op.shard, store.node) as Slot;
            if (op.remove) {
              const hlc = store.remove('T', op.shard);
              if (store !== fast || fastCounts)
                keep(last, op.shard, { target: null, placement: undefined, hlc, slot: slot() });
            } else {
              const placement = store.set('T', op.shard, op.target);
              if (store !== fast || fastCounts)
                keep(last, op.shard, { target: op.target, placement, hlc: placement.hlc, slot: slot() });
            }
          } catch (error) {
            // Only the member beyond the representable range may fail, and then with the typed error.
            expect(store).toBe(fast);
            expect(fastSkew).toBe(300 * YEAR);
            expect(error).toBeInstanceOf(PlacementStoreError);
            expect((error as PlacementStoreError).code).toBe('hlc_out_of_range');
          }
          pool.deliverSome(random, op.deliveries);
        }
        pool.deliverAll(random);

        const expected = new Map<number, Placement>();
        for (const [shard, write] of last) if (write.placement !== undefined) expected.set(shard, write.placement);
        for (const store of sane) {
          expect(new Map(store.snapshot('T').placements)).toEqual(expected);
          expect(view(store)).toEqual(view(sane[0] as PlacementStore));
          expect(store.stats()).toMatchObject({ rejectedUpdates: 0, awaitingMissingUpdates: false });
          if (forge) expect(store.stats().quarantinedValues).toBe(1);
        }

        // every shard is writable by every sane member, and the write shows on every sane replica
        for (let shard = 0; shard < 5; shard++) {
          const writer = sane[shard % sane.length] as PlacementStore;
          clock.t += 1;
          const final = writer.set('T', shard, `final-${shard}`);
          pool.deliverAll(random);
          for (const store of sane) expect(store.snapshot('T').placements.get(shard)).toEqual(final);
        }
      }),
      { numRuns: 100 },
    );
  });
});

/** The greatest write per shard in the store's slot order (hlc, or the `over` mark a write carries). */
function keep<W extends { slot: Slot }>(last: Map<number, W>, shard: number, write: W): void {
  const current = last.get(shard);
  if (current === undefined || compareSlots(write.slot, current.slot) > 0) last.set(shard, write);
}
