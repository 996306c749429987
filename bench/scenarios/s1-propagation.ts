// Scenario 1, propagation: one placement written on one node; simulated time until every node's strategy
// snapshot shows it, and the messages and bytes sent meanwhile, for the store and both gossip baselines; for the
// store also how many copies of the change's bytes each peer was sent (issue 40: the limit is one).
import { buildSimCluster, preloadEntries, simAddress, type SimCluster } from '../lib/sim-cluster.js';
import { timeMs } from '../lib/heap.js';
import type { BenchOptions, ChartPanel, ScenarioResult } from '../lib/scenario.js';
import { pick, seededRandom, withSeededMathRandom } from '../lib/seeded-random.js';
import { fmt, fmtBytes, fmtRatio, fmtSummary, ratio, summarize, type Summary } from '../lib/stats.js';
import type { Table } from '../lib/table.js';
import type { TrafficMark } from '../lib/traffic.js';
import { deltaGossipProtocol } from '../protocols/delta-gossip.js';
import { fullStateGossipProtocol } from '../protocols/full-state-gossip.js';
import { placementStoreProtocol } from '../protocols/placement-store.js';
import type { Protocol } from '../protocols/types.js';

export const PROPAGATION_PROTOCOLS: readonly Protocol[] = [
  placementStoreProtocol,
  fullStateGossipProtocol,
  deltaGossipProtocol,
];
const CONVERGE_LIMIT_MS = 120_000;
const IDLE_WINDOW_MS = 10_000;

export interface PropagationFigures {
  readonly protocol: string;
  readonly nodes: number;
  readonly trials: number;
  readonly failed: number;
  /** Simulated ms from the write until the last node's strategy snapshot shows it. */
  readonly timeMs: Summary;
  /** Everything sent between the write and convergence (periodic traffic included). */
  readonly messages: Summary;
  readonly bytes: Summary;
  /** Store only: every placement frame the change caused (pushes, digests, pulls and their answers), until no message is in flight. */
  readonly changeMessages?: Summary;
  readonly changeBytes?: Summary;
  /** Store only: content bytes sent (pushes, relayed updates, steps 2) over the writer's own push to every peer. */
  readonly copiesPerPeer?: Summary;
  /** Store only: digest frames and the bytes of all of them, over the same window. */
  readonly digestMessages?: Summary;
  readonly digestBytes?: Summary;
  /** Idle traffic per node per second, with the preloaded state and no writes. */
  readonly idleBytesPerNodePerS: number;
  /** Wall-clock ms the host spent simulating the whole cluster from write to convergence. */
  readonly hostMs: Summary;
}

export async function propagation(options: BenchOptions): Promise<ScenarioResult> {
  const sizes = [3, 10, 30, 100];
  const preload = options.quick ? 300 : 1000;
  const figures: PropagationFigures[] = [];
  for (const protocol of PROPAGATION_PROTOCOLS) {
    for (const nodes of sizes) {
      const trials = options.quick ? (nodes >= 100 ? 3 : 6) : nodes >= 100 ? 12 : 30;
      figures.push(
        await withSeededMathRandom(options.seed + nodes, () => measure(protocol, nodes, trials, preload, options)),
      );
    }
  }
  return report(figures, sizes, preload, options);
}

function measure(
  protocol: Protocol,
  nodes: number,
  trials: number,
  preload: number,
  options: BenchOptions,
): PropagationFigures {
  const seed = options.seed * 7919 + nodes;
  const entries = preloadEntries(preload, nodes, seededRandom(seed));
  const cluster = buildSimCluster(protocol, { nodes, seed, delayMs: options.delayMs, preload: entries });
  try {
    cluster.clock.advanceTo(5_000); // start-up syncs and first ticks
    const idle0 = cluster.traffic.mark();
    cluster.clock.advanceTo(5_000 + IDLE_WINDOW_MS);
    const idleBytes = cluster.traffic.mark().bytes - idle0.bytes;
    const samples = { time: [] as number[], messages: [] as number[], bytes: [] as number[], host: [] as number[] };
    const change = { messages: [] as number[], bytes: [] as number[], copies: [] as number[] };
    const digests = { messages: [] as number[], bytes: [] as number[] };
    let failed = 0;
    for (let trial = 0; trial < trials; trial++) {
      cluster.clock.advanceTo(cluster.clock.now() + 500 + cluster.random() * 2000);
      const outcome = oneWrite(cluster, preload, protocol.id === 'store');
      if (outcome === undefined) {
        failed++;
        continue;
      }
      samples.time.push(outcome.timeMs);
      samples.messages.push(outcome.messages);
      samples.bytes.push(outcome.bytes);
      samples.host.push(outcome.hostMs);
      if (outcome.change) {
        change.messages.push(outcome.change.messages);
        change.bytes.push(outcome.change.bytes);
        change.copies.push(outcome.change.copiesPerPeer);
        digests.messages.push(outcome.change.digests);
        digests.bytes.push(outcome.change.digestBytes);
      }
    }
    return {
      protocol: protocol.id,
      nodes,
      trials,
      failed,
      timeMs: summarize(samples.time),
      messages: summarize(samples.messages),
      bytes: summarize(samples.bytes),
      ...(change.messages.length > 0
        ? {
            changeMessages: summarize(change.messages),
            changeBytes: summarize(change.bytes),
            copiesPerPeer: summarize(change.copies),
            digestMessages: summarize(digests.messages),
            digestBytes: summarize(digests.bytes),
          }
        : {}),
      idleBytesPerNodePerS: idleBytes / nodes / (IDLE_WINDOW_MS / 1000),
      hostMs: summarize(samples.host),
    };
  } finally {
    cluster.close();
  }
}

