// Gossiped reachability and the leader's split-brain decision, with fake timers and the in-memory network:
// non-transitive cuts in three and five nodes and two simultaneous cuts are decided once, by one leader from
// the merged table, downing exactly the members that explain the cuts; a flapping link downs nobody with the
// default settings; and with the heartbeat ring a node heartbeats only its ring segment, yet a crash is
// still detected, gossiped and decided.
import { describe, expect, it, vi } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import { Cluster, type SelfDownCause } from '../../src/cluster/membership/cluster.js';
import type { ClusterConfigInput } from '../../src/cluster/membership/config.js';
import { MemoryNetwork } from '../../src/cluster/transport/memory-transport.js';
import { seededRandom } from '../../src/cluster/random.js';
import type { Transport } from '../../src/cluster/transport/transport.js';
import { captureLogger, type LogRecord } from '../../src/logging.js';
import { useFakeTime } from '../support/fake-time.js';
import { address, advanceUntil, statusOf } from './cluster-harness.js';

interface Node {
  readonly n: number;
  readonly address: NodeAddress;
  readonly cluster: Cluster;
  readonly logs: LogRecord[];
  readonly downs: Array<{ cause: SelfDownCause; atMs: number }>;
  heartbeatsSent: number;
}

let nodes: Node[] = [];
useFakeTime(() => {
  for (const node of nodes) node.cluster.shutdown();
  nodes = [];
});

/** Counts heartbeats a node sends, to check the ring bounds them. */
function counting(transport: Transport, node: { heartbeatsSent: number }): Transport {
  return {
    self: transport.self,
    register: (family) => transport.register(family),
    send: (to, message) => {
      if (message.type === 'Heartbeat') node.heartbeatsSent++;
      transport.send(to, message);
    },
    onMessage: (listener) => transport.onMessage(listener),
    close: () => transport.close(),
  };
}

async function startCluster(network: MemoryNetwork, count: number, config: ClusterConfigInput = {}): Promise<Node[]> {
  const started: Node[] = [];
  for (let i = 1; i <= count; i++) {
    const { logger, records } = captureLogger('info');
    const holder = { heartbeatsSent: 0 };
    const cluster = new Cluster({
      transport: counting(network.transport(address(i)), holder),
      config: { seedNodes: [address(1)], ...config },
      incarnation: `inc-${i}`,
      random: seededRandom(i),
      logger,
    });
    const node: Node = {
      n: i,
      address: address(i),
      cluster,
      logs: records,
      downs: [],
      get heartbeatsSent() {
        return holder.heartbeatsSent;
      },
      set heartbeatsSent(v: number) {
        holder.heartbeatsSent = v;
      },
    };
    cluster.onSelfDown((cause) => node.downs.push({ cause, atMs: Date.now() }));
    nodes.push(node);
    started.push(node);
    cluster.start();
    await vi.advanceTimersByTimeAsync(137 * i);
  }
  await advanceUntil(
    () =>
      started.every(
        (x) =>
          x.cluster.members().length === count && x.cluster.members().every((m) => m.status === 'up' && m.reachable),
      ),
    'all up',
    60_000,
    7,
  );
  // Let the failure detectors settle: their statistics start from an estimate that a dozen heartbeats replace.
  await vi.advanceTimersByTimeAsync(15_000);
  return started;
}

/** The split-brain decision lines every node logged (the leader's, and minority self-downs). */
function decisions(all: ReadonlyArray<Node>): Array<{ by: number; msg: string; down: unknown; table: unknown }> {
  return all.flatMap((node) =>
    node.logs
      .filter((r) => typeof r['decision'] === 'string')
      .map((r) => ({ by: node.n, msg: r.msg ?? '', down: r['down'], table: r['table'] })),
  );
}

const key = (i: number): string => `${address(i).toString()}#inc-${i}`;
const survivorsOf = (observer: Node): number[] => observer.cluster.members().map((m) => m.address.port - 2550);

describe('split brain: non-transitive cuts are decided once, by the leader, from the merged table', () => {
  it.each([
    { count: 3, cuts: [[1, 3]], downed: [3], leader: 2 },
    { count: 3, cuts: [[2, 3]], downed: [3], leader: 1 },
    { count: 5, cuts: [[1, 3]], downed: [3], leader: 2 },
    { count: 5, cuts: [[2, 5]], downed: [5], leader: 1 },
    {
      count: 5,
      cuts: [
        [1, 3],
        [2, 4],
      ],
      downed: [3, 4],
      leader: 5,
    },
    {
      count: 5,
      cuts: [
        [1, 3],
        [3, 5],
      ],
      downed: [3],
      leader: 2,
    },
  ])('$count nodes, links $cuts cut: $downed downed by $leader', async ({ count, cuts, downed, leader }) => {
    const network = new MemoryNetwork();
    const started = await startCluster(network, count, { downAfterMs: 3_000 });
    const cutAt = Date.now();
    for (const [a, b] of cuts) network.partition([address(a!)], [address(b!)]);
    const survivors = started.filter((x) => !downed.includes(x.n));
    await advanceUntil(
      () => survivors.every((s) => downed.every((d) => statusOf(s.cluster, address(d)) === undefined)),
      'downed members removed',
      60_000,
      7,
    );
    await vi.advanceTimersByTimeAsync(10_000);

    // Exactly the members that explain the cuts went, each told by the cluster, nobody downed itself.
    expect(started.flatMap((x) => x.downs.map((d) => [x.n, d.cause]))).toEqual(
      downed.map((d) => [d, 'downed-by-cluster']),
    );
    // One decision, by one leader, naming the table that led to it.
    const lines = decisions(started);
    expect(lines.map((l) => [l.by, l.down])).toEqual([[leader, downed.map(key)]]);
    expect(lines[0]!.table).toEqual(
      expect.arrayContaining(cuts.flatMap(([a, b]) => [`${key(a!)} -> ${key(b!)}`, `${key(b!)} -> ${key(a!)}`])),
    );
    // Not before the table was stable for stableAfterMs (= downAfterMs) after the cut was observed.
    const decidedAt = Math.min(...started.flatMap((x) => x.downs.map((d) => d.atMs)));
    expect(decidedAt - cutAt).toBeGreaterThanOrEqual(3_000);
    for (const s of survivors) {
      expect(survivorsOf(s)).toEqual(survivors.map((x) => x.n));
      expect(s.cluster.members().every((m) => m.status === 'up')).toBe(true);
    }
  });
});

