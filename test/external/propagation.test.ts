// Test plan 9: a placement written on one node reaches every other node's strategy state through the
// immediate push (anti-entropy switched off), measured in fake time and in wall-clock time.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { performance } from 'node:perf_hooks';
import { waitFor } from '../cluster/wait-for.js';
import { run } from '../sharding/harness.js';
import { ExternalCluster, NO_ANTI_ENTROPY, pinsOf, type ExtNode } from './harness.js';

let cluster: ExternalCluster | undefined;

afterEach(async () => {
  await cluster?.shutdown();
  cluster = undefined;
  vi.useRealTimers();
});

function threeNodes(antiEntropyIntervalMs: number): [ExtNode, ExtNode, ExtNode] {
  cluster = new ExternalCluster({ delayMs: 1, antiEntropyIntervalMs });
  return [cluster.addNode(7001), cluster.addNode(7002), cluster.addNode(7003)];
}

/** Advances fake time 1 ms at a time until `condition` holds; returns the fake ms it took. */
async function fakeMsUntil(condition: () => boolean, what: string, maxMs = 10_000): Promise<number> {
  let elapsed = 0;
  while (!condition()) {
    if (elapsed >= maxMs) throw new Error(`not true after ${maxMs} ms of fake time: ${what}`);
    await vi.advanceTimersByTimeAsync(1);
    elapsed++;
  }
  return elapsed;
}

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

describe('9. placement propagation', () => {
  it('shows a placement set on A in the strategy state of B and C within a few network delays, by push alone', async () => {
    vi.useFakeTimers();
    const [a, b, c] = threeNodes(NO_ANTI_ENTROPY);
    await run(600);
    const figures: number[] = [];
    for (let shardId = 0; shardId < 20; shardId++) {
      await a.controller.setPlacement(shardId, (shardId % 2 === 0 ? b : c).address);
      const want = (n: ExtNode): boolean => n.controller.getState().explicitPlacements.has(shardId);
      figures.push(await fakeMsUntil(() => want(b) && want(c), `pin ${shardId} on b and c`));
    }
    // One hop of 1 ms; a few ms of slack for the per-pair FIFO and the 1 ms stepping. Anti-entropy is
    // 1e9 ms away, so nothing but the push can have carried it.
    expect(Math.max(...figures)).toBeLessThanOrEqual(3);
    expect(pinsOf(b)).toEqual(pinsOf(a));
    expect(pinsOf(c)).toEqual(pinsOf(a));
    console.log(
      `[figure] set on A -> visible in getState() on B and C (fake time, 1 ms link): median ${median(figures)} ms, max ${Math.max(...figures)} ms over ${figures.length} writes`,
    );
  });

  it('does not deliver a pin whose push was lost while anti-entropy is off (so the push is what carried it)', async () => {
    vi.useFakeTimers();
    const [a, b, c] = threeNodes(NO_ANTI_ENTROPY);
    await run(600);
    cluster?.net.partition([b.address], [a.address, c.address]);
    await a.controller.setPlacement(1, c.address);
    await run(100);
    expect(pinsOf(c)).toEqual([[1, c.key]]);
    cluster?.net.heal();
    await run(60_000);
    expect(pinsOf(b)).toEqual([]);
  });

  it('repairs a lost push by anti-entropy when it is on', async () => {
    vi.useFakeTimers();
    const [a, b, c] = threeNodes(1_000);
    await run(600);
    cluster?.net.partition([b.address], [a.address, c.address]);
    await a.controller.setPlacement(1, c.address);
    await run(100);
    expect(pinsOf(b)).toEqual([]);
    cluster?.net.heal();
    const ms = await fakeMsUntil(() => pinsOf(b).length === 1, 'anti-entropy repair', 20_000);
    console.log(`[figure] lost push repaired by anti-entropy (1000 ms interval, random peer): ${ms} ms of fake time`);
  });

  it('measures wall-clock propagation over the in-memory network with a 1 ms delay (real timers)', async () => {
    const [a, b, c] = threeNodes(NO_ANTI_ENTROPY);
    await waitFor(() => a.sharding.stats().types['Counter']?.coordinator?.warm === true, 'coordinator warm');
    const samples: number[] = [];
    for (let shardId = 0; shardId < 50; shardId++) {
      const arrived = new Map<string, number>();
      const unsubscribe = [b, c].map((node) =>
        node.sharding.placementStore.onChange((_type, shards) => {
          if (shards.includes(shardId) && !arrived.has(node.key)) arrived.set(node.key, performance.now());
        }),
      );
      const start = performance.now();
      await a.controller.setPlacement(shardId, b.address);
      await waitFor(() => arrived.size === 2, `pin ${shardId} on b and c`, 5_000);
      for (const stop of unsubscribe) stop();
      samples.push(Math.max(...arrived.values()) - start);
      expect(b.controller.getState().explicitPlacements.get(shardId)?.toString()).toBe(b.key);
    }
    const sorted = [...samples].sort((x, y) => x - y);
    console.log(
      `[figure] set on A -> on every other node (wall clock, MemoryNetwork 1 ms delay, ${samples.length} writes): ` +
        `median ${median(samples).toFixed(2)} ms, p90 ${sorted[Math.floor(sorted.length * 0.9)]?.toFixed(2)} ms, max ${sorted[sorted.length - 1]?.toFixed(2)} ms`,
    );
  });
});
