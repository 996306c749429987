// Tables, headlines and chart panels of scenario 8 (membership at scale), from the figures s8-scale.ts
// measured; every size that stopped early says where and why in its rows.
import type { ClusterConfig } from '../../src/cluster/membership/config.js';
import type { TypeCount } from './family-traffic.js';
import type { ChartPanel, ScenarioResult } from './scenario.js';
import { fmt, fmtBytes } from './stats.js';
import type { Table } from './table.js';

// The figures s8-scale.ts measures, per cluster size.
export interface PhaseTraffic {
  readonly windowMs: number;
  readonly nodes: number;
  readonly byType: Record<string, TypeCount>;
}

export interface DownDecision {
  /** Node index that decided (the first to show this stamp), or the subject itself on a minority side. */
  readonly deciders: readonly number[];
  readonly subject: number;
  readonly downedAtMs: number | undefined;
  /** Simulated ms after the event (cut or kill) when the decider's view first showed it. */
  readonly atMs: number;
}

export interface SizeFigures {
  readonly nodes: number;
  readonly config: ClusterConfig;
  /** Where the run stopped early and why; undefined when every phase ran. */
  readonly stopped: string | undefined;
  readonly allUpMs: number | undefined;
  /** Simulated ms from all Up until every node's state was seen by every member. */
  readonly convergedMs: number | undefined;
  readonly join: {
    readonly hostS: number;
    readonly messages: number;
    readonly work: number;
    readonly allUpNodes: number;
    readonly simMs: number;
    /** Messages and work by family/type until all were Up (or the run stopped). */
    readonly byType: Record<string, TypeCount>;
  };
  readonly stable: (PhaseTraffic & { readonly hostMsPerSimS: number }) | undefined;
  readonly cut: CutFigures | undefined;
  readonly kill: KillFigures | undefined;
  /** Member records sent in all phases (see `WORK_BUDGET`). */
  readonly work: number;
  readonly hostS: number;
}

export interface CutFigures {
  readonly pair: readonly [number, number];
  readonly decisions: readonly DownDecision[];
  /** Subjects downed by more than one decider (several stamps, or several nodes deciding at the same instant). */
  readonly downedTwice: readonly number[];
  /** Both nodes of the cut pair made a decision (each side acted). */
  readonly bothSidesActed: boolean;
  /** Nodes outside the cut pair that were downed. */
  readonly collateral: readonly number[];
  /** Simulated ms from the cut until every live node showed every downed node down. */
  readonly agreedMs: number | undefined;
  readonly survivors: readonly number[];
}

export interface KillFigures {
  readonly victim: number;
  readonly firstUnreachableMs: number | undefined;
  readonly decisions: readonly DownDecision[];
  readonly allSeeDownMs: number | undefined;
  readonly hostS: number;
}

/** Config keys this bench was written against; anything else a newer runtime adds is listed as it is. */
const KNOWN_KEYS = new Set([
  'seedNodes',
  'appVersion',
  'roles',
  'attributes',
  'heartbeatIntervalMs',
  'failureDetector',
  'gossipIntervalMs',
  'seedNodeTimeoutMs',
  'retryJoinIntervalMs',
  'downAfterMs',
  'minorityDownAfterMs',
  'leaveTimeoutMs',
  'exitTimeoutMs',
  'weaklyUpAfterMs',
  'removedRetentionMs',
  'tombstoneTtlMs',
  'monitoredByNrOfMembers',
]);

export interface PerNodeRates {
  readonly heartbeats: number;
  readonly gossip: number;
  readonly gossipBytes: number;
  readonly other: number;
  readonly otherTypes: readonly string[];
}

/** Sent per node per second in the steady window: heartbeat types (requests and acks), gossip, the rest. */
export function perNodeRates(stable: PhaseTraffic): PerNodeRates {
  const per = (count: number): number => count / stable.nodes / (stable.windowMs / 1000);
  let heartbeats = 0;
  let gossip = 0;
  let gossipBytes = 0;
  let other = 0;
  const otherTypes: string[] = [];
  for (const [key, count] of Object.entries(stable.byType)) {
    if (count.messages === 0) continue;
    const type = key.slice(key.indexOf('/') + 1);
    if (/heartbeat/i.test(type)) heartbeats += count.messages;
    else if (/gossip/i.test(type)) {
      gossip += count.messages;
      gossipBytes += count.bytes;
    } else {
      other += count.messages;
      otherTypes.push(key);
    }
  }
  return {
    heartbeats: per(heartbeats),
    gossip: per(gossip),
    gossipBytes: per(gossipBytes),
    other: per(other),
    otherTypes,
  };
}

