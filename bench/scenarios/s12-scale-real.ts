// Scenario 12, 25 real CLI node processes on this machine (issue 26): all Up, messages per node per second in a
// steady window beside S8's simulation of the same size, memory per node, a pin written to one node until all
// list it, kill -9 runs (member and coordinator's node), a graceful leave and a rolling restart
// (lib/real-scale.ts). Wall-clock with the default settings, except S8's column (simulated).
import { cpus, loadavg } from 'node:os';
import { failoverRows, FAILOVER_HEADERS } from '../lib/real-failover.js';
import { runScale, type ScaleFigures } from '../lib/real-scale.js';
import { perNodeRates, type PerNodeRates } from '../lib/s8-report.js';
import type { BenchOptions, ScenarioResult } from '../lib/scenario.js';
import { fmt, fmtRatio, fmtSummary, ratio, summarize } from '../lib/stats.js';
import type { Table } from '../lib/table.js';
import { simulatedSize } from './s8-scale.js';

const NODES = 25;

export async function scaleReal(options: BenchOptions): Promise<ScenarioResult> {
  const quick = options.quick;
  const loadBefore = loadavg()[0] ?? Number.NaN;
  const plan = {
    count: NODES,
    pinTrials: quick ? 3 : 20,
    killRuns: options.killRuns ?? (quick ? 2 : 40),
    restarts: quick ? 2 : NODES,
    steadyWindowMs: quick ? 5_000 : 15_000,
  };
  let real: ScaleFigures;
  try {
    real = await runScale(plan, (line) => process.stderr.write(`S12 ${line}\n`));
  } catch (error) {
    // Say so in the run's tables instead of losing every other scenario's figures: on a starved machine the 25
    // processes may never all see each other Up (their failure detectors fire on each other's stalls).
    return stopped(error instanceof Error ? error.message : String(error), loadBefore);
  }
  const loadAfter = loadavg()[0] ?? Number.NaN;
  const simulated = await simulatedSize(NODES, options);
  const sim = simulated.stable === undefined ? undefined : perNodeRates(simulated.stable);
  const measured = real.steady === undefined ? undefined : perNodeRates(real.steady);
  return report(
    real,
    measured,
    sim,
    `load average ${fmt(loadBefore, 2)} before, ${fmt(loadAfter, 2)} after, on ${cpus().length} cores`,
  );
}

function stopped(why: string, loadBefore: number): ScenarioResult {
  const load = `load average ${fmt(loadBefore, 2)} before, ${fmt(loadavg()[0] ?? Number.NaN, 2)} after, on ${cpus().length} cores`;
  return {
    id: 's12',
    title: `${NODES} real processes`,
    tables: [{ title: `S12 ${NODES} CLI node processes: stopped`, headers: ['why'], rows: [[why]], note: load }],
    data: { stopped: why },
    headlines: [`S12 ${NODES} processes: stopped (${why}; ${load})`],
    panels: [],
  };
}

function report(
  real: ScaleFigures,
  measured: PerNodeRates | undefined,
  sim: PerNodeRates | undefined,
  load: string,
): ScenarioResult {
  const rate = (pick: (r: PerNodeRates) => number): readonly [string, string, string] => {
    const ours = measured === undefined ? Number.NaN : pick(measured);
    const theirs = sim === undefined ? Number.NaN : pick(sim);
    return [fmt(ours), fmt(theirs), fmtRatio(ratio(ours, theirs))];
  };
  const heartbeats = rate((r) => r.heartbeats);
  const gossip = rate((r) => r.gossip);
  const rss = summarize(real.rssMiB);
  const pins = summarize(real.pinListedByAllMs);
  const restarts = summarize(real.restartSeconds);
  const tables: Table[] = [
    {
      title: `S12 ${real.nodes} CLI node processes on loopback, default settings`,
      headers: ['phase', 'figure'],
      rows: [
        ['all Up (from the first spawn)', `${fmt(real.upSeconds, 3)} s`],
        [
          `a pin POSTed to one node until all list it, median / p99 (${pins.n} trials, ${real.pinFailures} failed)`,
          `${fmtSummary(pins)} ms`,
        ],
        ['graceful leave (SIGTERM) of an entity host until a new host answers', `${fmt(real.leaveRehomeMs, 3)} ms`],
        [
          `rolling restart, ${restarts.n} nodes one after the other: each until all Up again, median / p99`,
          `${fmtSummary(restarts)} s`,
        ],
        ['resident memory per node, median / max', `${fmt(rss.median)} / ${fmt(Math.max(...real.rssMiB))} MiB`],
      ],
      note: `Wall-clock; ${load} (${real.nodes} processes share them, so these are upper bounds). Logs: ${real.logDir}.`,
    },
    {
      title: `S12 kill -9 of an entity's host among ${real.nodes} processes: first answer from the new host`,
      headers: FAILOVER_HEADERS,
      rows: failoverRows(real.failover, real.nodes),
      note: 'An ask through a survivor every 100 ms; the killed node restarts and rejoins before the next run.',
    },
    {
      title: `S12 messages sent per node per second in steady state, ${real.nodes} real processes beside S8's simulation of ${real.nodes} nodes`,
      headers: ['', 'real processes', 'S8 simulated', 'real / simulated (goal <= 2x)'],
      rows: [
        ['heartbeats (Heartbeat + HeartbeatAck)', ...heartbeats],
        ['gossip (status and news)', ...gossip],
        ['other cluster messages', ...rate((r) => r.other)],
      ],
      note:
        `Real: counted at TcpTransport.send in each node (lib/counting-node.ts) over ${fmt((real.steady?.windowMs ?? Number.NaN) / 1000, 3)} s, ` +
        `5 s after all were Up; other types there: ${measured?.otherTypes.join(', ') || 'none'}. S8: its 3 s steady window, simulated.`,
    },
  ];
  const p99 = (kind: 'member' | 'coordinator'): string => fmt(summarize(real.failover[kind]).p99 / 1000, 3);
  return {
    id: 's12',
    title: `${real.nodes} real processes`,
    tables,
    data: { ...real, measuredRates: measured, simulatedRates: sim },
    headlines: [
      `S12 ${real.nodes} processes: all Up in ${fmt(real.upSeconds, 3)} s, pin listed by all ${fmtSummary(pins)} ms, ${fmt(rss.median)} MiB per node`,
      `S12 kill -9 p99: member ${p99('member')} s, coordinator's node ${p99('coordinator')} s (goal 6 s); graceful leave ${fmt(real.leaveRehomeMs, 3)} ms`,
      `S12 heartbeats ${heartbeats[0]}/node/s (S8 ${heartbeats[1]}, ${heartbeats[2]}), gossip ${gossip[0]}/node/s (S8 ${gossip[1]}, ${gossip[2]})`,
    ],
    panels: [],
  };
}
