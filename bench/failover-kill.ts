// Kill -9 failover on real CLI node processes (issue 26): the time from SIGKILL of the node hosting an entity
// until a surviving node first answers for that entity from its new host, asking every 100 ms (each ask on
// its own, so one sent to the dead host and waiting out its timeout holds nothing up). Alternates the victim between a plain member and the oldest node (the coordinator's);
// the killed node is restarted on its ports and rejoins before the next run. Not part of npm test or the
// bench suite: `npm run build && node dist/bench/failover-kill.js [runs] [nodes] [bin]` (bin: another
// checkout's bin/actor-ts-placement.js, to measure that build). Prints p50/p99 per victim kind as JSON.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { http } from '../test/support/http.js';
import { nodeAddress, nodeCommandArgs, waitForFormedCluster } from '../test/support/node-cli.js';
import { freePorts } from '../test/support/ports.js';
import { firstAnswerElsewhere } from './lib/first-answer.js';

interface Node {
  readonly port: number;
  readonly httpPort: number;
  readonly address: string;
  readonly url: string;
  child: ChildProcess;
  startedAt: number;
}

const runs = Number(process.argv[2] ?? 20);
const count = Number(process.argv[3] ?? 3);
const bin = process.argv[4] ?? fileURLToPath(new URL('../../bin/actor-ts-placement.js', import.meta.url));
const logDir = mkdtempSync(join(tmpdir(), 'actor-ts-failover-'));
const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

function spawnNode(node: Omit<Node, 'child' | 'startedAt'>, seed: string, tag: string): ChildProcess {
  const log = openSync(join(logDir, `${tag}.log`), 'a');
  const args = [bin, ...nodeCommandArgs({ port: node.port, httpPort: node.httpPort, seed, logLevel: 'info' })];
  const child = spawn(process.execPath, args, { stdio: ['ignore', log, log] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

async function formed(nodes: readonly Node[]): Promise<void> {
  await waitForFormedCluster(
    nodes.map((n) => n.url),
    nodes.map((n) => n.address),
    { timeoutMs: 90_000, intervalMs: 200 },
  );
}

interface Answer {
  readonly node: string;
}

async function hostOf(via: Node, entityId: string): Promise<string | undefined> {
  const result = await http<Answer>('POST', `${via.url}/counters/${encodeURIComponent(entityId)}/increment`, undefined, 5_000);
  return result.status === 200 ? result.body.node : undefined;
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
}

async function startCluster(): Promise<Node[]> {
  const ports = await freePorts(2 * count);
  const nodes: Node[] = [];
  for (let i = 0; i < count; i++) {
    const spec = { port: ports[i] as number, httpPort: ports[count + i] as number, address: nodeAddress(ports[i] as number), url: `http://127.0.0.1:${ports[count + i]}` };
    nodes.push({ ...spec, child: spawnNode(spec, nodeAddress(ports[0] as number), `n${i}-${spec.port}`), startedAt: performance.now() + i });
  }
  await formed(nodes);
  return nodes;
}

async function main(): Promise<void> {
  // FAILOVER_FRESH_CLUSTER=1: a new cluster for every run instead of restarting the killed node (for builds
  // whose restarted node does not rejoin on its old port).
  const fresh = process.env['FAILOVER_FRESH_CLUSTER'] === '1';
  let nodes = await startCluster();
  const results: Record<'member' | 'coordinator', number[]> = { member: [], coordinator: [] };
  for (let run = 0; run < runs; run++) {
    const kind = run % 2 === 0 ? 'member' : 'coordinator';
    const byAge = [...nodes].sort((a, b) => a.startedAt - b.startedAt);
    const victim = kind === 'coordinator' ? byAge[0]! : byAge[byAge.length - 1]!;
    const via = byAge.find((n) => n !== victim && n !== byAge[0]) ?? byAge.find((n) => n !== victim)!;
    let entity: string | undefined;
    for (let i = 0; i < 500 && entity === undefined; i++) {
      const id = `r${run}-e${i}`;
      if ((await hostOf(via, id)) === victim.address) entity = id;
    }
    if (entity === undefined) throw new Error('no entity found on the victim');
    victim.child.kill('SIGKILL');
    const found = entity;
    const answeredMs = await firstAnswerElsewhere(() => hostOf(via, found), victim.address, 60_000);
    results[kind].push(answeredMs ?? Infinity);
    process.stderr.write(`run ${run + 1}/${runs} ${kind}: first answer from the new host after ${answeredMs?.toFixed(0) ?? 'never'} ms\n`);
    if (fresh) {
      for (const node of nodes) node.child.kill('SIGKILL');
      if (run + 1 < runs) nodes = await startCluster();
      continue;
    }
    // Rejoin on the same ports (a new incarnation), seeded by a survivor.
    await new Promise<void>((resolve) => (victim.child.exitCode !== null || victim.child.signalCode !== null ? resolve() : victim.child.once('exit', () => resolve())));
    const survivor = nodes.find((n) => n !== victim)!;
    victim.child = spawnNode(victim, survivor.address, `n${nodes.indexOf(victim)}-${run + 1}`);
    victim.startedAt = performance.now();
    await formed(nodes);
  }
  const summary = Object.fromEntries(
    Object.entries(results).map(([kind, values]) => {
      const sorted = [...values].sort((a, b) => a - b);
      return [kind, { runs: sorted.length, p50Ms: Math.round(quantile(sorted, 0.5)), p99Ms: Math.round(quantile(sorted, 0.99)), maxMs: Math.round(sorted[sorted.length - 1] ?? NaN) }];
    }),
  );
  process.stdout.write(`${JSON.stringify({ nodes: count, bin, logDir, summary })}\n`);
  for (const child of children) child.kill('SIGKILL');
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
  process.exitCode = 1;
  for (const child of children) child.kill('SIGKILL');
});
