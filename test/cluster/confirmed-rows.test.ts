// Rows held for the leader (confirmed-rows.ts): a member this node confirmed dead stays out of its reachability row
// for CONFIRMED_ROW_DELAY_MS while another node is the leader that can down it at once; nothing else is held. Then
// on the in-memory network with fake time: when the leader cannot confirm the death itself (its link to the dead
// member cut, so its probes get no refusal), the held row joins the table once the delay ends, and the member is
// downed all the same, on the slow path.
import { describe, expect, it } from 'vitest';
import type { MemberStatus } from '../../src/cluster/member.js';
import { CONFIRMED_ROW_DELAY_MS, heldOutOfRow } from '../../src/cluster/membership/confirmed-rows.js';
import type { UnreachableEdge } from '../../src/cluster/membership/reachability-table.js';
import { MemoryNetwork } from '../../src/cluster/transport/memory-transport.js';
import { useFakeTime } from '../support/fake-time.js';
import { address, advanceUntil, allUp, createNode, statusOf, type TestNode } from './cluster-harness.js';

const key = (i: number): string => `${address(i).toString()}#inc-${i}`;
const NOW = 10_000;

/** Node `self` observes `unreachable` (since NOW - age ms), confirming `confirmed`, with `others` rows in the table. */
function held(
  self: number,
  unreachable: ReadonlyArray<[number, number]>,
  confirmed: readonly number[],
  others: ReadonlyArray<[number, number]> = [],
  statuses: Record<number, MemberStatus> = {},
) {
  const members = Array.from({ length: 5 }, (_, i) => ({
    key: key(i + 1),
    address: address(i + 1),
    status: statuses[i + 1] ?? ('up' as MemberStatus),
  }));
  const edges: UnreachableEdge[] = [
    ...unreachable.map(([subject]) => ({ observer: key(self), subject: key(subject) })),
    ...others.map(([observer, subject]) => ({ observer: key(observer), subject: key(subject) })),
  ];
  return heldOutOfRow({
    selfKey: key(self),
    unreachableSince: new Map(unreachable.map(([subject, age]) => [key(subject), NOW - age])),
    confirmed: (k) => confirmed.map(key).includes(k),
    table: () => ({ members, edges }),
    now: NOW,
  });
}

describe('heldOutOfRow', () => {
  it('holds a member confirmed dead while another node is the leader, until the delay from its confirmation', () => {
    const result = held(3, [[5, 100]], [5]);
    expect([...result.held]).toEqual([key(5)]);
    expect(result.dueAt).toBe(NOW - 100 + CONFIRMED_ROW_DELAY_MS);
  });

  it('holds nothing once the delay has passed', () => {
    expect([...held(3, [[5, CONFIRMED_ROW_DELAY_MS]], [5]).held]).toEqual([]);
  });

  it('holds nothing on the leader: its own row is what it acts on', () => {
    expect(held(1, [[5, 100]], [5]).held.size).toBe(0);
  });

  it('holds nothing for a member only silent (not confirmed)', () => {
    expect(held(3, [[5, 100]], []).held.size).toBe(0);
  });

  it('holds nothing when the decision also downs a member this node has not confirmed', () => {
    expect(held(3, [[5, 100]], [5], [[3, 4]]).held.size).toBe(0);
  });

  it('holds nothing when members are indirectly connected (a cut, not a death)', () => {
    expect(
      held(
        3,
        [[5, 100]],
        [5],
        [
          [4, 2],
          [2, 4],
        ],
      ).held.size,
    ).toBe(0);
  });
});

let nodes: TestNode[] = [];
useFakeTime(() => {
  for (const n of nodes) n.cluster.shutdown();
  nodes = [];
});

const reachableOn = (observer: TestNode, subject: number): boolean | undefined =>
  observer.cluster.members().find((m) => m.address.equals(address(subject)))?.reachable;

describe('a death the leader cannot confirm', () => {
  it('joins the table once the delay ends, and the member is downed all the same', async () => {
    const network = new MemoryNetwork({ signalConnectionLoss: true });
    nodes = [1, 2, 3].map((i) => createNode(network, i));
    for (const node of nodes) node.cluster.start();
    await advanceUntil(() => allUp(nodes), 'all up');
    const [n1, , n3] = nodes as [TestNode, TestNode, TestNode];
    // The leader n1 is cut off from n3: no close reaches it, and its probes of n3 are dropped, not refused.
    network.partition([address(1)], [address(3)]);
    n3.cluster.shutdown();
    await n3.transport.close();
    const crashAt = Date.now();
    // n2 confirmed the death and holds its row: the leader still sees n3 reachable (its own detector has not run out).
    await advanceUntil(() => Date.now() - crashAt >= CONFIRMED_ROW_DELAY_MS - 100, 'just before the delay ends', 5_000);
    expect(reachableOn(n1, 3)).toBe(true);
    await advanceUntil(() => reachableOn(n1, 3) === false, "n2's row reaches the leader", 400, 10);
    expect(Date.now() - crashAt).toBeLessThan(CONFIRMED_ROW_DELAY_MS + 300);
    await advanceUntil(() => statusOf(n1.cluster, address(3)) !== 'up', 'downed on the slow path', 30_000);
  });
});
