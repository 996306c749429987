// The membership asks the transport to replace the connection to a member whose heartbeat acks stopped:
// after two heartbeat intervals without one, then every interval until acks come back, and never for a
// member that answers. Fake timers and the in-memory network, whose transport counts the requests.
import { describe, expect, it, vi } from 'vitest';
import { MemoryNetwork, MemoryTransport } from '../../src/cluster/transport/memory-transport.js';
import { RECONNECT_AFTER_INTERVALS } from '../../src/cluster/membership/reachability.js';
import { advanceUntil, allUp, createNode, type TestNode } from './cluster-harness.js';
import { useFakeTime } from '../support/fake-time.js';

let nodes: TestNode[] = [];
useFakeTime(() => {
  for (const n of nodes) n.cluster.shutdown();
  nodes = [];
});

function requests(node: TestNode, peer: TestNode): number {
  if (!(node.transport instanceof MemoryTransport)) throw new Error('the harness gives every node a MemoryTransport');
  return node.transport.reconnects.get(peer.address.toString()) ?? 0;
}

describe('reachability asks for a new connection when acks stop', () => {
  it('after two silent intervals, then once per interval while the link is cut, and not once acks are back', async () => {
    const network = new MemoryNetwork();
    // A long downAfterMs: the cut must last many intervals without anybody being downed.
    const config = { heartbeatIntervalMs: 1_000, downAfterMs: 60_000 };
    nodes = [1, 2, 3].map((i) => createNode(network, i, config));
    for (const node of nodes) node.cluster.start();
    await advanceUntil(() => allUp(nodes), 'all up');
    await vi.advanceTimersByTimeAsync(5_000);
    const [n1, n2, n3] = nodes as [TestNode, TestNode, TestNode];
    expect([requests(n1, n2), requests(n1, n3), requests(n3, n1)]).toEqual([0, 0, 0]);

    network.partition([n1.address], [n3.address]);
    await vi.advanceTimersByTimeAsync(RECONNECT_AFTER_INTERVALS * 1_000 - 1);
    // Less than two intervals since the last ack: nothing yet (the last ack may be up to one interval old).
    expect(requests(n1, n3)).toBe(0);
    await vi.advanceTimersByTimeAsync(10_000);
    // Both ends ask, about once per interval, and only about the cut link.
    for (const [from, to] of [
      [n1, n3],
      [n3, n1],
    ] as const) {
      expect(requests(from, to)).toBeGreaterThanOrEqual(9);
      expect(requests(from, to)).toBeLessThanOrEqual(11);
    }
    expect(requests(n1, n2) + requests(n2, n1) + requests(n2, n3) + requests(n3, n2)).toBe(0);

    network.heal();
    await vi.advanceTimersByTimeAsync(2_000);
    const afterHeal = [requests(n1, n3), requests(n3, n1)];
    await vi.advanceTimersByTimeAsync(10_000);
    expect([requests(n1, n3), requests(n3, n1)]).toEqual(afterHeal);
  });
});
