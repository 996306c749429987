// Scenario 3, partition and heal: the cluster splits in two halves that both keep writing for a while,
// then the partition heals; simulated time and bytes from the heal until every node shows the same map.
import { Agreement } from '../lib/agreement.js';
import { buildSimCluster, preloadEntries, simAddress } from '../lib/sim-cluster.js';
import type { BenchOptions, ChartPanel, ScenarioResult } from '../lib/scenario.js';
import { seededRandom, withSeededMathRandom } from '../lib/seeded-random.js';
import { fmt, fmtBytes, fmtRatio, fmtSummary, ratio, summarize, type Convergence, type Summary } from '../lib/stats.js';
import type { Table } from '../lib/table.js';
import type { Protocol } from '../protocols/types.js';
import { PROPAGATION_PROTOCOLS } from './s1-propagation.js';

/** The run: shards pinned before the cut, how long the halves write apart and how fast, the heal's time limit. */
const PLAN = { preload: 1000, partitionMs: 10_000, writesPerNodePerS: 1, convergeLimitMs: 300_000 } as const;

/** timeMs: simulated ms from the heal until every node shows the same placement for every shard. */
interface HealFigures extends Convergence {
  readonly failed: number;
  readonly writes: number;
  readonly bytes: Summary;
}

export async function partitionHeal(options: BenchOptions): Promise<ScenarioResult> {
  const sizes = options.quick ? [10] : [10, 30];
  const figures: HealFigures[] = [];
  for (const protocol of PROPAGATION_PROTOCOLS) {
    for (const nodes of sizes) {
      const trials = options.quick ? 3 : 10;
      figures.push(
        await withSeededMathRandom(options.seed + 3 * nodes, () => measure(protocol, nodes, trials, options)),
      );
    }
  }
  return report(figures, sizes);
}

function measure(protocol: Protocol, nodes: number, trials: number, options: BenchOptions): HealFigures {
  const times: number[] = [];
  const messages: number[] = [];
  const bytes: number[] = [];
  let failed = 0;
  let writes = 0;
  for (let trial = 0; trial < trials; trial++) {
    const seed = options.seed * 15_485_863 + nodes * 100 + trial;
    const cluster = buildSimCluster(protocol, {
      nodes,
      seed,
      delayMs: options.delayMs,
      preload: preloadEntries(PLAN.preload, nodes, seededRandom(seed)),
    });
    try {
      const { clock, random, network, addresses } = cluster;
      clock.advanceTo(3_000);
      const half = Math.floor(nodes / 2);
      network.partition(addresses.slice(0, half), addresses.slice(half));
      const start = clock.now();
      const count = Math.round((PLAN.partitionMs / 1000) * PLAN.writesPerNodePerS * nodes);
      const plan = Array.from({ length: count }, () => ({
        at: start + Math.floor(random() * PLAN.partitionMs),
        node: Math.floor(random() * nodes),
        shardId: Math.floor(random() * PLAN.preload),
        target: simAddress(Math.floor(random() * nodes)).toString(),
      })).sort((a, b) => a.at - b.at);
      for (const write of plan) {
        clock.advanceTo(write.at);
        cluster.nodes[write.node]?.write(write.shardId, write.target);
      }
      writes += plan.length;
      clock.advanceTo(start + PLAN.partitionMs);
      const agreement = new Agreement(
        cluster.nodes,
        Array.from({ length: PLAN.preload }, (_, i) => i),
      );
      cluster.onNodeChange = (node, shardIds) => agreement.update(node, shardIds);
      network.heal();
      const healedAt = clock.now();
      const before = cluster.traffic.mark();
      if (!clock.runUntil(() => agreement.converged, healedAt + PLAN.convergeLimitMs)) {
        failed++;
        continue;
      }
      const after = cluster.traffic.mark();
      times.push(clock.now() - healedAt);
      messages.push(after.messages - before.messages);
      bytes.push(after.bytes - before.bytes);
    } finally {
      cluster.close();
    }
  }
  return {
    protocol: protocol.id,
    nodes,
    trials,
    failed,
    writes,
    timeMs: summarize(times),
    messages: summarize(messages),
    bytes: summarize(bytes),
  };
}

function report(figures: readonly HealFigures[], sizes: readonly number[]): ScenarioResult {
  const label = (id: string): string => PROPAGATION_PROTOCOLS.find((p) => p.id === id)?.label ?? id;
  const find = (id: string, nodes: number): HealFigures | undefined =>
    figures.find((f) => f.protocol === id && f.nodes === nodes);
  const main: Table = {
    title: `Scenario 3: partition into two halves for ${PLAN.partitionMs / 1000} s (${PLAN.writesPerNodePerS} write/node/s over ${PLAN.preload} preloaded shards), then heal`,
    headers: [
      'protocol',
      'N',
      'time to converge ms (sim)',
      'messages',
      'bytes',
      'store time ratio',
      'store bytes ratio',
      'failed',
    ],
    rows: figures.map((f) => {
      const store = find('store', f.nodes);
      return [
        label(f.protocol),
        String(f.nodes),
        fmtSummary(f.timeMs),
        fmtSummary(f.messages),
        `${fmtBytes(f.bytes.median)} / ${fmtBytes(f.bytes.p99)}`,
        store ? fmtRatio(ratio(store.timeMs.median, f.timeMs.median)) : 'n/a',
        store ? fmtRatio(ratio(store.bytes.median, f.bytes.median)) : 'n/a',
        `${f.failed}/${f.trials}`,
      ];
    }),
    note:
      'simulated time; median / p99 over trials (fresh cluster per trial), measured from the heal until every node ' +
      'shows the same placement for every shard; bytes and messages: everything sent in that window. Ratios: store / this row.',
  };
  const panels: ChartPanel[] = [
    {
      title: 'S3 time to converge after heal, median (simulated ms)',
      unit: 'ms',
      log: true,
      groups: sizes.map((n) => `N=${n}`),
      series: PROPAGATION_PROTOCOLS.map((p) => ({
        label: p.label,
        values: sizes.map((n) => find(p.id, n)?.timeMs.median ?? Number.NaN),
      })),
    },
  ];
  const headlines = sizes.map((nodes) => {
    const s = find('store', nodes);
    const full = find('full', nodes);
    const delta = find('delta', nodes);
    return (
      `S3 N=${nodes}: converged ${fmt(s?.timeMs.median ?? Number.NaN)} ms after heal (full-state ${fmt(full?.timeMs.median ?? Number.NaN)} ms, ` +
      `delta ${fmt(delta?.timeMs.median ?? Number.NaN)} ms), sending ${fmtBytes(s?.bytes.median ?? Number.NaN)} ` +
      `(full-state ${fmtBytes(full?.bytes.median ?? Number.NaN)}, delta ${fmtBytes(delta?.bytes.median ?? Number.NaN)})`
    );
  });
  return {
    id: 's3',
    title: 'Partition and heal',
    tables: [main],
    data: { preload: PLAN.preload, partitionMs: PLAN.partitionMs, figures },
    headlines,
    panels,
  };
}
