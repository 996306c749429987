// Scenario 8, membership at scale on simulated time: N nodes of the real `Cluster` join from three seeds on
// the in-memory transport; then a few seconds of steady state, a non-transitive cut (two nodes that cannot
// talk to each other but reach everyone else) and a SIGKILL stand-in (a node isolated and stopped, no
// leave). Reports time until every node sees every other Up, messages and bytes per node per second by
// family/type once stable, who downed whom and when, and the config every size ran with.
// Host cost grows with how the membership spreads state; every size after the first runs under a work
// budget (messages weighted by the members they carry) and reports where it stopped instead of running
// for hours (1,000 nodes take 15-20 minutes of host time). Helpers: lib/membership-sim.ts (the cluster), lib/s8-report.ts (tables and headlines).
import {
  buildMembershipSim,
  resolvedScaleConfig,
  runUntilAllUp,
  runUntilConverged,
  seesAllUp,
  ViewWatcher,
  type MembershipSim,
  type Observation,
} from '../lib/membership-sim.js';
import type { BenchOptions, ScenarioResult } from '../lib/scenario.js';
import { withSeededMathRandom } from '../lib/seeded-random.js';
import { report, type CutFigures, type DownDecision, type KillFigures, type SizeFigures } from '../lib/s8-report.js';

export const SEEDS = 3;
const FULL_SIZES = [50, 200, 1_000];
const QUICK_SIZES = [20];
/** Simulated ms of each phase of one size: its poll step, its limits and its windows. */
const PHASE_MS = {
  step: 100,
  joinLimit: 120_000,
  /** After all are Up, how long the seen marks may take to reach everyone (convergence) before the steady window. */
  convergeLimit: 60_000,
  settle: 1_000,
  stable: 3_000,
  downLimit: 60_000,
  /** After a cut's first decision, how long to keep watching for a second one (longer than `stableAfterMs`, so a second decision would show). */
  cutWatch: 15_000,
} as const;
/**
 * Work budget of every size but the first: messages sent, each weighted by the member records it carries
 * (1 for a heartbeat or a status). A size whose estimate (the first size's work x (N / N0)^2, what full-state
 * gossip would cost; with status gossip the real growth is slower, about (N / N0)^1.3 from 50 to 200) is over
 * it is not started; one that passes the estimate but not the budget stops where it reached it. Both say so
 * in every table. 50M lets the default sizes (50, 200, 1,000: an estimate of about 41M for 1,000) run; a
 * regression back to N^2 traffic stops instead of running for hours.
 */
export const WORK_BUDGET = 50_000_000;

export async function scale(options: BenchOptions): Promise<ScenarioResult> {
  const sizes = options.nodes ?? (options.quick ? QUICK_SIZES : FULL_SIZES);
  const figures: SizeFigures[] = [];
  for (const [i, nodes] of sizes.entries()) {
    const budget = i === 0 || options.noBudget === true ? Infinity : WORK_BUDGET;
    const reference = figures.find((f) => f.stopped === undefined);
    const estimate = reference === undefined ? undefined : reference.work * (nodes / reference.nodes) ** 2;
    if (reference !== undefined && estimate !== undefined && estimate > budget) {
      figures.push(notRun(nodes, reference, estimate, budget));
      continue;
    }
    figures.push(await simulatedSize(nodes, options, budget));
  }
  return report(figures, WORK_BUDGET);
}

/** One size of this scenario on its own (S12 runs N = 25 beside the real processes); no budget by default. */
export function simulatedSize(nodes: number, options: BenchOptions, budget = Infinity): Promise<SizeFigures> {
  return withSeededMathRandom(options.seed * 31 + nodes, () => runSize(nodes, budget, options));
}

class BudgetExceeded extends Error {}