export function ringOf(config: ClusterConfig): string {
  const ring = (config as unknown as Record<string, unknown>)['monitoredByNrOfMembers'];
  return typeof ring === 'number' ? `${ring} monitors per member` : 'none (every member heartbeats every other)';
}

function unknownSettings(config: ClusterConfig): string {
  const extra = Object.entries(config as unknown as Record<string, unknown>).filter(([key]) => !KNOWN_KEYS.has(key));
  return extra.length === 0 ? '-' : extra.map(([key, value]) => `${key}=${JSON.stringify(value)}`).join(', ');
}

const s = (ms: number | undefined): string => (ms === undefined ? 'n/a' : fmt(ms / 1000));
const node = (i: number): string => `n${i}`;

/** Deciders: named when few, counted when many nodes decided independently at the same instant. */
function by(deciders: readonly number[]): string {
  const sorted = [...deciders].sort((x, y) => x - y);
  if (sorted.length <= 3) return sorted.map(node).join('+');
  return `${sorted.length} nodes independently (${sorted.slice(0, 3).map(node).join(', ')}, ...)`;
}

function describeDecisions(decisions: readonly DownDecision[]): string {
  if (decisions.length === 0) return 'none';
  return [...decisions]
    .sort((x, y) => x.atMs - y.atMs)
    .map((d) => `${by(d.deciders)} downed ${node(d.subject)} at ${s(d.atMs)} s`)
    .join('; ');
}

function configTable(figures: readonly SizeFigures[]): Table {
  return {
    title: 'Scenario 8: cluster config each size ran with (scaleClusterConfig: seeds only, every timing the default)',
    headers: [
      'N',
      'seeds',
      'heartbeat ms',
      'gossip ms',
      'phi threshold / pause ms',
      'down after / minority ms',
      'heartbeat ring',
      'settings unknown to this bench',
    ],
    rows: figures.map((f) => [
      String(f.nodes),
      String(f.config.seedNodes.length),
      String(f.config.heartbeatIntervalMs),
      String(f.config.gossipIntervalMs),
      `${f.config.failureDetector.threshold} / ${f.config.failureDetector.acceptableHeartbeatPauseMs}`,
      `${f.config.downAfterMs} / ${f.config.minorityDownAfterMs}`,
      ringOf(f.config),
      unknownSettings(f.config),
    ]),
  };
}

function joinTable(figures: readonly SizeFigures[]): Table {
  return {
    title: 'Scenario 8: join from three seeds, then steady state (messages sent per node per second)',
    headers: [
      'N',
      'all see all Up s (sim)',
      'then converged s',
      'join messages',
      'join member records',
      'join host s',
      'heartbeats /node/s',
      'gossip /node/s',
      'gossip B /node/s',
      'other /node/s',
      'host ms per sim s',
      'stopped',
    ],
    rows: figures.map((f) => {
      const rates = f.stable ? perNodeRates(f.stable) : undefined;
      const up =
        f.allUpMs !== undefined
          ? s(f.allUpMs)
          : f.join.simMs === 0
            ? 'not run'
            : `not reached (${f.join.allUpNodes}/${f.nodes} nodes after ${s(f.join.simMs)} s)`;
      return [
        String(f.nodes),
        up,
        f.convergedMs !== undefined ? s(f.convergedMs) : 'n/a',
        f.join.messages.toLocaleString('en-US'),
        f.join.work.toLocaleString('en-US'),
        fmt(f.join.hostS),
        rates ? fmt(rates.heartbeats) : 'n/a',
        rates ? fmt(rates.gossip) : 'n/a',
        rates ? fmtBytes(rates.gossipBytes) : 'n/a',
        rates ? `${fmt(rates.other)}${rates.otherTypes.length > 0 ? ` (${rates.otherTypes.join(', ')})` : ''}` : 'n/a',
        f.stable ? fmt(f.stable.hostMsPerSimS) : 'n/a',
        f.stopped ?? '-',
      ];
    }),
    note:
      'simulated time from the start of the nodes (spread over the first second; the first seed forms the cluster after seedNodeTimeoutMs when nobody answers), polled every 100 ms. ' +
      "then converged: until every node's state was seen by every member (the leader acts only then). Steady state: a 3 s window starting 1 s after that; heartbeats = Heartbeat + HeartbeatAck sent, bytes = exact msgpackr frames. " +
      "join member records: messages weighted by the member records they carry (1 for a heartbeat or status), the work budget's unit. join host s and host ms per sim s: wall-clock this machine spent simulating the whole cluster.",
  };
}

