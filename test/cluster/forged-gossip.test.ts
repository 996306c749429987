// The sender rules (gossip-guard.ts) against the forged messages of issue 27, in-process on the memory
// network with fake time: from a node that is not a member, and from a member, one Gossip marking members
// down, the receiver itself down, tombstones of members, reachability rows at 2^53-1 in which everyone
// observes everyone unreachable, and a fake `up` member carrying such a row. Afterwards every honest node
// is alive, a member, sees every member up and reachable (not frozen), and the cluster converges.
import { describe, expect, it } from 'vitest';
import { MemoryNetwork } from '../../src/cluster/transport/memory-transport.js';
import { CLUSTER_MESSAGES, type ClusterMessage } from '../../src/cluster/membership/messages.js';
import { useFakeTime } from '../support/fake-time.js';
import { address, advanceUntil, allUp, createNode, type TestNode } from './cluster-harness.js';
import { issueAttacks, type KnownMember } from './forgery.js';

let nodes: TestNode[] = [];
useFakeTime(() => {
  for (const n of nodes) n.cluster.shutdown();
  nodes = [];
});

async function startCluster(network: MemoryNetwork, count: number): Promise<TestNode[]> {
  for (let i = 1; i <= count; i++) {
    const node = createNode(network, i);
    nodes.push(node);
    node.cluster.start();
    await advanceUntil(() => node.cluster.selfMember()?.status === 'up', `node ${i} up`);
  }
  await advanceUntil(() => allUp(nodes) && nodes.every((n) => n.cluster.isConverged()), 'all up and converged');
  return nodes;
}

function known(n: TestNode): KnownMember {
  const self = n.cluster.selfMember();
  return { address: n.address, incarnation: `inc-${n.address.port - 2550}`, upNumber: self?.upNumber ?? 0 };
}

/** Records every honest node's end, if any. */
function watchEnds(honest: ReadonlyArray<TestNode>): string[] {
  const ends: string[] = [];
  for (const n of honest) {
    n.cluster.onSelfDown((cause) => ends.push(`${n.address.port - 2550} down (${cause})`));
    n.cluster.onSelfRemoved(() => ends.push(`${n.address.port - 2550} removed`));
  }
  return ends;
}

/** Alive, a member, every member up and reachable in its view, and converged. */
function healthy(honest: ReadonlyArray<TestNode>, all: ReadonlyArray<TestNode>): boolean {
  return (
    honest.every((n) => n.cluster.selfMember()?.status === 'up') &&
    allUp(all) &&
    all.every((n) => n.cluster.isConverged())
  );
}

async function watchFor(ms: number, honest: ReadonlyArray<TestNode>, all: ReadonlyArray<TestNode>): Promise<string[]> {
  const unhealthy: string[] = [];
  const start = Date.now();
  await advanceUntil(
    () => {
      if (!healthy(honest, all)) unhealthy.push(`${Date.now() - start} ms`);
      return Date.now() - start >= ms;
    },
    `${ms} ms watched`,
    ms + 1_000,
    250,
  );
  return unhealthy;
}

describe('Cluster: forged gossip (issue 27)', () => {
  const attackNames = issueAttacks([], { address: address(1), incarnation: 'x', upNumber: 1 }, []).map(
    ([what]) => what,
  );

  // News from a non-member was dropped before the sender rules too (onNews checked isLivePeer): not replayed here.
  it.each(attackNames.filter((what) => !what.includes('news')))(
    'a node that is not a member sends %s: nothing changes',
    async (what) => {
      const network = new MemoryNetwork({ seed: 11 });
      const all = await startCluster(network, 3);
      const ends = watchEnds(all);
      const intruder = network.transport(address(99));
      intruder.register(CLUSTER_MESSAGES);
      const receiver = all[0]!;
      const attack = issueAttacks(all.map(known), known(receiver), [known(all[1]!), known(all[2]!)]).find(
        ([name]) => name === what,
      )!;
      for (const target of all) intruder.send(target.address, attack[1]);
      const unhealthy = await watchFor(20_000, all, all);
      expect(ends).toEqual([]);
      expect(unhealthy).toEqual([]);
    },
  );

  it.each(attackNames)(
    'a member sends %s about the others: every other node stays up, reachable and converged',
    async (what) => {
      const network = new MemoryNetwork({ seed: 12 });
      const all = await startCluster(network, 4);
      const honest = all.slice(0, 3);
      const attacker = all[3]!;
      const ends = watchEnds(honest);
      for (const receiver of honest) {
        const others = honest.filter((n) => n !== receiver);
        const attack = issueAttacks(all.map(known), known(receiver), others.map(known)).find(
          ([name]) => name === what,
        )!;
        attacker.transport.send(receiver.address, attack[1] satisfies ClusterMessage);
      }
      const unhealthy = await watchFor(20_000, honest, all);
      expect(ends).toEqual([]);
      expect(unhealthy).toEqual([]);
    },
  );
});
