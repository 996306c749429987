// Kill -9 failover on real CLI node processes (issue 26): the time from SIGKILL of the node hosting an entity
// until a surviving node first answers for that entity from its new host, asking every 100 ms (each ask on
// its own, so one sent to the dead host and waiting out its timeout holds nothing up). Alternates the victim between a plain member and the oldest node (the coordinator's);
// the killed node is restarted on its ports and rejoins before the next run. Not part of npm test or the
// bench suite: `npm run build && node dist/bench/failover-kill.js [runs] [nodes] [bin]` (bin: another
// checkout's bin/actor-ts-placement.js, to measure that build). Prints p50/p99 per victim kind as JSON.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { nodeAddress, waitForFormedCluster } from '../test/support/node-cli.js';
import { freePorts } from '../test/support/ports.js';
import { firstAnswerElsewhere, hostOf, type RealNode } from './lib/first-answer.js';
import { killAllNodes, spawnNode } from './lib/processes.js';
import { summarize } from './lib/stats.js';

interface Node extends RealNode {
  startedAt: number;
}

const runs = Number(process.argv[2] ?? 20);
const count = Number(process.argv[3] ?? 3);
const bin = process.argv[4] ?? fileURLToPath(new URL('../../bin/actor-ts-placement.js', import.meta.url));
const logDir = mkdtempSync(join(tmpdir(), 'actor-ts-failover-'));
const start = (node: { readonly port: number; readonly httpPort: number }, seed: string, tag: string) =>
  spawnNode(bin, node, seed, join(logDir, `${tag}.log`), 'info');

async function formed(nodes: readonly Node[]): Promise<void> {
  await waitForFormedCluster(
    nodes.map((n) => n.url),
    nodes.map((n) => n.address),
    { timeoutMs: 90_000, intervalMs: 200 },
  );
}

async function startCluster(): Promise<Node[]> {
  const ports = await freePorts(2 * count);
  const nodes: Node[] = [];
  for (let i = 0; i < count; i++) {
    const spec = {
      port: ports[i] as number,
      httpPort: ports[count + i] as number,
      address: nodeAddress(ports[i] as number),
      url: `http://127.0.0.1:${ports[count + i]}`,
    };
    nodes.push({
      ...spec,
      child: start(spec, nodeAddress(ports[0] as number), `n${i}-${spec.port}`),
      startedAt: performance.now() + i,
    });
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
    process.stderr.write(
      `run ${run + 1}/${runs} ${kind}: first answer from the new host after ${answeredMs?.toFixed(0) ?? 'never'} ms\n`,
    );
    if (fresh) {
      for (const node of nodes) node.child.kill('SIGKILL');
      if (run + 1 < runs) nodes = await startCluster();
      continue;
    }
    // Rejoin on the same ports (a new incarnation), seeded by a survivor.
    await new Promise<void>((resolve) =>
      victim.child.exitCode !== null || victim.child.signalCode !== null
        ? resolve()
        : victim.child.once('exit', () => resolve()),
    );
    const survivor = nodes.find((n) => n !== victim)!;
    victim.child = start(victim, survivor.address, `n${nodes.indexOf(victim)}-${run + 1}`);
    victim.startedAt = performance.now();
    await formed(nodes);
  }
  const summary = Object.fromEntries(
    Object.entries(results).map(([kind, values]) => {
      const { n, median, p99 } = summarize(values);
      return [
        kind,
        { runs: n, p50Ms: Math.round(median), p99Ms: Math.round(p99), maxMs: Math.round(Math.max(...values)) },
      ];
    }),
  );
  process.stdout.write(`${JSON.stringify({ nodes: count, bin, logDir, summary })}\n`);
  killAllNodes();
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
  killAllNodes();
});
