// The 25-process scenario's phases (issue 26), on a cluster of real CLI node processes: time until all are Up;
// messages each node sends per second by type in a steady window (lib/counting-node.ts); resident memory; a pin
// POSTed to one node until every node lists it; kill -9 runs (lib/real-failover.ts); a graceful leave; and a
// rolling restart (each node SIGTERMed, restarted on its ports and Up again before the next).
import { performance } from 'node:perf_hooks';
import { http } from '../../test/support/http.js';
import { failoverRuns, rehomeTime, type FailoverTimes } from './real-failover.js';
import {
  byAge,
  formed,
  killCluster,
  readTraffic,
  restart,
  rssMiB,
  startCluster,
  type ClusterNode,
  type RealCluster,
} from './real-cluster.js';
import type { PhaseTraffic } from './s8-report.js';

const PLACEMENTS = '/actor-ts/cluster/shards/Counter/placements';

export interface ScalePlan {
  readonly count: number;
  readonly pinTrials: number;
  /** Kill -9 runs, alternating member / coordinator. */
  readonly killRuns: number;
  /** Nodes restarted one after the other (youngest first, the coordinator's node last). */
  readonly restarts: number;
  readonly steadyWindowMs: number;
  readonly bin?: string;
  /** The nodes' log level (default warn); `info` keeps the `failover phase` lines of each kill run. */
  readonly logLevel?: string;
}

export interface ScaleFigures {
  readonly nodes: number;
  readonly upSeconds: number;
  /** Messages sent in the steady window, summed over the nodes (the shape S8 reports). */
  readonly steady: PhaseTraffic | undefined;
  readonly rssMiB: readonly number[];
  readonly pinListedByAllMs: readonly number[];
  readonly pinFailures: number;
  readonly failover: FailoverTimes;
  readonly leaveRehomeMs: number;
  readonly restartSeconds: readonly number[];
  readonly logDir: string;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** From POSTing a pin to one node until every node lists it with the written HLC; undefined if one never did. */
async function pinPropagation(nodes: readonly ClusterNode[], trial: number): Promise<number | undefined> {
  const writer = nodes[trial % nodes.length]!;
  const shardId = (trial * 37) % 1000;
  const target = nodes[(trial * 7 + 3) % nodes.length]!.address;
  const start = performance.now();
  const posted = await http<{ placements: Array<{ hlc: unknown }> }>(
    'POST',
    `${writer.url}${PLACEMENTS}`,
    { shardId, target },
    10_000,
  );
  if (posted.status !== 202) return undefined;
  const hlc = JSON.stringify(posted.body.placements[0]?.hlc);
  const seen = await Promise.all(
    nodes.map(async (node) => {
      while (performance.now() - start < 30_000) {
        const listed = await http<{ placements: Array<{ shardId: number; hlc: unknown }> }>(
          'GET',
          `${node.url}${PLACEMENTS}`,
          undefined,
          5_000,
        );
        if (
          listed.status === 200 &&
          listed.body.placements.some((p) => p.shardId === shardId && JSON.stringify(p.hlc) === hlc)
        )
          return performance.now();
        await sleep(20);
      }
      return undefined;
    }),
  );
  return seen.some((at) => at === undefined) ? undefined : Math.max(...(seen as number[])) - start;
}

/** Messages sent by every node between two reads of their counts, `windowMs` apart (each node's own clock). */
async function steadyTraffic(nodes: readonly ClusterNode[], windowMs: number): Promise<PhaseTraffic | undefined> {
  const before = nodes.map(readTraffic);
  await sleep(windowMs);
  const after = nodes.map(readTraffic);
  const byType: Record<string, { messages: number; bytes: number; work: number }> = {};
  let nodeMs = 0;
  for (const [i, end] of after.entries()) {
    const start = before[i];
    if (start === undefined || end === undefined || end.at <= start.at) return undefined;
    nodeMs += end.at - start.at;
    for (const [type, count] of Object.entries(end.byType)) {
      const entry = (byType[type] ??= { messages: 0, bytes: 0, work: 0 });
      entry.messages += count - (start.byType[type] ?? 0);
    }
  }
  // The mean window over the nodes: each node's counts were written at its own instant, at most 500 ms apart.
  return { nodes: nodes.length, windowMs: nodeMs / nodes.length, byType };
}

async function rollingRestart(cluster: RealCluster, restarts: number): Promise<number[]> {
  const seconds: number[] = [];
  for (const node of (await byAge(cluster.nodes)).reverse().slice(0, restarts)) {
    const started = performance.now();
    node.child.kill('SIGTERM');
    await restart(cluster, node, 'rolling');
    await formed(cluster.nodes);
    seconds.push((performance.now() - started) / 1000);
  }
  return seconds;
}

export async function runScale(plan: ScalePlan, progress: (line: string) => void): Promise<ScaleFigures> {
  const t0 = performance.now();
  const cluster = await startCluster({
    count: plan.count,
    ...(plan.bin === undefined ? {} : { bin: plan.bin }),
    ...(plan.logLevel === undefined ? {} : { logLevel: plan.logLevel }),
  });
  try {
    const upSeconds = (performance.now() - t0) / 1000;
    progress(`${plan.count} nodes up in ${upSeconds.toFixed(1)} s`);
    // Let the join's gossip settle (S8 starts its window 1 s after convergence) and the counts get written.
    await sleep(5_000);
    const steady = await steadyTraffic(cluster.nodes, plan.steadyWindowMs);
    const rss = cluster.nodes.map((n) => rssMiB(n.child)).filter((v): v is number => v !== undefined);
    const pins: number[] = [];
    let pinFailures = 0;
    for (let trial = 0; trial < plan.pinTrials; trial++) {
      const ms = await pinPropagation(cluster.nodes, trial);
      if (ms === undefined) pinFailures++;
      else pins.push(ms);
    }
    progress(`pins listed by all: ${pins.map((ms) => Math.round(ms)).join(', ')} ms`);
    const failover = await failoverRuns(cluster, plan.killRuns, progress);
    const ages = await byAge(cluster.nodes);
    const leaver = ages[ages.length - 1]!;
    const leaveRehomeMs = await rehomeTime(ages[1]!, leaver, 'leave', 'SIGTERM');
    progress(`graceful leave re-homed after ${Math.round(leaveRehomeMs)} ms`);
    await restart(cluster, leaver, 'after-leave', ages[1]);
    await formed(cluster.nodes);
    const restartSeconds = await rollingRestart(cluster, plan.restarts);
    progress(`rolling restart: ${restartSeconds.map((s) => s.toFixed(1)).join(', ')} s each`);
    return {
      nodes: plan.count,
      upSeconds,
      steady,
      rssMiB: rss,
      pinListedByAllMs: pins,
      pinFailures,
      failover,
      leaveRehomeMs,
      restartSeconds,
      logDir: cluster.logDir,
    };
  } finally {
    await killCluster(cluster);
  }
}
