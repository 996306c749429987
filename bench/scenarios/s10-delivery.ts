// Scenario 10, delivery across real node processes (issue 23): reliable `send` against `tell`, remote (the
// entity on the other process, over TCP) and local (on the sender's own node), throughput and latency in one
// run; the hand-off of a shard of 1,000 entities with 1 KiB of state each against the same shard without state;
// and the crash case on 3 CLI node processes (lib/crash-window.ts). Wall-clock, machine-dependent: the goals are
// ratios against the baseline measured in the same run (send >= 0.5x tell, hand-off with state <= 2x without).
import { performance } from 'node:perf_hooks';
import { crashWindow, type CrashFigures } from '../lib/crash-window.js';
import { startDeliveryNodes, type DeliveryNode } from '../lib/delivery-cluster.js';
import { SHARDS, STATE_BYTES } from '../lib/delivery-node.js';
import { killCluster, restart, formed, startCluster } from '../lib/real-cluster.js';
import { report, type HandOffRounds, type MessagingFigures, type PlaceFigures } from '../lib/s10-report.js';
import type { BenchOptions, ScenarioResult } from '../lib/scenario.js';
import { summarize } from '../lib/stats.js';
import { shardIdFor } from '../../src/sharding/core/shard-id.js';

export const IDS = 50;
const WINDOW = 64;
const HANDOFF_SHARD = 3;
/** Bytes per entity beside its state in a hand-off chunk (its id, the msgpack framing): about what S10's carry. */
export const STATE_ENTRY_OVERHEAD = 32;

const epochNow = (): number => performance.timeOrigin + performance.now();

/** tell and send from `sender` to entities of `type` hosted on `host`: throughput, then paced latency. */
export async function place(
  sender: DeliveryNode,
  host: DeliveryNode,
  type: string,
  messages: number,
  paced: number,
): Promise<PlaceFigures> {
  await host.call('resetCounts');
  const t0 = epochNow();
  const reached = host.call('waitProcessed', messages);
  await sender.call('tell', type, messages, IDS);
  const tellPerSecond = (messages / ((await reached) - t0)) * 1000;
  const s0 = performance.now();
  await sender.call('windowedSend', type, messages, IDS, WINDOW);
  const sendPerSecond = messages / ((performance.now() - s0) / 1000);
  const processedLatency = async (kind: 'tell' | 'send'): Promise<{ processed: number[]; resolved: number[] }> => {
    await host.call('resetCounts');
    const resolved = await sender.call('paced', kind, type, paced, 2);
    await host.call('waitProcessed', paced);
    return { processed: (await host.call('processed')).latenciesMs, resolved };
  };
  const tell = await processedLatency('tell');
  const send = await processedLatency('send');
  return {
    tellPerSecond,
    sendPerSecond,
    tellProcessedMs: summarize(tell.processed),
    sendProcessedMs: summarize(send.processed),
    sendResolvedMs: summarize(send.resolved),
  };
}

function entityIn(shardId: number, i: number): string {
  for (let n = i * 10_000; ; n++) if (shardIdFor(`h${n}`, SHARDS) === shardId) return `h${n}`;
}

/** Moves the hand-off shard back and forth `trials` times; ms from rebalanceNow to the first answer there. */
export async function handOff(
  nodes: readonly [DeliveryNode, DeliveryNode],
  type: string,
  entities: number,
  trials: number,
  everyone: readonly DeliveryNode[] = nodes,
): Promise<number[]> {
  const [a, b] = nodes;
  const members = Array.from({ length: entities }, (_, i) => entityIn(HANDOFF_SHARD, i));
  await a.call('warm', type, members);
  const durations: number[] = [];
  for (let trial = 0; trial < trials; trial++) {
    const to = trial % 2 === 0 ? a : b;
    await Promise.all(everyone.map((n) => n.call('setHomes', { [type]: to.address })));
    durations.push(await a.call('move', type, HANDOFF_SHARD, members[0] as string, to.port));
  }
  return durations;
}

const HAND_OFF_ROUNDS: HandOffRounds = { warm: 6, rounds: 6, trials: 16 };
const QUICK_HAND_OFF_ROUNDS: HandOffRounds = { warm: 2, rounds: 2, trials: 4 };

/**
 * The hand-off with state, without, and the raw transfer of the same bytes between the same two processes on an
 * open connection (the floor's other half), each pooled over the timed rounds.
 */
async function handOffs(
  nodes: readonly [DeliveryNode, DeliveryNode],
  entities: number,
  { warm, rounds, trials }: HandOffRounds,
): Promise<Pick<MessagingFigures, 'withState' | 'withoutState' | 'stateBytes' | 'rawTransfer'>> {
  const [a, b] = nodes;
  const stateBytes = entities * (STATE_BYTES + STATE_ENTRY_OVERHEAD);
  const timed = { withState: [] as number[], withoutState: [] as number[], rawTransfer: [] as number[] };
  // One sink for every round (each transfer series opens its own connection to it).
  const sink = await b.call('sink');
  for (let round = 0; round < warm + rounds; round++) {
    const withState = await handOff(nodes, 'Stateful', entities, trials);
    const withoutState = await handOff(nodes, 'Plain', entities, trials);
    const rawTransfer = await a.call('rawTransfer', sink, stateBytes, trials * 2);
    if (round < warm) continue;
    timed.withState.push(...withState);
    timed.withoutState.push(...withoutState);
    timed.rawTransfer.push(...rawTransfer);
  }
  return {
    withState: summarize(timed.withState),
    withoutState: summarize(timed.withoutState),
    stateBytes,
    rawTransfer: summarize(timed.rawTransfer),
  };
}

async function messaging(options: BenchOptions): Promise<MessagingFigures> {
  const messages = options.quick ? 2_000 : 20_000;
  const paced = options.quick ? 300 : 1_000;
  const entities = options.quick ? 300 : 1_000;
  const rounds = options.quick ? QUICK_HAND_OFF_ROUNDS : HAND_OFF_ROUNDS;
  const nodes = await startDeliveryNodes(2);
  const [a, b] = nodes as [DeliveryNode, DeliveryNode];
  try {
    const homes = { Remote: b.address, Local: a.address, Stateful: b.address, Plain: b.address };
    await Promise.all(nodes.map((n) => n.call('setHomes', homes)));
    // Warm-up: homes known, connections open, the code paths compiled.
    for (const type of ['Remote', 'Local']) await a.call('windowedSend', type, 500, IDS, 8);
    const remote = await place(a, b, 'Remote', messages, paced);
    const local = await place(a, a, 'Local', messages, paced);
    return {
      messages,
      window: WINDOW,
      paced,
      remote,
      local,
      entities,
      rounds,
      ...(await handOffs([a, b], entities, rounds)),
    };
  } finally {
    for (const node of nodes) node.kill();
  }
}

async function crashes(options: BenchOptions): Promise<CrashFigures[]> {
  const cluster = await startCluster({ count: 3 });
  const afterMs = options.quick ? 8_000 : 12_000;
  try {
    const member = await crashWindow(cluster, 'member', 1_000, afterMs);
    const victim = cluster.nodes.find((n) => n.child.signalCode !== null)!;
    await restart(cluster, victim, 'crash');
    await formed(cluster.nodes);
    return [member, await crashWindow(cluster, 'coordinator', 1_000, afterMs)];
  } finally {
    await killCluster(cluster);
  }
}

export async function delivery(options: BenchOptions): Promise<ScenarioResult> {
  const figures = await messaging(options);
  return report(figures, await crashes(options));
}