interface ChangeCost {
  readonly messages: number;
  readonly bytes: number;
  readonly copiesPerPeer: number;
  readonly digests: number;
  readonly digestBytes: number;
}

interface WriteOutcome {
  readonly timeMs: number;
  readonly messages: number;
  readonly bytes: number;
  readonly hostMs: number;
  readonly change?: ChangeCost;
}

function oneWrite(cluster: SimCluster, preload: number, countChange: boolean): WriteOutcome | undefined {
  const { clock, nodes, random, traffic } = cluster;
  const writer = Math.floor(random() * nodes.length);
  const shardId = Math.floor(random() * preload);
  const current = nodes[writer]?.read(shardId);
  let target = simAddress(Math.floor(random() * nodes.length)).toString();
  if (target === current)
    target = pick(
      cluster.addresses.filter((a) => a.toString() !== current),
      random,
    ).toString();
  const showing = new Set<number>();
  cluster.onNodeChange = (node, shardIds) => {
    if (shardIds.includes(shardId) && nodes[node]?.read(shardId) === target) showing.add(node);
  };
  const start = clock.now();
  const before = traffic.mark();
  let pushed = before;
  let converged = false;
  const hostMs = timeMs(() => {
    nodes[writer]?.write(shardId, target);
    // The writer's push to every peer leaves inside write(): exactly one copy of the change per peer.
    pushed = traffic.mark();
    nodes.forEach((node, i) => node.read(shardId) === target && showing.add(i));
    converged = clock.runUntil(() => showing.size === nodes.length, start + CONVERGE_LIMIT_MS);
  });
  cluster.onNodeChange = () => undefined;
  if (!converged) return undefined;
  const at = traffic.mark();
  const outcome = {
    timeMs: clock.now() - start,
    messages: at.messages - before.messages,
    bytes: at.bytes - before.bytes,
    hostMs,
  };
  if (!countChange) return outcome;
  clock.runUntil(() => clock.networkIdle(), clock.now() + 1_000);
  return { ...outcome, change: changeCost(before, pushed, traffic.mark()) };
}

/**
 * What one write cost the store from `before` until the network was quiet: every placement frame, and the content
 * bytes (pushes, relayed updates, steps 2) as a multiple of the writer's own push to every peer (`pushed`), i.e.
 * copies of the change per peer. Steps 2 of an anti-entropy round falling in the window count too (tens of bytes).
 */
function changeCost(before: TrafficMark, pushed: TrafficMark, quiet: TrafficMark): ChangeCost {
  const content = (m: TrafficMark) => m.updateBytes + m.step2Bytes;
  const oneCopyEach = pushed.updateBytes - before.updateBytes;
  return {
    messages: quiet.messages - before.messages,
    bytes: quiet.bytes - before.bytes,
    copiesPerPeer: oneCopyEach > 0 ? (content(quiet) - content(before)) / oneCopyEach : Number.NaN,
    digests: quiet.digests - before.digests,
    digestBytes: quiet.digestBytes - before.digestBytes,
  };
}

