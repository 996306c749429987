// External allocation on the real membership (Cluster: seed join, gossip, graceful leave) over a
// MemoryNetwork with fake timers: a node started later pulls every placement while it joins, a pin to it
// written before it existed is honoured once it is Up, and the pins outlive the oldest node's leave.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryNetwork } from '../../src/cluster/transport/memory-transport.js';
import { address, advanceUntil, allUp, createNode, type TestNode as ClusterNode } from '../cluster/cluster-harness.js';
import { TYPE, pinsOf, startExternalNode, type ExtNode } from './harness.js';
import { entityInShard, hostedShards } from '../sharding/harness.js';

const SHARDS = 50;
let network: MemoryNetwork;
let members: ClusterNode[];
let nodes: ExtNode[];

beforeEach(() => {
  vi.useFakeTimers();
  network = new MemoryNetwork({ seed: 3, delayMs: 1 });
  members = [];
  nodes = [];
});
afterEach(async () => {
  for (const node of nodes) await node.sharding.shutdown();
  for (const member of members) member.cluster.shutdown();
  for (const member of members) await member.transport.close();
  vi.useRealTimers();
});

/** Node i as `startNode` wires it: sharding and the type are set up before the cluster joins. */
function start(i: number): ExtNode {
  const member = createNode(network, i, { gossipIntervalMs: 200, heartbeatIntervalMs: 200 });
  members.push(member);
  const node = startExternalNode(network, member.cluster, { transport: member.transport, numberOfShards: SHARDS });
  nodes.push(node);
  member.cluster.start();
  return node;
}

function hostOf(shardId: number): string | undefined {
  const live = nodes.filter(
    (n) => members.find((m) => m.address.equals(n.address))?.cluster.selfMember()?.status === 'up',
  );
  return hostedShards(live, TYPE).get(shardId)?.join(',');
}

function touch(from: ExtNode, shardId: number): void {
  from.sharding.entityRefFor(TYPE, entityInShard(shardId, SHARDS)).tell({ op: 'inc' });
}

describe('external allocation on the real cluster membership', () => {
  it('gives a joining node the full state and honours a pin written for it before it existed', async () => {
    const n1 = start(1);
    const n2 = start(2);
    await advanceUntil(() => allUp(members), 'nodes 1-2 up');
    n1.controller.setPlacements([
      { shardId: 1, target: address(2).toString() },
      { shardId: 2, target: address(3).toString() },
      { shardId: 3, target: address(1).toString() },
    ]);
    await n2.controller.setPlacement(4, address(3));
    touch(n1, 2);
    await advanceUntil(() => hostOf(2) !== undefined, 'shard 2 allocated before node 3 exists');
    expect([n1.key, n2.key]).toContain(hostOf(2));
    expect(n1.warnings.map((w) => w.details.reason)).toEqual(['not a candidate']);

    const n3 = start(3);
    await advanceUntil(() => allUp(members), 'node 3 up');
    expect(pinsOf(n3)).toEqual(pinsOf(n1));
    expect(pinsOf(n3)).toHaveLength(4);
    // Up is a membership change: the coordinator re-evaluates the pins at once.
    await advanceUntil(() => hostOf(2) === n3.key, 'shard 2 on node 3', 2_000, 10);
    touch(n2, 4);
    await advanceUntil(() => hostOf(4) === n3.key, 'shard 4 on node 3', 2_000, 10);
  });

  it('keeps honouring pins after the oldest node (the coordinator) leaves', async () => {
    const n1 = start(1);
    const n2 = start(2);
    const n3 = start(3);
    await advanceUntil(() => allUp(members), 'nodes up');
    expect(n2.sharding.coordinatorFor(TYPE)?.toString()).toBe(n1.key);
    n1.controller.setPlacements([
      { shardId: 10, target: n3.key },
      { shardId: 11, target: n2.key },
      { shardId: 12, target: n1.key },
    ]);
    for (const shardId of [10, 11, 12]) touch(n2, shardId);
    await advanceUntil(
      () => hostOf(10) === n3.key && hostOf(11) === n2.key && hostOf(12) === n1.key,
      'pinned shards placed',
    );

    const leaving = members[0] as ClusterNode;
    void leaving.cluster.leave();
    await advanceUntil(() => n2.sharding.coordinatorFor(TYPE)?.toString() === n2.key, 'coordinator moved to node 2');
    await advanceUntil(
      () => leaving.cluster.selfMember() === undefined || leaving.cluster.selfMember()?.status === 'removed',
      'node 1 gone',
      60_000,
    );
    // Shard 12's target left: it was handed off and lives on by the fallback; the others stay on their pins.
    touch(n3, 12);
    await advanceUntil(() => hostOf(12) !== undefined && hostOf(12) !== n1.key, 'shard 12 re-allocated');
    expect(hostOf(10)).toBe(n3.key);
    expect(hostOf(11)).toBe(n2.key);
    expect(pinsOf(n2)).toEqual([
      [10, n3.key],
      [11, n2.key],
      [12, n1.key],
    ]);
    // The new coordinator takes new pins and moves promptly.
    await n3.controller.setPlacement(10, n2.address);
    await advanceUntil(() => hostOf(10) === n2.key, 'shard 10 re-pinned under the new coordinator', 2_000, 10);
  });
});
