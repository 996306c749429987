// The passivation tracker's least-recently-used order, against a model: random touches, removals and passages of
// (manual) time, with a limit and an idle timeout. After every step the entities the tracker passivated, and for
// what reason, are exactly those the model says: the oldest beyond the limit (never the one just touched), and
// every entity idle for idleMs once a sweep ran. The tracker keeps its order in a linked list (passivation.ts);
// this holds it to the plain array a reader would write.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PassivationReason } from '../../src/sharding/core/passivation.js';
import { PassivationTracker, type PassivatingShard } from '../../src/sharding/region/passivation.js';
import { ManualScheduler } from '../support/schedulers.js';

const IDS = 12;
const LIMIT = 5;
const IDLE_MS = 100;

type Step =
  | { readonly kind: 'touch'; readonly id: number }
  | { readonly kind: 'remove'; readonly id: number }
  | { readonly kind: 'advance'; readonly ms: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('touch' as const), id: fc.nat(IDS - 1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove' as const), id: fc.nat(IDS - 1) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 80 }) }) },
);

/** The model: ids oldest touch first, with the time of each touch. */
interface ModelEntry {
  readonly id: number;
  readonly at: number;
}

describe('the passivation order against a model', () => {
  it('passivates the least recently used beyond the limit and the idle after a sweep, nothing else', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 120 }), (steps) => {
        const scheduler = new ManualScheduler();
        const tracker = new PassivationTracker({ maxActiveEntities: LIMIT, idleMs: IDLE_MS }, scheduler);
        // One object per id and incarnation, as shards key entities.
        const objects = new Map<number, object>();
        const passivated: Array<[number, PassivationReason]> = [];
        const shard: PassivatingShard = {
          passivate: (entityId, reason) => {
            const id = Number(entityId);
            passivated.push([id, reason]);
            objects.delete(id);
          },
        };
        let model: ModelEntry[] = [];
        for (const s of steps) {
          const expected: Array<[number, PassivationReason]> = [];
          if (s.kind === 'touch') {
            const object = objects.get(s.id) ?? {};
            objects.set(s.id, object);
            tracker.touch(object, shard, String(s.id));
            model = [...model.filter((entry) => entry.id !== s.id), { id: s.id, at: scheduler.now() }];
            if (model.length > LIMIT) {
              expected.push([(model[0] as ModelEntry).id, 'limit']);
              model = model.slice(1);
            }
          } else if (s.kind === 'remove') {
            const object = objects.get(s.id);
            if (object !== undefined) tracker.remove(object);
            objects.delete(s.id);
            model = model.filter((entry) => entry.id !== s.id);
          } else {
            scheduler.advance(s.ms);
            // The sweep runs every idleMs / 2 while anything is active; check what it stopped against the model.
            const swept = passivated.splice(0);
            for (const [id] of swept) expect(model.find((entry) => entry.id === id)).toBeDefined();
            const sweptIds = new Set(swept.map(([id]) => id));
            for (const entry of model) {
              // Anything idle for 1.5 x idleMs must have been swept (the sweep's period is idleMs / 2).
              if (scheduler.now() - entry.at >= IDLE_MS * 1.5) expect(sweptIds.has(entry.id)).toBe(true);
            }
            for (const [, reason] of swept) expect(reason).toBe('idle');
            // Swept entities were idle for at least idleMs when the sweep that stopped them ran.
            for (const id of sweptIds) {
              const entry = model.find((candidate) => candidate.id === id) as ModelEntry;
              expect(scheduler.now() - entry.at).toBeGreaterThanOrEqual(IDLE_MS);
            }
            model = model.filter((entry) => !sweptIds.has(entry.id));
            continue;
          }
          expect(passivated.splice(0)).toEqual(expected);
        }
      }),
      { numRuns: 300 },
    );
  });
});