function cutTable(figures: readonly SizeFigures[]): Table {
  const rows = figures.map((f) => {
    const c: CutFigures | undefined = f.cut;
    if (c === undefined) return [String(f.nodes), 'not run', '', '', '', '', '', '', f.stopped ?? ''];
    return [
      String(f.nodes),
      `${node(c.pair[0])} x ${node(c.pair[1])}`,
      describeDecisions(c.decisions),
      c.downedTwice.length === 0 ? 'none' : c.downedTwice.map(node).join(', '),
      c.bothSidesActed ? 'both (violation)' : 'one',
      c.collateral.length === 0 ? 'none' : c.collateral.map(node).join(', '),
      c.survivors.length === 0 ? 'none' : c.survivors.map(node).join(', '),
      s(c.agreedMs),
      '-',
    ];
  });
  return {
    title: 'Scenario 8: non-transitive cut (two nodes lose each other, both still reach everyone else)',
    headers: [
      'N',
      'cut pair',
      'decisions (who downed whom, s after the cut)',
      'downed twice',
      'sides acting',
      'others downed',
      'pair survivors',
      'all live agree s',
      'stopped',
    ],
    rows,
    note:
      'n<i> is bench@127.0.0.1:<30000+i> (address order = index order). A decision is one distinct down stamp; its deciders are the nodes whose views showed it first ' +
      '(several at the same instant decided independently; the subject itself on a minority side). downed twice: a node with more than one decider. Watched 15 s past the first decision.',
  };
}

function killTable(figures: readonly SizeFigures[]): Table {
  const rows = figures.map((f) => {
    const k: KillFigures | undefined = f.kill;
    if (k === undefined) return [String(f.nodes), 'not run', '', '', '', '', f.stopped ?? ''];
    const first = [...k.decisions].sort((x, y) => x.atMs - y.atMs)[0];
    return [
      String(f.nodes),
      node(k.victim),
      s(k.firstUnreachableMs),
      first === undefined
        ? 'never'
        : `${s(first.atMs)} by ${by(first.deciders)}${k.decisions.length > 1 ? ` (${k.decisions.length} distinct stamps)` : ''}`,
      s(k.allSeeDownMs),
      fmt(k.hostS),
      '-',
    ];
  });
  return {
    title: 'Scenario 8: SIGKILL stand-in (highest address isolated and stopped, no leave)',
    headers: [
      'N',
      'victim',
      'first marked unreachable s',
      'decided down s (by)',
      'every live node sees it down s',
      'host s',
      'stopped',
    ],
    rows,
    note: 'simulated seconds from the kill, polled every 100 ms; run after the cut, so one node of the cut pair is already down.',
  };
}

export function report(figures: readonly SizeFigures[], budget: number): ScenarioResult {
  const done = figures.filter((f) => f.stable !== undefined);
  const headlines = figures.map((f) => {
    if (f.stable === undefined) return `S8 N=${f.nodes}: ${f.stopped ?? 'no steady state'} (ring: ${ringOf(f.config)})`;
    const r = perNodeRates(f.stable);
    const cut = f.cut
      ? `; cut: ${describeDecisions(f.cut.decisions)}, ${f.cut.downedTwice.length === 0 ? 'nobody downed twice' : 'someone downed twice'}, ${f.cut.bothSidesActed ? 'both sides acted' : 'one side acted'}`
      : '';
    const kill = f.kill
      ? `; SIGKILL downed after ${s([...f.kill.decisions].sort((x, y) => x.atMs - y.atMs)[0]?.atMs)} s, all saw it ${s(f.kill.allSeeDownMs)} s`
      : '';
    return `S8 N=${f.nodes}: all Up after ${s(f.allUpMs)} s (sim, ${fmt(f.join.hostS)} s host); ${fmt(r.heartbeats)} heartbeats, ${fmt(r.gossip)} gossip (${fmtBytes(r.gossipBytes)}) per node per s${cut}${kill}; ${f.work.toLocaleString('en-US')} member records sent, ${fmt(f.hostS)} s host in all`;
  });
  const steadyPanel = (title: string, unit: string, label: string, pick: (r: PerNodeRates) => number): ChartPanel => ({
    title: `S8 ${title} per node per second (steady)`,
    unit,
    log: false,
    groups: done.map((f) => `N=${f.nodes}`),
    series: [{ label, values: done.map((f) => pick(perNodeRates(f.stable as PhaseTraffic))) }],
  });
  const panels: ChartPanel[] =
    done.length === 0
      ? []
      : [
          steadyPanel('heartbeat messages', 'msgs', 'Heartbeat + ack', (r) => r.heartbeats),
          steadyPanel('gossip bytes', 'bytes', 'Gossip', (r) => r.gossipBytes),
        ];
  return {
    id: 's8',
    title: 'Membership at scale',
    tables: [configTable(figures), joinTable(figures), cutTable(figures), killTable(figures)],
    data: { workBudget: budget, figures },
    headlines,
    panels,
  };
}
