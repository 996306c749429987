// Kill -9 failover on real CLI node processes (issue 26), by hand: `npm run build && node
// dist/bench/failover-kill.js [runs] [nodes] [bin]` (bin: another checkout's bin/actor-ts-placement.js, to
// measure that build). The same runs as S11 (lib/real-failover.ts); prints p50/p99 per victim kind as JSON.
import { failoverRuns } from './lib/real-failover.js';
import { killCluster, startCluster } from './lib/real-cluster.js';
import { killAllNodes } from './lib/processes.js';
import { summarize } from './lib/stats.js';

const runs = Number(process.argv[2] ?? 20);
const count = Number(process.argv[3] ?? 3);
const bin = process.argv[4];

async function main(): Promise<void> {
  const cluster = await startCluster({ count, logLevel: 'info', ...(bin === undefined ? {} : { bin }) });
  try {
    const times = await failoverRuns(cluster, runs, (line) => process.stderr.write(`${line}\n`));
    const summary = Object.fromEntries(
      Object.entries(times).map(([kind, values]) => {
        const { n, median, p99 } = summarize(values);
        return [
          kind,
          { runs: n, p50Ms: Math.round(median), p99Ms: Math.round(p99), maxMs: Math.round(Math.max(...values)) },
        ];
      }),
    );
    process.stdout.write(`${JSON.stringify({ nodes: count, bin: cluster.bin, logDir: cluster.logDir, summary })}\n`);
  } finally {
    await killCluster(cluster);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
  killAllNodes();
});
