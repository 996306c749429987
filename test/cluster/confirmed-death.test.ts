// Confirmed deaths (death-confirmation.ts): a crashed member, whose address refuses connections, is marked
// unreachable and downed within seconds, without waiting out stable-after; a member that is only silent (cut
// off: its address does not refuse) stays on the stable-after path, and the minority still downs itself first.
// In-memory network and fake time: a closed transport refuses, a partition drops.
import { describe, expect, it } from 'vitest';
import { MemoryNetwork, MemoryTransport } from '../../src/cluster/transport/memory-transport.js';
import { CONFIRM_REFUSALS, CONFIRM_SPACING_MS } from '../../src/cluster/membership/death-confirmation.js';
import { address, advanceUntil, allUp, createNode, statusOf, type TestNode } from './cluster-harness.js';
import { useFakeTime } from '../support/fake-time.js';

let nodes: TestNode[] = [];
useFakeTime(() => {
  for (const n of nodes) n.cluster.shutdown();
  nodes = [];
});

async function startThree(network: MemoryNetwork, config = {}): Promise<TestNode[]> {
  nodes = [1, 2, 3].map((i) => createNode(network, i, config));
  for (const node of nodes) node.cluster.start();
  await advanceUntil(() => allUp(nodes), 'all up');
  return nodes;
}

/** Three nodes, n3 cut off from the others: when the cut began, and whether n3 has downed itself yet. */
async function cutOffThird(
  network: MemoryNetwork,
): Promise<{ readonly n1: TestNode; readonly cutAt: number; readonly minorityDown: () => boolean }> {
  const [n1, , n3] = (await startThree(network)) as [TestNode, TestNode, TestNode];
  let down = false;
  n3.cluster.onSelfDown(() => {
    down = true;
  });
  network.isolate(address(3));
  return { n1, cutAt: Date.now(), minorityDown: () => down };
}

function probes(node: TestNode): number {
  if (!(node.transport instanceof MemoryTransport)) throw new Error('the harness gives every node a MemoryTransport');
  return node.transport.probes;
}

