// Scenario 9, delivery: reliable `send` against `tell` and `ask` (throughput, and latency of one message), and
// the hand-off of a shard of 1,000 entities with 1 KiB of state each against the same shard without state.
// Two ClusterSharding nodes in this process over real TCP on loopback (two TcpTransports, a fixed
// membership): wall-clock, machine-dependent, reported with the ask round trip measured in the same run.
import { performance } from 'node:perf_hooks';
import type { NodeAddress } from '../../src/cluster/address.js';
import { TcpTransport } from '../../src/cluster/tcp-transport.js';
import { PlacementStore } from '../../crdt/index.js';
import { PlacementReplication } from '../../src/placement-replication/placement-replication.js';
import { ClusterSharding } from '../../src/sharding/cluster-sharding.js';
import type { EntityBehavior } from '../../src/sharding/region/entity.js';
import { shardIdFor } from '../../src/sharding/shard-id.js';
import type { AllocationStrategy } from '../../src/sharding/strategies/index.js';
import type { BenchOptions, ChartPanel, ScenarioResult } from '../lib/scenario.js';
import { staticMembership } from '../lib/static-membership.js';
import { fmt, fmtSummary, summarize, type Summary } from '../lib/stats.js';
import type { Table } from '../lib/table.js';

const SHARDS = 10;
const STATE_BYTES = 1024;

interface Node {
  readonly transport: TcpTransport;
  readonly replica: PlacementReplication;
  readonly sharding: ClusterSharding;
}

interface Figures {
  readonly messages: number;
  readonly window: number;
  readonly tellPerSecond: number;
  readonly sendPerSecond: number;
  readonly askPerSecond: number;
  readonly sendMs: Summary;
  readonly askMs: Summary;
  readonly handOffWithStateMs: Summary;
  readonly handOffWithoutStateMs: Summary;
  readonly entities: number;
}

/** Counts messages per entity; keeps `STATE_BYTES` of state when `stateful`, snapshotting it. */
function behavior(received: { count: number }, stateful: boolean): EntityBehavior {
  return (ctx) => {
    const state = typeof ctx.restored === 'string' ? ctx.restored : 'x'.repeat(STATE_BYTES);
    return {
      receive: () => {
        received.count++;
        return ctx.node.port;
      },
      ...(stateful ? { snapshot: () => state } : {}),
    };
  };
}

async function startNodes(target: { home: () => string }, received: { count: number }): Promise<Node[]> {
  const transports = await Promise.all([0, 1].map(() => TcpTransport.start({ system: 'bench' })));
  const all: NodeAddress[] = transports.map((t) => t.self);
  const strategy: AllocationStrategy = {
    allocate: (_shardId, candidates) =>
      candidates.find((c) => c.toString() === target.home()) ?? (candidates[0] as NodeAddress),
    rebalance: () => new Set(),
  };
  return transports.map((transport) => {
    const membership = staticMembership(transport.self, all);
    const replica = new PlacementReplication(
      new PlacementStore({ node: transport.self.toString() }),
      transport,
      membership,
    );
    const sharding = new ClusterSharding({
      transport,
      membership,
      placements: replica,
      config: { coordinatorWarmupMs: 0, retryIntervalMs: 200 },
    });
    for (const [name, stateful] of [
      ['Stateful', true],
      ['Plain', false],
    ] as const) {
      sharding.init({
        typeName: name,
        behavior: behavior(received, stateful),
        numberOfShards: SHARDS,
        allocationStrategy: strategy,
      });
    }
    return { transport, replica, sharding };
  });
}

async function until(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** Runs `total` operations with at most `window` in flight; returns the latency of each. */
async function windowed(total: number, window: number, op: (i: number) => Promise<unknown>): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < total) {
      const i = next++;
      const t0 = performance.now();
      await op(i);
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: window }, () => worker()));
  return latencies;
}

function entityIn(shardId: number, i: number): string {
  for (let n = i * 10_000; ; n++) if (shardIdFor(`e${n}`, SHARDS) === shardId) return `e${n}`;
}

