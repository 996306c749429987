// The 25-process scenario (issue 26) by hand, without the rest of the bench or S8's simulation beside it:
// `npm run build && node dist/bench/scale-real.js [nodes] [pinTrials] [killRuns] [restarts] [logLevel]`. The same
// phases as S12 (lib/real-scale.ts); prints its figures as one JSON line. logLevel `info` keeps each kill run's
// `failover phase` lines in the nodes' logs (the directory is in the JSON line).
import { killAllNodes } from './lib/processes.js';
import { runScale } from './lib/real-scale.js';

const count = Number(process.argv[2] ?? 25);

runScale(
  {
    count,
    pinTrials: Number(process.argv[3] ?? 10),
    killRuns: Number(process.argv[4] ?? 2),
    restarts: Number(process.argv[5] ?? count),
    steadyWindowMs: 10_000,
    ...(process.argv[6] === undefined ? {} : { logLevel: process.argv[6] }),
  },
  (line) => process.stderr.write(`${line}\n`),
)
  .then((figures) => process.stdout.write(`${JSON.stringify(figures)}\n`))
  .catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
    killAllNodes();
  });
