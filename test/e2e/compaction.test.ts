// Compaction over real TCP between CLI node processes: nodes with a tiny compaction threshold take
// overwrites through all three APIs, compact again and again, and still agree on every placement.
import { describe, expect, it } from 'vitest';
import { SHARDS_PATH, useProcessSet, waitFor, type NodeProc, type PlacementRow } from './harness.js';

const procs = useProcessSet();
const SHARDS = 20;
const ROUNDS = 12;

interface Health {
  readonly placementStore: {
    readonly generation: number;
    readonly slots: number;
    readonly baseSlots: number;
    readonly documentItems: number;
  };
}

describe('compaction across node processes', () => {
  it('compacts on every node under overwrites from every node and converges on the last writes', async () => {
    const nodes = await procs.startCluster(3, { compactAfterItems: 100 });
    const last = new Map<number, string>();
    for (let round = 0; round < ROUNDS; round++) {
      const via = nodes[round % 3] as NodeProc;
      const placements = Array.from({ length: SHARDS }, (_, shardId) => ({
        shardId,
        target: (nodes[(shardId + round) % 3] as NodeProc).address,
      }));
      const response = await via.post(`${SHARDS_PATH}/placements`, { placements });
      expect(response.status, JSON.stringify(response.body)).toBe(202);
      for (const { shardId, target } of placements) last.set(shardId, target);
      // Each round is written after the previous one reached the writer, so it dominates it everywhere.
      const next = nodes[(round + 1) % 3] as NodeProc;
      await waitFor(`round ${round} replicated`, async () => sameTargets(await next.placements(), last), 10_000);
    }
    await waitFor(
      'every node shows the last round',
      async () => (await Promise.all(nodes.map((node) => node.placements()))).every((rows) => sameTargets(rows, last)),
      15_000,
    );
    const health = await Promise.all(nodes.map((node) => node.get<Health>('/actor-ts/health')));
    for (const { body } of health) {
      expect(body.placementStore.generation).toBeGreaterThanOrEqual(1);
      expect(body.placementStore.baseSlots).toBeGreaterThan(0);
      expect(body.placementStore.documentItems).toBeLessThan(ROUNDS * SHARDS);
    }
  });
});

function sameTargets(rows: readonly PlacementRow[], expected: ReadonlyMap<number, string>): boolean {
  return rows.length === expected.size && rows.every((row) => expected.get(row.shardId) === row.target);
}
