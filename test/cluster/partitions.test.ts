// Membership under partitions, with fake timers and the in-memory network: the outcome must not depend on
// the phase of any node's timers. The minority downs itself the configured margin before the majority
// downs it; a non-transitive cut is decided once, by the leader from the merged reachability table, and the
// downed end learns it through the member in between; a node removed while paused learns it on waking.
import { describe, expect, it, vi } from 'vitest';
import type { SelfDownCause } from '../../src/cluster/membership/cluster.js';
import type { NodeAddress } from '../../src/cluster/address.js';
import type { ClusterConfigInput } from '../../src/cluster/membership/config.js';
import { MemoryNetwork } from '../../src/cluster/transport/memory-transport.js';
import {
  PausableScheduler,
  address,
  advanceUntil,
  allUp,
  createNode,
  statusOf,
  type TestNode,
} from './cluster-harness.js';
import { useFakeTime } from '../support/fake-time.js';

let nodes: TestNode[] = [];
useFakeTime(() => {
  for (const n of nodes) n.cluster.shutdown();
  nodes = [];
});

/** Starts nodes 1..count, node i after `phasesMs[i - 1]` more ms of fake time, and waits until all are Up. */
async function startWithPhases(
  network: MemoryNetwork,
  phasesMs: ReadonlyArray<number>,
  config: ClusterConfigInput,
): Promise<TestNode[]> {
  const started: TestNode[] = [];
  for (const [index, phase] of phasesMs.entries()) {
    await vi.advanceTimersByTimeAsync(phase);
    const node = createNode(network, index + 1, config);
    nodes.push(node);
    started.push(node);
    node.cluster.start();
  }
  await advanceUntil(() => allUp(started) && started.every((n) => n.cluster.isConverged()), 'all up', 60_000, 7);
  // Let the failure detectors settle: their statistics start from an estimate that a dozen heartbeats replace.
  await vi.advanceTimersByTimeAsync(15_000);
  return started;
}

const num = (a: NodeAddress): number => a.port - 2550;
const n = (node: TestNode): number => num(node.address);

describe('partitions: the minority acts first, by the configured margin', () => {
  const config = { downAfterMs: 3_000 }; // minorityDownAfterMs 2,250: a 750 ms margin, less than a heartbeat interval
  const margin = 750;

  it.each([
    { phasesMs: [0, 0, 0, 0, 0], cutAfterMs: 0 },
    { phasesMs: [0, 137, 401, 733, 59], cutAfterMs: 311 },
    { phasesMs: [0, 990, 5, 500, 250], cutAfterMs: 997 },
    { phasesMs: [0, 333, 333, 1, 998], cutAfterMs: 542 },
    { phasesMs: [0, 211, 876, 440, 95], cutAfterMs: 123, latencyMs: 5 },
  ])('timer phases $phasesMs, cut after $cutAfterMs ms', async ({ phasesMs, cutAfterMs, latencyMs }) => {
    const network = new MemoryNetwork({ delayMs: latencyMs ?? 0 });
    // Each side measures silence from the last message it received: one hop apart (at least 1 ms here).
    const hopMs = Math.max(1, latencyMs ?? 0);
    const started = await startWithPhases(network, phasesMs, config);
    const majority = started.slice(0, 3);
    const minority = started.slice(3);
    const selfDownAt = new Map<number, number>();
    const causes: SelfDownCause[] = [];
    for (const m of minority) {
      m.cluster.onSelfDown((cause) => {
        causes.push(cause);
        selfDownAt.set(n(m), Date.now());
      });
    }
    const downedAt = new Map<number, number>();
    for (const observer of majority) {
      observer.cluster.onChange(() => {
        for (const m of minority)
          if (statusOf(observer.cluster, m.address) === 'down' && !downedAt.has(n(m))) downedAt.set(n(m), Date.now());
      });
    }
    await vi.advanceTimersByTimeAsync(cutAfterMs);
    network.partition(
      majority.map((m) => m.address),
      minority.map((m) => m.address),
    );
    await advanceUntil(() => majority.every((m) => m.cluster.members().length === 3), 'minority removed', 60_000, 7);

    expect(causes).toEqual(['minority-side', 'minority-side']);
    for (const m of minority) {
      const selfDown = selfDownAt.get(n(m));
      const down = downedAt.get(n(m));
      expect(selfDown, `node ${n(m)} downed itself`).toBeDefined();
      expect(down, `the majority downed node ${n(m)}`).toBeDefined();
      expect(down! - selfDown!).toBeGreaterThanOrEqual(margin - hopMs);
    }
    for (const m of majority) expect(m.cluster.members().every((x) => x.status === 'up' && x.reachable)).toBe(true);
  });
});