describe('split brain: decisions wait until the table is stable for stableAfterMs', () => {
  it('a second cut observed before stable-after ran out restarts the wait, and both are decided at once', async () => {
    const network = new MemoryNetwork();
    const started = await startCluster(network, 5, { downAfterMs: 3_000 });
    const seenUnreachable = (subject: number): boolean =>
      started.some((x) => x.cluster.members().find((m) => m.address.equals(address(subject)))?.reachable === false);
    // Detection takes a few seconds: the second cut, 2 s after the first, is observed about 2 s after it.
    network.partition([address(1)], [address(3)]);
    await vi.advanceTimersByTimeAsync(2_000);
    network.partition([address(2)], [address(4)]);
    await advanceUntil(() => seenUnreachable(3), '3 seen unreachable', 20_000, 7);
    const firstSeenAt = Date.now();
    await advanceUntil(() => seenUnreachable(4), '4 seen unreachable', 20_000, 7);
    const secondSeenAt = Date.now();
    expect(secondSeenAt - firstSeenAt).toBeLessThan(3_000);
    expect(started.flatMap((x) => x.downs)).toEqual([]);
    await advanceUntil(() => started.some((x) => x.downs.length > 0), 'a decision', 20_000, 7);
    expect(Date.now() - secondSeenAt).toBeGreaterThanOrEqual(3_000);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(decisions(started).map((l) => [l.by, l.down])).toEqual([[5, [key(3), key(4)]]]);
  });
});

describe('split brain: a flapping link downs nobody with the default settings', () => {
  it.each([
    { downMs: 2_000, upMs: 2_000 },
    { downMs: 7_000, upMs: 3_000 },
  ])('link 1-3 cut $downMs ms, up $upMs ms, for 30 s', async ({ downMs, upMs }) => {
    const network = new MemoryNetwork();
    const started = await startCluster(network, 3);
    const startAt = Date.now();
    while (Date.now() - startAt < 30_000) {
      network.partition([address(1)], [address(3)]);
      await vi.advanceTimersByTimeAsync(downMs);
      network.heal();
      await vi.advanceTimersByTimeAsync(upMs);
    }
    await advanceUntil(
      () => started.every((x) => x.cluster.members().every((m) => m.reachable)),
      'reachable again',
      10_000,
      7,
    );
    expect(started.flatMap((x) => x.downs)).toEqual([]);
    expect(decisions(started)).toEqual([]);
    for (const x of started) expect(survivorsOf(x)).toEqual([1, 2, 3]);
  });
});

describe('split brain: the heartbeat ring', () => {
  it('bounds the heartbeats per node and still detects, gossips and decides a crash', async () => {
    const network = new MemoryNetwork();
    const k = 3;
    const started = await startCluster(network, 10, { downAfterMs: 3_000, monitoredByNrOfMembers: k });
    for (const x of started) x.heartbeatsSent = 0;
    await vi.advanceTimersByTimeAsync(10_000);
    // Ten heartbeat intervals: k heartbeats each, not one per other member (9).
    for (const x of started) {
      expect(x.heartbeatsSent).toBeGreaterThanOrEqual(9 * k);
      expect(x.heartbeatsSent).toBeLessThanOrEqual(11 * k);
    }

    const crashed = started[4]!;
    network.isolate(crashed.address);
    const rest = started.filter((x) => x !== crashed);
    // Only its k monitors observe it; every other node learns it from the gossiped table.
    await advanceUntil(
      () => rest.every((x) => x.cluster.members().find((m) => m.address.equals(crashed.address))?.reachable === false),
      'seen unreachable everywhere',
      20_000,
      7,
    );
    await advanceUntil(
      () => rest.every((x) => statusOf(x.cluster, crashed.address) === undefined),
      'crashed node removed',
      60_000,
      7,
    );
    const observers = decisions(rest);
    expect(observers).toHaveLength(1);
    expect(observers[0]!.by).toBe(1);
    expect(observers[0]!.down).toEqual([key(crashed.n)]);
    // The table that led to it holds the observations of exactly its k monitors (the k members before it).
    expect([...(observers[0]!.table as string[])].sort()).toEqual(
      [2, 3, 4].map((m) => `${key(m)} -> ${key(crashed.n)}`).sort(),
    );
    for (const x of rest) expect(x.downs).toEqual([]);
    // The cut-off node sees its whole ring segment unreachable, monitors everyone, finds itself on a minority
    // side and downs itself.
    await advanceUntil(() => crashed.downs.length > 0, 'the cut-off node downs itself', 20_000, 7);
    expect(crashed.downs.map((d) => d.cause)).toEqual(['minority-side']);
  });
});
