// Kill -9 failover on a cluster of real CLI node processes (issue 26): the time from SIGKILL of the node hosting
// an entity until a surviving node first answers for that entity from its new host (lib/first-answer.ts).
// The victim alternates between the youngest member and the oldest (the coordinator's node); the killed node
// is restarted on its ports and rejoins before the next run, so every run starts from a formed cluster.
import { firstAnswerElsewhere, hostOf } from './first-answer.js';
import { summarize } from './stats.js';
import { byAge, formed, restart, type ClusterNode, type RealCluster } from './real-cluster.js';

export type VictimKind = 'member' | 'coordinator';

/** Milliseconds until the first answer from a new host, per victim kind; Infinity for a run that never got one. */
export type FailoverTimes = Record<VictimKind, number[]>;

/** An entity of the demo Counter that `via` sees hosted on `victim` (tried by name until one is). */
export async function entityOn(via: ClusterNode, victim: ClusterNode, tag: string, tries = 2_000): Promise<string> {
  for (let i = 0; i < tries; i++) if ((await hostOf(via, `${tag}-e${i}`)) === victim.address) return `${tag}-e${i}`;
  throw new Error(`no entity found on ${victim.address}`);
}

/** Stops `victim` with `signal` and asks through `via` every 100 ms until another host answers; ms or Infinity. */
export async function rehomeTime(
  via: ClusterNode,
  victim: ClusterNode,
  tag: string,
  signal: NodeJS.Signals,
  limitMs = 90_000,
): Promise<number> {
  const entity = await entityOn(via, victim, tag);
  victim.child.kill(signal);
  return (await firstAnswerElsewhere(() => hostOf(via, entity), victim.address, limitMs)) ?? Infinity;
}

/**
 * `runs` kills alternating member / coordinator, each followed by the victim's restart and the cluster formed
 * again. `progress` hears each run's figure.
 */
export async function failoverRuns(
  cluster: RealCluster,
  runs: number,
  progress: (line: string) => void = () => undefined,
): Promise<FailoverTimes> {
  const times: FailoverTimes = { member: [], coordinator: [] };
  for (let run = 0; run < runs; run++) {
    const kind: VictimKind = run % 2 === 0 ? 'member' : 'coordinator';
    const ages = await byAge(cluster.nodes);
    const victim = kind === 'coordinator' ? ages[0]! : ages[ages.length - 1]!;
    // Asked through a node that is neither the victim nor the coordinator's, when there is one.
    const via = ages.find((n) => n !== victim && n !== ages[0]) ?? ages.find((n) => n !== victim)!;
    const ms = await rehomeTime(via, victim, `r${run}`, 'SIGKILL', 60_000);
    times[kind].push(ms);
    progress(`run ${run + 1}/${runs} ${kind}: first answer from the new host after ${Math.round(ms)} ms`);
    await restart(cluster, victim, `run${run + 1}`, via);
    await formed(cluster.nodes);
  }
  return times;
}

/** One row per victim kind: runs, p50, p99 and max in seconds, and whether the p99 meets issue 26's 6 s. */
export function failoverRows(times: FailoverTimes, processes: number): string[][] {
  return (['member', 'coordinator'] as const).map((kind) => {
    const values = times[kind];
    const { n, median, p99 } = summarize(values);
    const s = (ms: number): string => (Number.isFinite(ms) ? (ms / 1000).toFixed(2) : 'never');
    return [
      `${processes} processes, ${kind === 'member' ? 'a member (the youngest)' : "the coordinator's node (the oldest)"}`,
      String(n),
      s(median),
      s(p99),
      n === 0 ? 'n/a' : s(Math.max(...values)),
      n === 0 ? 'n/a' : p99 <= 6_000 ? 'met' : 'not met',
    ];
  });
}

export const FAILOVER_HEADERS = ['kill -9 of', 'runs', 'p50 s', 'p99 s', 'max s', 'p99 <= 6 s'];