describe('partitions: a non-transitive cut is decided once, by the leader, and reaches the downed end through the middle', () => {
  it.each([
    { cut: [1, 3], middle: 2, phasesMs: [0, 0, 0] },
    { cut: [1, 3], middle: 2, phasesMs: [0, 613, 271] },
    { cut: [1, 2], middle: 3, phasesMs: [0, 5, 994] },
    { cut: [2, 3], middle: 1, phasesMs: [0, 450, 449] },
    { cut: [1, 3], middle: 2, phasesMs: [0, 77, 702], latencyMs: 20 },
  ])('link $cut cut, $middle between, phases $phasesMs', async ({ cut, middle, phasesMs, latencyMs }) => {
    const network = new MemoryNetwork({ delayMs: latencyMs ?? 0 });
    const started = await startWithPhases(network, phasesMs, { downAfterMs: 3_000 });
    const byNumber = (i: number): TestNode => started[i - 1]!;
    const [low, high] = [byNumber(cut[0]!), byNumber(cut[1]!)];
    const downs: Array<{ node: number; cause: SelfDownCause; atMs: number }> = [];
    for (const node of started)
      node.cluster.onSelfDown((cause) => downs.push({ node: n(node), cause, atMs: Date.now() }));
    let highSawLowUnreachableAt: number | undefined;
    high.cluster.onChange(() => {
      const seen = high.cluster.members().find((m) => m.address.equals(low.address));
      if (seen && !seen.reachable) highSawLowUnreachableAt ??= Date.now();
    });

    network.partition([low.address], [high.address]);
    await advanceUntil(
      () => statusOf(byNumber(middle).cluster, high.address) === undefined,
      'the higher address removed',
      60_000,
      7,
    );
    await vi.advanceTimersByTimeAsync(10_000);

    // Exactly one end of the cut link is downed: the higher address, by the leader's decision (the member
    // nobody observes as unreachable: the middle one), once the merged table was stable for stableAfterMs.
    expect(downs.map((d) => [d.node, d.cause])).toEqual([[n(high), 'downed-by-cluster']]);
    expect(highSawLowUnreachableAt).toBeDefined();
    expect(downs[0]!.atMs - highSawLowUnreachableAt!).toBeGreaterThanOrEqual(3_000);
    expect(downs[0]!.atMs - highSawLowUnreachableAt!).toBeLessThan(3_000 + 2_000);
    for (const survivor of [low, byNumber(middle)]) {
      expect(survivor.cluster.members().map((m) => `${num(m.address)}:${m.status}`)).toEqual(
        [low, byNumber(middle)].sort((a, b) => n(a) - n(b)).map((x) => `${n(x)}:up`),
      );
    }
  });
});

describe('partitions: a node removed while it was paused learns it on waking', () => {
  it.each([
    { what: 'its removed record', removedRetentionMs: 60_000 },
    { what: 'the tombstone of its pruned record', removedRetentionMs: 3_000 },
  ])('from $what: onSelfDown, then onSelfRemoved, once each', async ({ removedRetentionMs }) => {
    const network = new MemoryNetwork();
    const config = { downAfterMs: 3_000, removedRetentionMs };
    const others = [createNode(network, 1, config), createNode(network, 2, config)];
    const scheduler = new PausableScheduler();
    const zombie = createNode(network, 3, config, 'inc-3', scheduler);
    nodes.push(...others, zombie);
    for (const node of nodes) node.cluster.start();
    await advanceUntil(() => allUp(nodes), 'all up');
    const events: string[] = [];
    zombie.cluster.onSelfDown((cause) => events.push(`down:${cause}`));
    zombie.cluster.onSelfRemoved(() => events.push('removed'));

    // SIGSTOP: no timer runs and nothing arrives; the others down and remove the silent node.
    scheduler.pause();
    network.isolate(zombie.address);
    await advanceUntil(() => others.every((o) => statusOf(o.cluster, zombie.address) === undefined), 'zombie removed');
    await vi.advanceTimersByTimeAsync(30_000);
    const pruned = others[0]!.cluster.gossipSize().tombstones === 1;
    expect(pruned).toBe(removedRetentionMs < 30_000);
    expect(events).toEqual([]);

    // SIGCONT: its timers fire late, its heartbeats are answered with the news that it is gone.
    network.heal();
    scheduler.resume();
    await advanceUntil(() => events.length === 2, 'zombie learns it was removed', 2_000, 1);
    expect(events).toEqual(['down:downed-by-cluster', 'removed']);
    expect(zombie.cluster.selfMember()?.status).toBe('removed');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(events).toHaveLength(2);
    for (const o of others) expect(o.cluster.members().map((m) => num(m.address))).toEqual([1, 2]);
  });
});
