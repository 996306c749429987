// Gossip in a cluster larger than NEWS_FANOUT + 1, on the in-memory network with fake timers: it converges
// under drops, duplicates and reordering; once it agrees, the periodic gossip is statuses only (no full
// state); a crash's unreachability and downing travel as GossipNews deltas and reach every node, with few
// full states on the way (each observer's row straight from it to every member, not passed on). A status or
// news from a node that is not a member changes nothing.
import { describe, expect, it } from 'vitest';
import { Cluster } from '../../src/cluster/membership/cluster.js';
import { keyOf, toWire, type MemberRecord } from '../../src/cluster/membership/gossip.js';
import { MemoryNetwork } from '../../src/cluster/transport/memory-transport.js';
import { CLUSTER_MESSAGES, type ClusterMessage } from '../../src/cluster/membership/messages.js';
import { NEWS_FANOUT } from '../../src/cluster/membership/membership-core.js';
import { CONFIRMED_ROW_DELAY_MS } from '../../src/cluster/membership/confirmed-rows.js';
import { seededRandom } from '../../src/cluster/random.js';
import type { Transport } from '../../src/cluster/transport/transport.js';
import type { WireMessage } from '../../src/cluster/transport/wire-message.js';
import { useFakeTime } from '../support/fake-time.js';
import { address, advanceUntil, allUp, statusOf, type TestNode } from './cluster-harness.js';

const N = 16;

let nodes: TestNode[] = [];
useFakeTime(() => {
  for (const n of nodes) n.cluster.shutdown();
  nodes = [];
});

/** Sends by message type, over every node. */
class Counts {
  readonly byType = new Map<string, number>();

