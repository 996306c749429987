// Property: any sequence of appends (alone or in concurrent bursts), snapshots and reopens leaves both
// implementations holding exactly what the model says: the last snapshot and the appends since, in order.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { openLmdbPersistence } from '../../crdt/persistence/lmdb-persistence.js';
import { createMemoryVolume, memoryPersistence } from '../../crdt/persistence/memory-persistence.js';
import type { PlacementPersistence } from '../../crdt/persistence/persistence.js';
import type { Subject } from './contract.js';

type Op =
  | { readonly kind: 'append'; readonly updates: readonly Uint8Array[] }
  | { readonly kind: 'snapshot'; readonly snapshot: Uint8Array; readonly before: readonly Uint8Array[] }
  | { readonly kind: 'reopen' };

const payload = fc.uint8Array({ minLength: 1, maxLength: 64 });
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .array(payload, { minLength: 1, maxLength: 8 })
      .map((updates) => ({ kind: 'append' as const, updates })),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({ snapshot: payload, before: fc.array(payload, { maxLength: 3 }) })
      .map((r) => ({ kind: 'snapshot' as const, ...r })),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'reopen' as const }) },
);

async function check(subject: Subject, ops: readonly Op[]): Promise<void> {
  let p: PlacementPersistence = await subject.open();
  let model: { snapshot: Uint8Array | undefined; log: Uint8Array[] } = { snapshot: undefined, log: [] };
  try {
    for (const step of ops) {
      if (step.kind === 'append') {
        // A burst: all issued before any is awaited, so they share commits.
        await Promise.all(step.updates.map((update) => p.append(update)));
        model.log.push(...step.updates);
      } else if (step.kind === 'snapshot') {
        // Appends still in flight when the snapshot is asked for are covered by it.
        await Promise.all([...step.before.map((update) => p.append(update)), p.writeSnapshot(step.snapshot)]);
        model = { snapshot: step.snapshot, log: [] };
      } else {
        await p.close();
        p = await subject.open();
      }
      expect(await p.load()).toEqual(model);
      expect(p.stats().logRecordsSinceSnapshot).toBe(model.log.length);
    }
  } finally {
    await p.close();
  }
}

const root = mkdtempSync(join(tmpdir(), 'placement-model-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;

describe('persistence equals the model (snapshot + appends since) over random histories', () => {
  it('in memory', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 30 }), async (ops) => {
        const volume = createMemoryVolume();
        await check({ open: async () => memoryPersistence({ volume }) }, ops);
      }),
      { numRuns: 200 },
    );
  });

  it('on lmdb', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 20 }), async (ops) => {
        const dir = join(root, `d${++dirs}`);
        await check({ open: async () => openLmdbPersistence(dir) }, ops);
      }),
      { numRuns: 40 },
    );
  });
});