function runSize(nodes: number, budget: number, options: BenchOptions): SizeFigures {
  const started = process.hrtime.bigint();
  const sim = buildMembershipSim({
    nodes,
    seeds: SEEDS,
    seed: options.seed * 104_729 + nodes,
    delayMs: options.delayMs,
  });
  sim.traffic.workLimit = budget;
  sim.traffic.onOverBudget = () => {
    throw new BudgetExceeded();
  };
  let allUpMs: number | undefined;
  let convergedMs: number | undefined;
  let join: SizeFigures['join'] = { hostS: 0, messages: 0, work: 0, allUpNodes: 0, simMs: 0, byType: {} };
  let stable: SizeFigures['stable'];
  let cut: CutFigures | undefined;
  let kill: KillFigures | undefined;
  let stopped: string | undefined;
  const phase = { name: 'join' };
  try {
    // A large size runs for minutes: say on stderr how far the join is, every 5 s simulated.
    allUpMs = runUntilAllUp(sim, PHASE_MS.step, PHASE_MS.joinLimit, (simMs, pending) => {
      process.stderr.write(
        `S8 N=${nodes}: join at ${fmtS(simMs)} s simulated, ${pending} nodes not yet seeing all Up, ${secondsSince(started).toFixed(0)} s host\n`,
      );
    });
    join = joinFigures(sim, started);
    if (allUpMs === undefined)
      throw new Error(`not every node saw every other Up within ${PHASE_MS.joinLimit / 1000} s simulated`);
    phase.name = 'steady state';
    process.stderr.write(`S8 N=${nodes}: steady state at ${secondsSince(started).toFixed(0)} s host\n`);
    convergedMs = runUntilConverged(sim, PHASE_MS.step, PHASE_MS.convergeLimit);
    if (convergedMs === undefined)
      throw new Error(`not converged within ${PHASE_MS.convergeLimit / 1000} s simulated after all were Up`);
    sim.clock.advanceTo(sim.clock.now() + PHASE_MS.settle);
    stable = measureStable(sim);
    phase.name = 'non-transitive cut';
    process.stderr.write(`S8 N=${nodes}: non-transitive cut at ${secondsSince(started).toFixed(0)} s host\n`);
    cut = runCut(sim);
    phase.name = 'SIGKILL';
    process.stderr.write(`S8 N=${nodes}: SIGKILL at ${secondsSince(started).toFixed(0)} s host\n`);
    kill = runKill(sim);
  } catch (error) {
    if (phase.name === 'join') join = joinFigures(sim, started);
    stopped =
      error instanceof BudgetExceeded
        ? `stopped in the ${phase.name} at ${fmtS(sim.clock.now())} s simulated: work budget of ${budget.toLocaleString('en-US')} member records sent reached (${workShares(sim)})`
        : `stopped in the ${phase.name}: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    sim.traffic.onOverBudget = undefined;
    sim.close();
  }
  return {
    nodes,
    config: sim.config,
    stopped,
    allUpMs,
    convergedMs,
    join,
    stable,
    cut,
    kill,
    work: sim.traffic.work,
    hostS: secondsSince(started),
  };
}

/** A size not started: the estimate from a completed size is over the budget. */
function notRun(nodes: number, reference: SizeFigures, estimate: number, budget: number): SizeFigures {
  const hours = ((reference.hostS / reference.work) * estimate) / 3600;
  const config = resolvedScaleConfig(nodes, SEEDS);
  const stopped =
    `not run: estimated ${fmtM(estimate)} member records sent (N=${reference.nodes} sent ${fmtM(reference.work)} in all phases, x (N/${reference.nodes})^2), ` +
    `over the budget of ${fmtM(budget)}; about ${hours.toFixed(1)} h of host time at N=${reference.nodes}'s rate; force with --no-budget`;
  return {
    nodes,
    config,
    stopped,
    allUpMs: undefined,
    convergedMs: undefined,
    join: { hostS: 0, messages: 0, work: 0, allUpNodes: 0, simMs: 0, byType: {} },
    stable: undefined,
    cut: undefined,
    kill: undefined,
    work: 0,
    hostS: 0,
  };
}

function fmtM(records: number): string {
  return `${(records / 1e6).toFixed(1)}M`;
}

function joinFigures(sim: MembershipSim, started: bigint): SizeFigures['join'] {
  const n = sim.members.length;
  return {
    hostS: secondsSince(started),
    messages: sim.traffic.total(),
    work: sim.traffic.work,
    allUpNodes: sim.members.filter((m) => seesAllUp(m, n)).length,
    simMs: sim.clock.now(),
    byType: Object.fromEntries(sim.traffic.snapshot()),
  };
}

function measureStable(sim: MembershipSim): NonNullable<SizeFigures['stable']> {
  sim.traffic.countBytes = true;
  const before = sim.traffic.snapshot();
  const t0 = process.hrtime.bigint();
  sim.clock.advanceTo(sim.clock.now() + PHASE_MS.stable);
  const hostS = secondsSince(t0);
  sim.traffic.countBytes = false;
  return {
    windowMs: PHASE_MS.stable,
    nodes: sim.members.length,
    byType: Object.fromEntries(sim.traffic.since(before)),
    hostMsPerSimS: (hostS * 1000) / (PHASE_MS.stable / 1000),
  };
}

/** Two non-seed nodes, in the middle of the address range, lose each other; everyone else reaches both. */
function runCut(sim: MembershipSim): CutFigures {
  const n = sim.members.length;
  const a = Math.max(SEEDS, Math.floor(n / 2) - 1);
  const c = a + 1;
  const [memberA, memberC] = [sim.members[a], sim.members[c]];
  if (memberA === undefined || memberC === undefined) throw new Error(`a cut needs at least ${SEEDS + 2} nodes`);
  const watcher = new ViewWatcher(sim);
  const start = sim.clock.now();
  sim.network.partition([memberA.address], [memberC.address]);
  let firstDecisionAt: number | undefined;
  let agreedMs: number | undefined;
  while (sim.clock.now() - start < PHASE_MS.downLimit) {
    sim.clock.advanceTo(sim.clock.now() + PHASE_MS.step);
    if (firstDecisionAt === undefined && watcher.down.size > 0) firstDecisionAt = sim.clock.now();
    if (firstDecisionAt === undefined) continue;
    if (
      agreedMs === undefined &&
      [...watcher.down.keys()].every((subject) => watcher.notYetDown(subject).length === 0)
    ) {
      agreedMs = sim.clock.now() - start;
    }
    if (sim.clock.now() - firstDecisionAt >= PHASE_MS.cutWatch && agreedMs !== undefined) break;
  }
  watcher.stop();
  const decisions = [...watcher.down.entries()].flatMap(([subject, seen]) => decisionsOf(sim, subject, seen, start));
  const stamps = new Map<number, number>();
  for (const d of decisions) stamps.set(d.subject, (stamps.get(d.subject) ?? 0) + d.deciders.length);
  const deciders = new Set(decisions.flatMap((d) => d.deciders));
  const downed = new Set(decisions.map((d) => d.subject));
  return {
    pair: [a, c],
    decisions,
    downedTwice: [...stamps].filter(([, count]) => count > 1).map(([subject]) => subject),
    bothSidesActed: deciders.has(a) && deciders.has(c),
    collateral: [...downed].filter((s) => s !== a && s !== c),
    agreedMs,
    survivors: [a, c].filter((i) => !downed.has(i)),
  };
}

/** The node with the highest address (never a seed, never the leader) is cut off and stopped. */
function runKill(sim: MembershipSim): KillFigures {
  const t0 = process.hrtime.bigint();
  const victim = sim.members.length - 1;
  const victimKey = sim.members[victim]?.key as string;
  const watcher = new ViewWatcher(sim);
  const start = sim.clock.now();
  sim.kill(victim);
  let allSeeDownMs: number | undefined;
  while (sim.clock.now() - start < PHASE_MS.downLimit) {
    sim.clock.advanceTo(sim.clock.now() + PHASE_MS.step);
    if (watcher.down.has(victimKey) && watcher.notYetDown(victimKey).length === 0) {
      allSeeDownMs = sim.clock.now() - start;
      break;
    }
  }
  watcher.stop();
  const marks = [...(watcher.unreachable.get(victimKey)?.values() ?? [])];
  return {
    victim,
    firstUnreachableMs: marks.length === 0 ? undefined : Math.min(...marks) - start,
    decisions: decisionsOf(sim, victimKey, watcher.down.get(victimKey) ?? new Map(), start),
    allSeeDownMs,
    hostS: secondsSince(t0),
  };
}

/**
 * One decision per distinct down stamp. Its deciders are the nodes whose views showed it first: a decision
 * reaches anyone else at least one network delay later, so several nodes at the same instant decided
 * independently (they marked the subject unreachable at the same instant, from its last heartbeat to all
 * of them, and their downing delays ran out together). The subject itself when it downed itself.
 */
function decisionsOf(
  sim: MembershipSim,
  subjectKey: string,
  seen: ReadonlyMap<number, Observation>,
  start: number,
): DownDecision[] {
  const subject = sim.members.findIndex((m) => m.key === subjectKey);
  const byStamp = new Map<string, Observation[]>();
  for (const observation of seen.values()) {
    const stamp = String(observation.downedAtMs);
    const list = byStamp.get(stamp) ?? [];
    list.push(observation);
    byStamp.set(stamp, list);
  }
  // A view that no longer lists the subject (pruned) says nothing about who decided.
  if (byStamp.size > 1) byStamp.delete('undefined');
  const selfDown = sim.members[subject]?.selfDown;
  return [...byStamp.values()].map((observations) => {
    const earliest = Math.min(...observations.map((o) => o.atMs));
    const firsts = observations.filter((o) => o.atMs === earliest).map((o) => o.observer);
    const deciders = selfDown?.cause === 'minority-side' && selfDown.atMs <= earliest ? [subject] : firsts;
    return { deciders, subject, downedAtMs: observations[0]?.downedAtMs, atMs: earliest - start };
  });
}

/** Which message types the work went into, largest first: says whether gossip or heartbeats cost the run. */
function workShares(sim: MembershipSim): string {
  const total = Math.max(1, sim.traffic.work);
  return [...sim.traffic.byType]
    .sort(([, x], [, y]) => y.work - x.work)
    .filter(([, count]) => count.work > 0)
    .map(
      ([key, count]) =>
        `${key} ${count.messages.toLocaleString('en-US')} msgs, ${Math.round((100 * count.work) / total)}% of the work`,
    )
    .join('; ');
}

function secondsSince(t0: bigint): number {
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

function fmtS(ms: number): string {
  return (ms / 1000).toFixed(1);
}
