// Scenario 11, kill -9 failover on 3 real CLI node processes (issue 26): the time from SIGKILL of the node hosting
// an entity until a surviving node first answers for it from its new host, asking every 100 ms; the victim
// alternates between a member and the coordinator's node, restarted and rejoined before the next run
// (lib/real-failover.ts). Wall-clock on this machine with the default settings; the goal is a p99 of 6 s.
import { cpus, loadavg } from 'node:os';
import { failoverRows, failoverRuns, FAILOVER_HEADERS, type FailoverTimes } from '../lib/real-failover.js';
import { killCluster, startCluster } from '../lib/real-cluster.js';
import type { BenchOptions, ScenarioResult } from '../lib/scenario.js';
import { fmt, summarize } from '../lib/stats.js';

const PROCESSES = 3;

export async function failover(options: BenchOptions): Promise<ScenarioResult> {
  const runs = options.killRuns ?? (options.quick ? 4 : 40);
  const loadBefore = loadavg()[0] ?? Number.NaN;
  const cluster = await startCluster({ count: PROCESSES });
  let times: FailoverTimes;
  try {
    times = await failoverRuns(cluster, runs, (line) => process.stderr.write(`S11 ${line}\n`));
  } finally {
    await killCluster(cluster);
  }
  const load = `load average ${fmt(loadBefore, 2)} before, ${fmt(loadavg()[0] ?? Number.NaN, 2)} after, on ${cpus().length} cores`;
  const p99 = (kind: keyof FailoverTimes): string => fmt(summarize(times[kind]).p99 / 1000, 3);
  return {
    id: 's11',
    title: `Kill -9 failover, ${PROCESSES} real processes`,
    tables: [
      {
        title: `S11 kill -9 of an entity's host, ${PROCESSES} CLI node processes on loopback, default settings: first answer from the new host`,
        headers: FAILOVER_HEADERS,
        rows: failoverRows(times, PROCESSES),
        note: `Wall-clock, an ask through a survivor every 100 ms; the killed node restarts and rejoins before the next run. ${load} (other work on the machine moves these figures).`,
      },
    ],
    data: { processes: PROCESSES, runs, times, loadBefore, loadAfter: loadavg()[0] },
    headlines: [
      `S11 kill -9 on ${PROCESSES} processes, first answer from the new host p99: member ${p99('member')} s, coordinator's node ${p99('coordinator')} s (goal 6 s)`,
    ],
    panels: [],
  };
}