  wrap(transport: Transport): Transport {
    const byType = this.byType;
    return new Proxy(transport, {
      get(target, prop) {
        if (prop === 'send') {
          return (to: Parameters<Transport['send']>[0], message: WireMessage) => {
            byType.set(message.type, (byType.get(message.type) ?? 0) + 1);
            target.send(to, message);
          };
        }
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  get(type: string): number {
    return this.byType.get(type) ?? 0;
  }

  snapshot(): Map<string, number> {
    return new Map(this.byType);
  }

  since(before: Map<string, number>, type: string): number {
    return this.get(type) - (before.get(type) ?? 0);
  }
}

function startCluster(network: MemoryNetwork, counts: Counts): TestNode[] {
  const seeds = [address(1), address(2), address(3)];
  for (let i = 1; i <= N; i++) {
    const transport = counts.wrap(network.transport(address(i)));
    const cluster = new Cluster({
      transport,
      incarnation: `inc-${i}`,
      random: seededRandom(i),
      config: { seedNodes: seeds },
    });
    nodes.push({ address: address(i), cluster, transport });
  }
  for (const n of nodes) n.cluster.start();
  return nodes;
}

/** A converged cluster of N on `network`, its sends counted from now, and its last node as the victim. */
async function convergedWithVictim(network: MemoryNetwork): Promise<{
  counts: Counts;
  before: Map<string, number>;
  victim: TestNode;
  live: TestNode[];
}> {
  const counts = new Counts();
  startCluster(network, counts);
  await advanceUntil(
    () => allUp(nodes) && nodes.every((n) => n.cluster.isConverged()),
    'all Up and converged',
    120_000,
  );
  return { counts, before: counts.snapshot(), victim: nodes[N - 1]!, live: nodes.slice(0, N - 1) };
}

describe(`Cluster: gossip among ${N} nodes (more than NEWS_FANOUT + 1 = ${NEWS_FANOUT + 1})`, () => {
  it('converges under faults, then sends statuses only', async () => {
    const network = new MemoryNetwork({ seed: 5 });
    network.setFaults({ dropRate: 0.1, duplicateRate: 0.1, jitterMs: 30, reorder: true });
    const { counts } = await convergedWithVictim(network);
    const reference = JSON.stringify(nodes[0]!.cluster.members());
    for (const n of nodes) expect(JSON.stringify(n.cluster.members())).toBe(reference);

    network.setFaults({ dropRate: 0, duplicateRate: 0, jitterMs: 0, reorder: false });
    const before = counts.snapshot();
    const start = Date.now();
    await advanceUntil(() => Date.now() - start >= 10_000, '10 s of steady state', 11_000);
    expect(counts.since(before, 'Gossip')).toBe(0);
    expect(counts.since(before, 'GossipNews')).toBe(0);
    // One status per node per gossip interval (1 s), give or take the tick in flight at either end.
    expect(counts.since(before, 'GossipStatus')).toBeGreaterThanOrEqual(N * 9);
    expect(counts.since(before, 'GossipStatus')).toBeLessThanOrEqual(N * 11);
  });

  it('spreads a crash as news: every node sees it down, with few full states sent', async () => {
    const network = new MemoryNetwork({ seed: 6 });
    const { counts, before, victim, live } = await convergedWithVictim(network);
    network.isolate(victim.address);
    victim.cluster.shutdown();
    await advanceUntil(
      () =>
        live.every(
          (n) => statusOf(n.cluster, victim.address) === undefined || statusOf(n.cluster, victim.address) === 'down',
        ),
      'every node sees the victim down',
      60_000,
    );
    expect(counts.since(before, 'GossipNews')).toBeGreaterThan(0);
    // Each observer sends its row to every member itself, and nobody passes a row on that came from its own
    // observer: 275 news here. When every first receiver passed each row on to NEWS_FANOUT more: 1,355.
    expect(counts.since(before, 'GossipNews')).toBeLessThan(2 * N * N);
    // Reachability rows, the downing and the removal each reach every node as news; whole states go only to
    // the downed member and to the odd peer whose hash differed when a status arrived mid-change (15 here,
    // where pushing news in full sent thousands).
    expect(counts.since(before, 'Gossip')).toBeLessThan(2 * N);
    await advanceUntil(
      () => live.every((n) => statusOf(n.cluster, victim.address) === undefined),
      'removed everywhere',
      60_000,
    );
    // Through the removal: 410. An observer that wrote its row again only to drop the member once down sent
    // every row a second time: 536.
    expect(counts.since(before, 'GossipNews')).toBeLessThan(2 * N * N);
  });
});

describe(`Cluster: a confirmed death among ${N} nodes`, () => {
  it('the leader downs it on its own row, the others hold theirs; every node hears of it at once', async () => {
    // Every survivor sees its connection close and confirms the death itself (the address refuses). Only the
    // leader acts on a row and it confirms the death too: the others hold their rows (confirmed-rows.ts), where
    // each used to send its row to every member, N x N merges ahead of the downing (25 processes, issue 40).
    const { counts, before, victim, live } = await convergedWithVictim(
      new MemoryNetwork({ seed: 7, signalConnectionLoss: true }),
    );
    victim.cluster.shutdown();
    await victim.transport.close();
    const crashAt = Date.now();
    const sent = (): number => counts.since(before, 'GossipNews') + counts.since(before, 'Gossip');
    const seenDown = (n: TestNode): boolean => statusOf(n.cluster, victim.address) !== 'up';
    // The leader (the lowest address) downs it; until then only its own row and its downing went out, to every
    // member (30 here); 240 when every observer sent its row to every member.
    await advanceUntil(() => seenDown(live[0]!), 'the leader downs the victim', 5_000, 1);
    expect(sent()).toBeLessThanOrEqual(2 * (N - 1));
    await advanceUntil(() => live.every(seenDown), 'every node sees the victim down', 5_000, 1);
    expect(Date.now() - crashAt).toBeLessThan(CONFIRMED_ROW_DELAY_MS);
    // Then the downing, from the leader to every member, passed on as news: 170 messages in all.
    const atAllDown = sent();
    expect(atAllDown).toBeLessThan(16 * N);
    // A row held out no longer joins once its member is down: no row goes out when the delay ends (one row to
    // every member would be N - 1 messages, the 14 held ones about N x N).
    await advanceUntil(() => Date.now() - crashAt > 2 * CONFIRMED_ROW_DELAY_MS, 'past the delay', 5_000);
    expect(sent() - atAllDown).toBeLessThan(N - 1);
  });
});

describe('Cluster: status and news from outside the cluster', () => {
  it('ignores news and statuses from a node that is not a live member', async () => {
    const network = new MemoryNetwork({ seed: 7 });
    const { counts } = await convergedWithVictim(network);
    const intruder = network.transport(address(99));
    intruder.register(CLUSTER_MESSAGES);
    const target = nodes[0]!;
    const victim = nodes[5]!;
    // News that node 6 is down, from outside: a down record of its incarnation, which any merge would take.
    const downed: MemberRecord = {
      address: victim.address,
      incarnation: 'inc-6',
      status: 'down',
      appVersion: '1',
      roles: [],
      upNumber: 6,
      downedAtMs: 1,
    };
    const news: ClusterMessage = {
      type: 'GossipNews',
      gossip: toWire({ members: new Map([[keyOf(downed), downed]]), seen: new Set(), tombstones: new Map() }),
    };
    intruder.send(target.address, news);
    // A status with a hash unlike any: a member would be sent the whole state; an outsider gets nothing.
    const before = counts.snapshot();
    intruder.send(target.address, {
      type: 'GossipStatus',
      hash: 'not-the-hash',
      seen: new Uint8Array(1),
    } satisfies ClusterMessage);
    const start = Date.now();
    await advanceUntil(() => Date.now() - start >= 3_000, '3 s', 4_000);
    expect(statusOf(target.cluster, victim.address)).toBe('up');
    expect(nodes.every((n) => statusOf(n.cluster, victim.address) === 'up')).toBe(true);
    expect(counts.since(before, 'Gossip')).toBe(0);
  });
});
