// Issue 41: a node measures its clock against its peers' on the heartbeats it already exchanges, and one whose clock
// steps far off while it runs is in skew within one heartbeat round (its writes are refused with clock_skew from
// then on), while the nodes with sane clocks are not; back within the bound, it is out of skew again. Real Cluster
// protocol over an in-memory network, fake time, one node's wall clock skewed at will.
import { describe, expect, it } from 'vitest';
import { MemoryNetwork } from '../../src/cluster/transport/memory-transport.js';
import { useFakeTime } from '../support/fake-time.js';
import { startClusterMember } from '../support/in-process-cluster.js';
import { address, advanceUntil, allUp, type TestNode } from './cluster-harness.js';
import { vi } from 'vitest';

const DAY = 86_400_000;
const HEARTBEAT_MS = 1_000;
let nodes: TestNode[] = [];
useFakeTime(() => {
  for (const n of nodes) n.cluster.shutdown();
  nodes = [];
});

async function cluster(skew: { ms: number }): Promise<TestNode[]> {
  const network = new MemoryNetwork();
  for (let i = 1; i <= 3; i++) {
    const node = startClusterMember(network, address(i), {
      config: { seedNodes: [address(1)], heartbeatIntervalMs: HEARTBEAT_MS },
      incarnation: `inc-${i}`,
      seed: i,
      ...(i === 3 ? { wallClock: () => Date.now() + skew.ms } : {}),
    });
    nodes.push(node);
    node.cluster.start();
  }
  await advanceUntil(() => allUp(nodes), 'all up');
  // A round for every node to hear each monitored member's clock.
  await vi.advanceTimersByTimeAsync(2 * HEARTBEAT_MS);
  return nodes;
}

const reasons = (of: TestNode[]) => of.map((node) => node.cluster.clock.skewReason());

describe('clock offset on heartbeats', () => {
  it('a clock that steps a day ahead while running is in skew within one heartbeat round, the others are not', async () => {
    const skew = { ms: 0 };
    const [a, b, c] = await cluster(skew);
    expect(reasons([a!, b!, c!])).toEqual([undefined, undefined, undefined]);
    expect(Math.abs(c!.cluster.clock.offsetMs() ?? Number.NaN)).toBeLessThan(1_000);

    skew.ms = DAY;
    await vi.advanceTimersByTimeAsync(HEARTBEAT_MS + 50);
    expect(c!.cluster.clock.skewReason()).toMatch(/clock is 86\d{3}(\.\d+)? s ahead of the median of its peers/);
    expect(reasons([a!, b!])).toEqual([undefined, undefined]);
    expect(Math.abs(a!.cluster.clock.offsetMs() ?? Number.NaN)).toBeLessThan(1_000);

    skew.ms = -DAY;
    await vi.advanceTimersByTimeAsync(HEARTBEAT_MS + 50);
    expect(c!.cluster.clock.skewReason()).toMatch(/ s behind the median/);

    skew.ms = 0;
    await vi.advanceTimersByTimeAsync(HEARTBEAT_MS + 50);
    expect(reasons([a!, b!, c!])).toEqual([undefined, undefined, undefined]);
  });

  it('says each change once to its listeners', async () => {
    const skew = { ms: 0 };
    const [, , c] = await cluster(skew);
    const changes: boolean[] = [];
    c!.cluster.clock.onSkewChange((skewed) => changes.push(skewed));
    skew.ms = DAY;
    await vi.advanceTimersByTimeAsync(5 * HEARTBEAT_MS);
    skew.ms = 0;
    await vi.advanceTimersByTimeAsync(5 * HEARTBEAT_MS);
    expect(changes).toEqual([true, false]);
  });
});
