// Scenario 6, real network: the propagation measurement of scenario 1 across 3 and 10 node processes of the
// CLI over TCP on loopback. A placement is POSTed to one node's management API; every node's API is polled
// until it lists that placement (same HLC). Wall-clock, so reported next to one API round trip measured
// in the same run (the polling resolution).
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { startNodes, type NodeProcesses } from '../lib/processes.js';
import type { BenchOptions, ChartPanel, ScenarioResult } from '../lib/scenario.js';
import { seededRandom } from '../lib/seeded-random.js';
import { fmt, fmtRatio, fmtSummary, ratio, summarize, type Summary, type Trials } from '../lib/stats.js';
import type { Table } from '../lib/table.js';

const BIN_PATH = fileURLToPath(new URL('../../../bin/actor-ts-placement.js', import.meta.url));
const PLACEMENTS = '/actor-ts/cluster/shards/Counter/placements';
const SHARDS = 1000;
const POLL_TIMEOUT_MS = 15_000;

interface Hlc {
  readonly wallMs: number;
  readonly counter: number;
  readonly node: string;
}

interface RealFigures extends Trials {
  readonly failed: number;
  /** From sending the POST until the last node's API lists the placement. */
  readonly propagationMs: Summary;
  readonly postMs: Summary;
  /** One GET of the placements list: the resolution of the measurement. */
  readonly getMs: Summary;
  readonly startSeconds: number;
}

export async function realNetwork(options: BenchOptions): Promise<ScenarioResult> {
  const sizes = options.quick ? [3] : [3, 10];
  const figures: RealFigures[] = [];
  for (const nodes of sizes) {
    const trials = options.quick ? 8 : 25;
    const started = performance.now();
    const cluster = await startNodes(BIN_PATH, nodes);
    const startSeconds = (performance.now() - started) / 1000;
    try {
      figures.push(await measure(cluster, nodes, trials, startSeconds, options.seed));
    } finally {
      await cluster.stop();
    }
  }
  return report(figures);
}

async function measure(
  cluster: NodeProcesses,
  nodes: number,
  trials: number,
  startSeconds: number,
  seed: number,
): Promise<RealFigures> {
  const random = seededRandom(seed * 101 + nodes);
  const getMs: number[] = [];
  for (let i = 0; i < 30; i++) {
    const url = cluster.urls[i % nodes] as string;
    const t0 = performance.now();
    await listPlacements(url);
    getMs.push(performance.now() - t0);
  }
  await oneTrial(cluster, random); // warm-up: first POST and first replication of each process
  const propagation: number[] = [];
  const post: number[] = [];
  let failed = 0;
  for (let trial = 0; trial < trials; trial++) {
    await sleep(150 + random() * 300);
    const outcome = await oneTrial(cluster, random);
    if (outcome === undefined) {
      failed++;
      continue;
    }
    propagation.push(outcome.propagationMs);
    post.push(outcome.postMs);
  }
  return {
    nodes,
    trials,
    failed,
    propagationMs: summarize(propagation),
    postMs: summarize(post),
    getMs: summarize(getMs),
    startSeconds,
  };
}

async function oneTrial(
  cluster: NodeProcesses,
  random: () => number,
): Promise<{ propagationMs: number; postMs: number } | undefined> {
  const writer = cluster.urls[Math.floor(random() * cluster.urls.length)] as string;
  const shardId = Math.floor(random() * SHARDS);
  const target = cluster.addresses[Math.floor(random() * cluster.addresses.length)] as string;
  const t0 = performance.now();
  const response = await fetch(`${writer}${PLACEMENTS}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ shardId, target }),
  });
  if (response.status !== 202) throw new Error(`POST placement answered ${response.status}: ${await response.text()}`);
  const body = (await response.json()) as { placements: Array<{ hlc: Hlc }> };
  const postMs = performance.now() - t0;
  const hlc = body.placements[0]?.hlc;
  if (hlc === undefined) throw new Error('POST placement answered without the written placement');
  const seen = await Promise.all(cluster.urls.map((url) => pollUntilShown(url, shardId, hlc, t0 + POLL_TIMEOUT_MS)));
  if (seen.some((at) => at === undefined)) return undefined;
  return { propagationMs: Math.max(...(seen as number[])) - t0, postMs };
}

async function pollUntilShown(url: string, shardId: number, hlc: Hlc, deadline: number): Promise<number | undefined> {
  while (performance.now() < deadline) {
    const placements = await listPlacements(url);
    const at = performance.now();
    const found = placements.find((p) => p.shardId === shardId);
    if (found && found.hlc.wallMs === hlc.wallMs && found.hlc.counter === hlc.counter && found.hlc.node === hlc.node)
      return at;
  }
  return undefined;
}

async function listPlacements(url: string): Promise<Array<{ shardId: number; hlc: Hlc }>> {
  const response = await fetch(`${url}${PLACEMENTS}`);
  const body = (await response.json()) as { placements: Array<{ shardId: number; hlc: Hlc }> };
  return body.placements;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function report(figures: readonly RealFigures[]): ScenarioResult {
  const main: Table = {
    title: 'Scenario 6: propagation across node processes over TCP on loopback (CLI nodes, management API)',
    headers: ['N', 'propagation ms', 'POST ms', 'GET ms', 'propagation / GET (median)', 'failed', 'cluster start s'],
    rows: figures.map((f) => [
      String(f.nodes),
      fmtSummary(f.propagationMs),
      fmtSummary(f.postMs),
      fmtSummary(f.getMs),
      fmtRatio(ratio(f.propagationMs.median, f.getMs.median)),
      `${f.failed}/${f.trials}`,
      fmt(f.startSeconds),
    ]),
    note:
      "wall-clock, median / p99. propagation: from sending the POST to one node until the last node's API lists " +
      'the placement with the written HLC (all nodes polled back to back, so it includes up to one GET of ' +
      'polling delay and the POST itself). GET: one placements-list request, the resolution of this measurement.',
  };
  const panels: ChartPanel[] = [
    {
      title: 'S6 real processes on loopback, median (wall-clock ms)',
      unit: 'ms',
      log: false,
      groups: figures.map((f) => `N=${f.nodes}`),
      series: [
        { label: 'propagation (POST to last node showing it)', values: figures.map((f) => f.propagationMs.median) },
        { label: 'one GET round trip', values: figures.map((f) => f.getMs.median) },
      ],
    },
  ];
  const headlines = figures.map(
    (f) =>
      `S6 N=${f.nodes} processes: a placement POSTed to one node is listed by all in ${fmt(f.propagationMs.median)} ms median, ` +
      `${fmt(f.propagationMs.p99)} ms p99 (${fmtRatio(ratio(f.propagationMs.median, f.getMs.median))} of one API GET)`,
  );
  return { id: 's6', title: 'Real network', tables: [main], data: { figures }, headlines, panels };
}