export async function delivery(options: BenchOptions): Promise<ScenarioResult> {
  const messages = options.quick ? 2_000 : 20_000;
  const window = 64;
  const entities = options.quick ? 300 : 1_000;
  const trials = options.quick ? 3 : 6;
  const received = { count: 0 };
  let home = '';
  const nodes = await startNodes({ home: () => home }, received);
  const [a, b] = nodes as [Node, Node];
  home = b.transport.self.toString();
  try {
    // Both regions registered first, or the first shards would all go to the only region known (a).
    await until(
      () => ['Stateful', 'Plain'].every((type) => a.sharding.stats().types[type]?.coordinator?.regions === 2),
      'both regions registered',
    );
    const ids = Array.from({ length: 50 }, (_, i) => `m${i}`);
    const ref = (type: string, i: number) => a.sharding.entityRefFor(type, ids[i % ids.length] as string);
    // Warm-up: homes known, connections open; every entity on b, so each message crosses TCP.
    await windowed(200, 8, (i) => ref('Plain', i).ask({}));
    if (a.sharding.localShards('Plain').length > 0) throw new Error('bench: a Plain shard is homed on the sender');

    received.count = 0;
    let t0 = performance.now();
    for (let i = 0; i < messages; i++) ref('Plain', i).tell({});
    await until(() => received.count >= messages, 'every tell processed');
    const tellPerSecond = messages / ((performance.now() - t0) / 1000);

    t0 = performance.now();
    await windowed(messages, window, (i) => ref('Plain', i).send({}));
    const sendPerSecond = messages / ((performance.now() - t0) / 1000);
    t0 = performance.now();
    await windowed(messages, window, (i) => ref('Plain', i).ask({}));
    const askPerSecond = messages / ((performance.now() - t0) / 1000);
    // One at a time: the latency of one message, not of a queue.
    const sendMs = summarize(await windowed(Math.min(2_000, messages), 1, (i) => ref('Plain', i).send({})));
    const askMs = summarize(await windowed(Math.min(2_000, messages), 1, (i) => ref('Plain', i).ask({})));

    const handOff = async (type: string): Promise<number[]> => {
      const shardId = 3;
      const members = Array.from({ length: entities }, (_, i) => entityIn(shardId, i));
      await windowed(members.length, window, (i) => a.sharding.entityRefFor(type, members[i] as string).send({}));
      const durations: number[] = [];
      for (let trial = 0; trial < trials; trial++) {
        const to = b.sharding.localShards(type).includes(shardId) ? a : b;
        home = to.transport.self.toString();
        const start = performance.now();
        await a.sharding.rebalanceNow(type, [shardId]);
        await until(() => to.sharding.localShards(type).includes(shardId), `shard on ${home}`);
        // Moved when the new home answers: every entity restored before the first message is delivered.
        await a.sharding.entityRefFor(type, members[0] as string).ask({});
        durations.push(performance.now() - start);
      }
      return durations;
    };
    const handOffWithStateMs = summarize(await handOff('Stateful'));
    const handOffWithoutStateMs = summarize(await handOff('Plain'));
    return report({
      messages,
      window,
      tellPerSecond,
      sendPerSecond,
      askPerSecond,
      sendMs,
      askMs,
      handOffWithStateMs,
      handOffWithoutStateMs,
      entities,
    });
  } finally {
    for (const node of nodes) {
      await node.sharding.shutdown();
      node.replica.close();
      await node.transport.close();
    }
  }
}

function report(f: Figures): ScenarioResult {
  const tables: Table[] = [
    {
      title: `S10 delivery: ${f.messages} messages from one node to entities hosted on the other, over TCP on loopback (one process)`,
      headers: ['', 'messages/s', 'one at a time, median / p99 ms'],
      rows: [
        ['tell (at most once)', fmt(f.tellPerSecond, 0), '-'],
        [`send (reliable, ${f.window} in flight)`, fmt(f.sendPerSecond, 0), fmtSummary(f.sendMs)],
        [`ask (${f.window} in flight)`, fmt(f.askPerSecond, 0), fmtSummary(f.askMs)],
      ],
      note: 'Wall-clock on this machine; throughput until the last message was processed (tell) or answered (send, ask).',
    },
    {
      title: `S10 hand-off of one shard of ${f.entities} entities, from rebalanceNow to the first answer on the new home`,
      headers: ['', 'median ms', 'p99 ms', 'trials'],
      rows: [
        [
          `with ${STATE_BYTES} B of state per entity`,
          fmt(f.handOffWithStateMs.median, 1),
          fmt(f.handOffWithStateMs.p99, 1),
          String(f.handOffWithStateMs.n),
        ],
        [
          'without state',
          fmt(f.handOffWithoutStateMs.median, 1),
          fmt(f.handOffWithoutStateMs.p99, 1),
          String(f.handOffWithoutStateMs.n),
        ],
      ],
      note: 'The state travels old host -> coordinator -> new host in chunks of stateChunkBytes (256 KiB).',
    },
  ];
  const panels: ChartPanel[] = [
    {
      title: 'S10 messages per second',
      unit: 'msg/s',
      log: false,
      groups: ['tell', 'send', 'ask'],
      series: [{ label: 'throughput', values: [f.tellPerSecond, f.sendPerSecond, f.askPerSecond] }],
    },
  ];
  return {
    id: 's9',
    title: 'Delivery: reliable send and state with a move',
    tables,
    data: f,
    headlines: [
      `send ${fmt(f.sendPerSecond, 0)}/s vs tell ${fmt(f.tellPerSecond, 0)}/s; one send ${fmt(f.sendMs.median, 2)} ms median (ask ${fmt(f.askMs.median, 2)} ms)`,
      `hand-off of ${f.entities} entities: ${fmt(f.handOffWithStateMs.median, 1)} ms with ${STATE_BYTES} B state each, ${fmt(f.handOffWithoutStateMs.median, 1)} ms without`,
    ],
    panels,
  };
}