describe('confirmed deaths', () => {
  it('downs a crashed member within a few heartbeat intervals, long before stable-after', async () => {
    const network = new MemoryNetwork();
    const [n1, n2, n3] = (await startThree(network)) as [TestNode, TestNode, TestNode];
    n3.cluster.shutdown();
    await n3.transport.close();
    const crashAt = Date.now();
    await advanceUntil(
      () => statusOf(n1.cluster, address(3)) === 'down' || statusOf(n1.cluster, address(3)) === undefined,
      'downed',
    );
    // Detection starts after 1.5 silent intervals (1 s each), a confirmation takes two probes, then gossip.
    expect(Date.now() - crashAt).toBeLessThan(5_000);
    await advanceUntil(() => statusOf(n2.cluster, address(3)) === undefined, 'removed on n2', 5_000);
    expect(probes(n1) + probes(n2)).toBeGreaterThanOrEqual(CONFIRM_REFUSALS);
  });

  it('does not confirm a member that is only cut off: it is downed by the stable-after path, after the minority downed itself', async () => {
    const { n1, cutAt, minorityDown } = await cutOffThird(new MemoryNetwork());
    await advanceUntil(
      () => n1.cluster.members().find((m) => m.address.equals(address(3)))?.reachable === false,
      'unreachable',
    );
    // Probes of a cut-off member answer nothing: no confirmation, so no downing before stable-after (10 s).
    await advanceUntil(minorityDown, 'the minority downed itself', 20_000);
    const minorityDownAt = Date.now();
    expect(statusOf(n1.cluster, address(3))).toBe('up');
    await advanceUntil(() => statusOf(n1.cluster, address(3)) !== 'up', 'the majority downs it', 20_000);
    expect(Date.now() - cutAt).toBeGreaterThanOrEqual(10_000);
    expect(Date.now()).toBeGreaterThan(minorityDownAt);
  });

  it('downs a crashed member whose connections closed before a heartbeat interval passes', async () => {
    // The kernel closes a dead process's connections at once: the survivors probe then, not after 1.5 silent
    // heartbeat intervals, so the whole path (probe, confirmation, downing) fits in less than one interval.
    const network = new MemoryNetwork({ signalConnectionLoss: true });
    const [n1, n2, n3] = (await startThree(network)) as [TestNode, TestNode, TestNode];
    const { heartbeatIntervalMs } = n1.cluster.config;
    n3.cluster.shutdown();
    await n3.transport.close();
    const crashAt = Date.now();
    await advanceUntil(() => statusOf(n1.cluster, address(3)) !== 'up', 'downed', 5_000, 5);
    expect(Date.now() - crashAt).toBeLessThan(heartbeatIntervalMs);
    await advanceUntil(() => statusOf(n2.cluster, address(3)) !== 'up', 'downed on n2', 5_000, 5);
    expect(Date.now() - crashAt).toBeLessThan(heartbeatIntervalMs);
  });

  it('downs a member killed before anyone heartbeat it, without waiting for the next heartbeat tick', async () => {
    // A member that joined within the last heartbeat interval is monitored by nobody yet; its confirmed death
    // still counts at once. Fake time moves 1 ms a step, so the next tick (up to an interval away) is not what acts.
    const network = new MemoryNetwork({ signalConnectionLoss: true });
    nodes = [1, 2].map((i) => createNode(network, i));
    for (const node of nodes) node.cluster.start();
    await advanceUntil(() => allUp(nodes), 'two up');
    const [n1, n2] = nodes as [TestNode, TestNode];
    const n3 = createNode(network, 3);
    nodes.push(n3);
    n3.cluster.start();
    await advanceUntil(() => statusOf(n1.cluster, address(3)) === 'up', 'n3 up on n1', 5_000, 1);
    n3.cluster.shutdown();
    await n3.transport.close();
    const crashAt = Date.now();
    await advanceUntil(() => statusOf(n1.cluster, address(3)) !== 'up', 'downed', 5_000, 1);
    await advanceUntil(() => statusOf(n2.cluster, address(3)) !== 'up', 'downed on n2', 5_000, 1);
    expect(Date.now() - crashAt).toBeLessThanOrEqual(4 * CONFIRM_SPACING_MS);
  });

  it('does not probe a leaving member at once when its connections close: its graceful path is not raced', async () => {
    const network = new MemoryNetwork({ signalConnectionLoss: true });
    const [n1, n2, n3] = (await startThree(network)) as [TestNode, TestNode, TestNode];
    void n3.cluster.leave().catch(() => undefined);
    await advanceUntil(() => statusOf(n1.cluster, address(3)) === 'leaving', 'leaving on n1', 5_000, 1);
    await advanceUntil(() => statusOf(n2.cluster, address(3)) === 'leaving', 'leaving on n2', 5_000, 1);
    const before = probes(n1) + probes(n2);
    n3.cluster.shutdown();
    await n3.transport.close();
    // Less than the 1.5 silent heartbeat intervals after which silence alone makes them probe.
    await advanceUntil(() => false, 'nothing', n1.cluster.config.heartbeatIntervalMs, 10).catch(() => undefined);
    expect(probes(n1) + probes(n2)).toBe(before);
  });

  it('a crash behind a cut sends no close: the slow path, the minority downing itself first', async () => {
    const { n1, cutAt, minorityDown } = await cutOffThird(new MemoryNetwork({ signalConnectionLoss: true }));
    await advanceUntil(minorityDown, 'the minority downed itself', 20_000);
    expect(statusOf(n1.cluster, address(3))).toBe('up');
    await advanceUntil(() => statusOf(n1.cluster, address(3)) !== 'up', 'the majority downs it', 20_000);
    expect(Date.now() - cutAt).toBeGreaterThanOrEqual(10_000);
  });

  it("carries a confirmation in the view (confirmedDead) for the dead process's record only", async () => {
    const network = new MemoryNetwork({ signalConnectionLoss: true });
    const [n1, , n3] = (await startThree(network)) as [TestNode, TestNode, TestNode];
    const recordOf = (i: number) => n1.cluster.members().find((m) => m.address.equals(address(i)));
    n3.cluster.shutdown();
    await n3.transport.close();
    await advanceUntil(() => recordOf(3)?.confirmedDead === true, 'confirmed in the view', 5_000, 1);
    expect(recordOf(2)?.confirmedDead).toBeUndefined();
    expect(recordOf(1)?.confirmedDead).toBeUndefined();
  });

  it('never carries a confirmation for a member that is only cut off', async () => {
    const { n1, minorityDown } = await cutOffThird(new MemoryNetwork({ signalConnectionLoss: true }));
    await advanceUntil(() => statusOf(n1.cluster, address(3)) !== 'up', 'the majority downs it', 30_000);
    expect(minorityDown()).toBe(true);
    expect(n1.cluster.members().some((m) => m.confirmedDead === true)).toBe(false);
  });

  it('keeps the slow path when death confirmation is off', async () => {
    const network = new MemoryNetwork();
    const [n1, , n3] = (await startThree(network, { confirmDeaths: false })) as [TestNode, TestNode, TestNode];
    n3.cluster.shutdown();
    await n3.transport.close();
    const crashAt = Date.now();
    await advanceUntil(() => statusOf(n1.cluster, address(3)) !== 'up', 'downed', 30_000);
    expect(Date.now() - crashAt).toBeGreaterThanOrEqual(10_000);
    expect(probes(n1)).toBe(0);
  });
});
