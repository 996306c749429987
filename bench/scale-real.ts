// Real-process scale scenario (issue 26), not part of npm test or the bench suite: N CLI node processes (default
// 25) on loopback with the default settings. Measures the time until all are Up; a pin POSTed to one node until
// every node lists it (median/p99 over the trials); a kill -9 of a member hosting an entity and a graceful leave
// (SIGTERM), each until a surviving node first answers for that entity from its new host; a rolling restart of
// a few members (each back Up before the next); and each node's resident memory. Prints one JSON line.
// `npm run build && node dist/bench/scale-real.js [nodes] [pinTrials] [restarts]`.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { http } from '../test/support/http.js';
import { nodeAddress, waitForFormedCluster } from '../test/support/node-cli.js';
import { freePorts } from '../test/support/ports.js';
import { firstAnswerElsewhere, hostOf, type RealNode as Node } from './lib/first-answer.js';
import { killAllNodes, spawnNode } from './lib/processes.js';
import { summarize } from './lib/stats.js';

const count = Number(process.argv[2] ?? 25);
const pinTrials = Number(process.argv[3] ?? 10);
const restarts = Number(process.argv[4] ?? 3);
const bin = fileURLToPath(new URL('../../bin/actor-ts-placement.js', import.meta.url));
const logDir = mkdtempSync(join(tmpdir(), 'actor-ts-scale-'));
const PLACEMENTS = '/actor-ts/cluster/shards/Counter/placements';
const start = (node: { readonly port: number; readonly httpPort: number }, seed: string, tag: string): ChildProcess =>
  spawnNode(bin, node, seed, join(logDir, `${tag}.log`));

const formed = (nodes: readonly Node[]): Promise<void> =>
  waitForFormedCluster(
    nodes.map((n) => n.url),
    nodes.map((n) => n.address),
    { timeoutMs: 240_000, intervalMs: 500 },
  );

/** Median and p99 in whole ms, as this scenario prints them. */
function quantiles(values: readonly number[]): { n: number; p50: number; p99: number } {
  const { n, median, p99 } = summarize(values);
  return { n, p50: Math.round(median), p99: Math.round(p99) };
}

/** Kills or stops `victim` with `signal`, then asks every 100 ms through `via` until a new host answers. */
async function rehomeTime(via: Node, victim: Node, tag: string, signal: NodeJS.Signals): Promise<number> {
  let entity: string | undefined;
  for (let i = 0; i < 2_000 && entity === undefined; i++)
    if ((await hostOf(via, `${tag}-${i}`)) === victim.address) entity = `${tag}-${i}`;
  if (entity === undefined) throw new Error(`no entity on ${victim.address}`);
  victim.child.kill(signal);
  const found = entity;
  return Math.round((await firstAnswerElsewhere(() => hostOf(via, found), victim.address, 90_000)) ?? Infinity);
}

async function pinPropagation(nodes: readonly Node[], trial: number): Promise<number | undefined> {
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
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return undefined;
    }),
  );
  return seen.some((at) => at === undefined) ? undefined : Math.max(...(seen as number[])) - start;
}

function rssMiB(child: ChildProcess): number | undefined {
  try {
    const line = readFileSync(`/proc/${child.pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:'));
    return line === undefined ? undefined : Number(line.replace(/\D+/g, '')) / 1024;
  } catch {
    return undefined;
  }
}

async function main(): Promise<void> {
  const ports = await freePorts(2 * count);
  const seed = nodeAddress(ports[0] as number);
  const nodes: Node[] = [];
  const t0 = performance.now();
  for (let i = 0; i < count; i++) {
    const spec = {
      port: ports[i] as number,
      httpPort: ports[count + i] as number,
      address: nodeAddress(ports[i] as number),
      url: `http://127.0.0.1:${ports[count + i]}`,
    };
    nodes.push({ ...spec, child: start(spec, seed, `n${i}`) });
  }
  await formed(nodes);
  const upSeconds = Math.round((performance.now() - t0) / 100) / 10;
  process.stderr.write(`${count} nodes up in ${upSeconds} s\n`);
  const rss = nodes.map((n) => rssMiB(n.child)).filter((v): v is number => v !== undefined);
  const pins: number[] = [];
  for (let trial = 0; trial < pinTrials; trial++) {
    const ms = await pinPropagation(nodes, trial);
    if (ms !== undefined) pins.push(ms);
  }
  process.stderr.write(`pins listed by all: ${JSON.stringify(quantiles(pins))}\n`);
  const via = nodes[1]!;
  const killed = nodes[count - 1]!;
  const killMs = await rehomeTime(via, killed, 'kill', 'SIGKILL');
  process.stderr.write(`kill -9 re-homed after ${killMs} ms\n`);
  const leaver = nodes[count - 2]!;
  const leaveMs = await rehomeTime(via, leaver, 'leave', 'SIGTERM');
  process.stderr.write(`graceful leave re-homed after ${leaveMs} ms\n`);
  const live = nodes.slice(0, count - 2);
  await formed(live);
  const restartSeconds: number[] = [];
  for (let r = 0; r < restarts; r++) {
    const node = live[2 + r]!;
    const started = performance.now();
    node.child.kill('SIGTERM');
    await new Promise<void>((resolve) =>
      node.child.exitCode !== null || node.child.signalCode !== null
        ? resolve()
        : node.child.once('exit', () => resolve()),
    );
    node.child = start(node, seed, `n${nodes.indexOf(node)}-restart`);
    await formed(live);
    restartSeconds.push(Math.round((performance.now() - started) / 100) / 10);
  }
  const summary = {
    nodes: count,
    upSeconds,
    pinListedByAllMs: quantiles(pins),
    killRehomeMs: killMs,
    leaveRehomeMs: leaveMs,
    rollingRestartSecondsEach: restartSeconds,
    rssMiB: { median: Math.round(quantiles(rss).p50), max: Math.round(Math.max(...rss)) },
    logDir,
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  killAllNodes();
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
  killAllNodes();
});