function report(
  figures: readonly PropagationFigures[],
  sizes: readonly number[],
  preload: number,
  options: BenchOptions,
): ScenarioResult {
  const find = (protocol: string, nodes: number): PropagationFigures | undefined =>
    figures.find((f) => f.protocol === protocol && f.nodes === nodes);
  const label = (id: string): string => PROPAGATION_PROTOCOLS.find((p) => p.id === id)?.label ?? id;
  const main: Table = {
    title: `Scenario 1: propagation of one placement change (${preload} placements preloaded, ${options.delayMs} ms one-way delay)`,
    headers: ['protocol', 'N', 'time ms (sim)', 'messages', 'bytes', 'host ms (wall)', 'idle B/node/s', 'failed'],
    rows: figures.map((f) => [
      label(f.protocol),
      String(f.nodes),
      fmtSummary(f.timeMs),
      fmtSummary(f.messages),
      `${fmtBytes(f.bytes.median)} / ${fmtBytes(f.bytes.p99)}`,
      fmtSummary(f.hostMs),
      fmtBytes(f.idleBytesPerNodePerS),
      `${f.failed}/${f.trials}`,
    ]),
    note:
      'median / p99 over trials. time, messages, bytes: simulated time, from the write until the last node shows it ' +
      '(all traffic in that window, periodic included). host ms: wall-clock time this machine spent simulating the ' +
      'whole cluster over that window. idle: traffic with no writes.',
  };
  const ratios: Table = {
    title: 'Scenario 1: store relative to the baselines (median; <1 means the store is faster / smaller)',
    headers: [
      'N',
      'time vs full',
      'time vs delta',
      'bytes vs full',
      'bytes vs delta',
      'host vs full',
      'host vs delta',
      'change msgs (store)',
      'change bytes (store)',
    ],
    rows: sizes.map((nodes) => {
      const s = find('store', nodes);
      const full = find('full', nodes);
      const delta = find('delta', nodes);
      const r = (pickFig: (f: PropagationFigures) => number, base: PropagationFigures | undefined): string =>
        s && base ? fmtRatio(ratio(pickFig(s), pickFig(base))) : 'n/a';
      return [
        String(nodes),
        r((f) => f.timeMs.median, full),
        r((f) => f.timeMs.median, delta),
        r((f) => f.bytes.median, full),
        r((f) => f.bytes.median, delta),
        r((f) => f.hostMs.median, full),
        r((f) => f.hostMs.median, delta),
        s?.changeMessages ? fmtSummary(s.changeMessages) : 'n/a',
        s?.changeBytes ? `${fmtBytes(s.changeBytes.median)} / ${fmtBytes(s.changeBytes.p99)}` : 'n/a',
      ];
    }),
    note:
      'change msgs/bytes: every placement frame one write causes until no message is in flight: the push to every ' +
      "peer (N-1 frames), each receiver's digest to at most 3 random peers, and any pull with its answer.",
  };
  const copies: Table = {
    title: 'Scenario 1: copies of one change per peer (store; issue 40 asks for <= 1.2)',
    headers: ['N', 'copies per peer', 'digests', 'digest bytes', 'all bytes of the change'],
    rows: sizes.map((nodes) => {
      const s = find('store', nodes);
      return [
        String(nodes),
        s?.copiesPerPeer ? fmtSummary(s.copiesPerPeer) : 'n/a',
        s?.digestMessages ? fmtSummary(s.digestMessages) : 'n/a',
        s?.digestBytes ? `${fmtBytes(s.digestBytes.median)} / ${fmtBytes(s.digestBytes.p99)}` : 'n/a',
        s?.changeBytes ? `${fmtBytes(s.changeBytes.median)} / ${fmtBytes(s.changeBytes.p99)}` : 'n/a',
      ];
    }),
    note:
      'median / p99. copies per peer: bytes of content frames (pushes, relayed updates, sync steps 2) sent from the ' +
      "write until no message is in flight, over the bytes of the writer's own push to every peer (one copy each); " +
      'a step 2 of an anti-entropy round falling in that window counts too.',
  };
  const groups = sizes.map((n) => `N=${n}`);
  const series = (pickFig: (f: PropagationFigures) => number) =>
    PROPAGATION_PROTOCOLS.map((p) => ({
      label: p.label,
      values: sizes.map((n) => {
        const f = find(p.id, n);
        return f ? pickFig(f) : Number.NaN;
      }),
    }));
  const panels: ChartPanel[] = [
    {
      title: 'S1 propagation time, median (simulated ms)',
      unit: 'ms',
      log: true,
      groups,
      series: series((f) => f.timeMs.median),
    },
    {
      title: 'S1 bytes sent until converged, median',
      unit: 'bytes',
      log: true,
      groups,
      series: series((f) => f.bytes.median),
    },
  ];
  const headlines: string[] = [];
  for (const nodes of sizes) {
    const s = find('store', nodes);
    const full = find('full', nodes);
    const delta = find('delta', nodes);
    if (!s || !full || !delta) continue;
    headlines.push(
      `S1 N=${nodes}: store ${fmt(s.timeMs.median)} ms vs full-state ${fmt(full.timeMs.median)} ms ` +
        `(${fmtRatio(ratio(s.timeMs.median, full.timeMs.median))}) and delta ${fmt(delta.timeMs.median)} ms ` +
        `(${fmtRatio(ratio(s.timeMs.median, delta.timeMs.median))}); bytes to converge ${fmtRatio(ratio(s.bytes.median, full.bytes.median))} of full-state, ` +
        `${fmtRatio(ratio(s.bytes.median, delta.bytes.median))} of delta` +
        (s.copiesPerPeer ? `; copies of the change per peer: ${fmt(s.copiesPerPeer.median)}` : ''),
    );
  }
  return {
    id: 's1',
    title: 'Propagation',
    tables: [main, ratios, copies],
    data: { preload, figures },
    headlines,
    panels,
  };
}
