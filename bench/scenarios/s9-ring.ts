// Scenario 9, ring vs least-shard (issue 28): RingAllocationStrategy beside LeastShardAllocationStrategy
// in the same process, 1,000 allocated shards over 3, 10 and 100 nodes, through the coordinator's placement
// loop without the coordinator (test/strategies/placement-sim.ts: rebalance rounds applied until the strategy
// asks for nothing, each moved shard allocated again one at a time). Shards moved when one node joins and
// when one leaves, shards back on their node after a rolling restart of every node, max/mean load, and the
// wall-clock cost of allocate and rebalance as a ratio against least-shard.
import { NodeAddress } from '../../src/cluster/address.js';
import {
  LeastShardAllocationStrategy,
  RingAllocationStrategy,
  type AllocationStrategy,
} from '../../src/sharding/strategies/index.js';
import { buildRing, ringHome } from '../../src/sharding/strategies/hash-ring.js';
import { PlacementSim } from '../../test/strategies/placement-sim.js';
import type { BenchOptions, ChartPanel, ScenarioResult } from '../lib/scenario.js';
import { seededRandom, shuffled } from '../lib/seeded-random.js';
import { fmt, fmtRatio, ratio, summarize, type Summary } from '../lib/stats.js';
import type { Table } from '../lib/table.js';

const SHARDS = 1000;
const SIZES = [3, 10, 100] as const;
const KINDS = ['ring', 'least-shard'] as const;
type Kind = (typeof KINDS)[number];

interface Figures {
  readonly kind: Kind;
  readonly nodes: number;
  /** Moves while settling right after the first 1,000 allocations, members unchanged. */
  readonly warmUpMoves: number;
  readonly joinMoves: number;
  readonly leaveMoves: number;
  /** Shards whose ring home the join / the leave changed (C), and those off their ring home before (D). */
  readonly joinRingHomesChanged: number;
  readonly leaveRingHomesChanged: number;
  readonly displacedSettled: number;
  readonly rollingMoves: number;
  readonly rollingBack: number;
  readonly maxLoad: number;
  readonly meanLoad: number;
  /** Wall-clock microseconds per call. */
  readonly allocateUs: Summary;
  readonly rebalanceUs: Summary;
}

const addressOf = (i: number): NodeAddress => new NodeAddress('app', `10.9.${i >> 8}.${i & 255}`, 7700);

export async function ringVsLeastShard(options: BenchOptions): Promise<ScenarioResult> {
  const figures: Figures[] = [];
  for (const nodes of SIZES) {
    for (const kind of KINDS) figures.push(run(kind, nodes, options));
  }
  return report(figures);
}

function strategyFor(kind: Kind, sim: PlacementSim): AllocationStrategy {
  return kind === 'ring'
    ? new RingAllocationStrategy({ cluster: sim.view })
    : new LeastShardAllocationStrategy({ cluster: sim.view });
}

function run(kind: Kind, nodes: number, options: BenchOptions): Figures {
  const random = seededRandom(options.seed * 31 + nodes);
  const members = Array.from({ length: nodes }, (_, i) => addressOf(i));
  const sim = new PlacementSim(members);
  const strategy = strategyFor(kind, sim);
  // First messages arrive in no particular order: shards are allocated in a seeded shuffle.
  for (const shardId of shuffled(
    Array.from({ length: SHARDS }, (_, i) => i),
    random,
  ))
    sim.allocate(strategy, shardId);
  sim.resetMoves();
  sim.settle(strategy);
  const warmUpMoves = sim.moves;
  const loads = sim.loads();
  const displacedSettled = displacedCount(sim);
  const { allocateUs, rebalanceUs } = cost(strategy, sim, options);

  const joiner = addressOf(nodes);
  const homesBefore = ringHomes(members);
  sim.resetMoves();
  sim.addNode(joiner);
  sim.settle(strategy);
  const joinMoves = sim.moves;
  const joinRingHomesChanged = changed(homesBefore, ringHomes([...members, joiner]));
  sim.removeNode(strategy, joiner);
  sim.settle(strategy);

  const leaver = members[Math.floor(nodes / 2)] as NodeAddress;
  sim.resetMoves();
  sim.removeNode(strategy, leaver);
  sim.settle(strategy);
  const leaveMoves = sim.moves;
  const leaveRingHomesChanged = changed(homesBefore, ringHomes(members.filter((m) => m !== leaver)));
  sim.addNode(leaver);
  sim.settle(strategy);

  // Rolling restart: each node in turn leaves (its shards handed off) and comes back on the same address.
  const beforeRolling = new Map(sim.homes);
  sim.resetMoves();
  for (const member of members) {
    sim.removeNode(strategy, member);
    sim.settle(strategy);
    sim.addNode(member);
    sim.settle(strategy);
  }
  const rollingBack = [...beforeRolling].filter(([shardId, home]) => sim.homes.get(shardId) === home).length;
  return {
    kind,
    nodes,
    warmUpMoves,
    joinMoves,
    leaveMoves,
    joinRingHomesChanged,
    leaveRingHomesChanged,
    displacedSettled,
    rollingMoves: sim.moves,
    rollingBack,
    maxLoad: Math.max(...loads),
    meanLoad: SHARDS / nodes,
    allocateUs,
    rebalanceUs,
  };
}

/** Ring homes (unbounded) of shards 0..SHARDS-1 under `members`: the same for both kinds, for C. */
function ringHomes(members: readonly NodeAddress[]): string[] {
  const ring = buildRing(members.map(String), 128);
  return Array.from({ length: SHARDS }, (_, shardId) => ring.keys[ringHome(ring, shardId)] as string);
}

function changed(before: readonly string[], after: readonly string[]): number {
  return before.filter((home, i) => after[i] !== home).length;
}

function displacedCount(sim: PlacementSim): number {
  const homes = ringHomes(sim.candidates);
  return [...sim.homes].filter(([shardId, at]) => homes[shardId] !== at).length;
}

/**
 * Per call, on the settled placement: allocate of a shard without a home (batches of 50 calls, one sample a
 * batch), rebalance of the whole map (one call a sample; it moves nothing there, so this is its scan cost).
 */
function cost(
  strategy: AllocationStrategy,
  sim: PlacementSim,
  options: BenchOptions,
): { allocateUs: Summary; rebalanceUs: Summary } {
  const batches = options.quick ? 200 : 1000;
  const rebalances = options.quick ? 100 : 400;
  const batch = 50;
  const allocate = (): number => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < batch; i++) strategy.allocate(SHARDS + i, sim.candidates, sim.shards);
    return Number(process.hrtime.bigint() - start) / 1e3 / batch;
  };
  const rebalance = (): number => {
    const start = process.hrtime.bigint();
    strategy.rebalance(sim.shards, sim.candidates, new Set());
    return Number(process.hrtime.bigint() - start) / 1e3;
  };
  // Warm-up: the first size measured would otherwise pay for the JIT.
  for (let i = 0; i < 300; i++) {
    allocate();
    rebalance();
  }
  const allocateSamples = Array.from({ length: batches }, allocate);
  const rebalanceSamples = Array.from({ length: rebalances }, rebalance);
  return { allocateUs: summarize(allocateSamples), rebalanceUs: summarize(rebalanceSamples) };
}

function report(figures: readonly Figures[]): ScenarioResult {
  const find = (kind: Kind, nodes: number): Figures =>
    figures.find((f) => f.kind === kind && f.nodes === nodes) as Figures;
  const placement: Table = {
    title: `Scenario 9: ring vs least-shard, shards moved and kept (${SHARDS.toLocaleString('en-US')} shards, simulated placement loop)`,
    headers: [
      'nodes',
      'strategy',
      'warm-up moves',
      'join: moved',
      'leave: moved',
      'rolling restart: back on their node',
      'rolling restart: moves',
      'max / mean load',
    ],
    rows: figures.map((f) => [
      String(f.nodes),
      f.kind,
      String(f.warmUpMoves),
      f.kind === 'ring' ? `${f.joinMoves} (C ${f.joinRingHomesChanged})` : String(f.joinMoves),
      f.kind === 'ring' ? `${f.leaveMoves} (C ${f.leaveRingHomesChanged})` : String(f.leaveMoves),
      `${f.rollingBack} / ${SHARDS}`,
      String(f.rollingMoves),
      `${f.maxLoad} / ${fmt(f.meanLoad)} = ${fmt(f.maxLoad / f.meanLoad)}`,
    ]),
    note:
      'moves = hand-offs that landed a shard on another node, counted until rebalance asks for nothing (rounds at the default ' +
      'limit, 20 shards or 10%). warm-up: settling right after 1,000 first allocations in a seeded random order, members unchanged. ' +
      'join / leave: one node added / one (graceful) leaving from the settled placement; C = shards whose ring home changed. rolling ' +
      'restart: every node in turn leaves and comes back on its address, settled after each step. D (ring, settled, off their ring ' +
      `home): ${SIZES.map((n) => `${n} nodes ${find('ring', n).displacedSettled}`).join(', ')}.`,
  };
  const costs: Table = {
    title: 'Scenario 9: cost per call on the settled placement (wall-clock us, median / p99; ratio ring / least-shard)',
    headers: [
      'nodes',
      ...(['allocate', 'rebalance'] as const).flatMap((op) => [`${op} ring`, `${op} least-shard`, `${op} ratio`]),
    ],
    rows: SIZES.map((n) => {
      const r = find('ring', n);
      const l = find('least-shard', n);
      return [
        String(n),
        `${fmt(r.allocateUs.median)} / ${fmt(r.allocateUs.p99)}`,
        `${fmt(l.allocateUs.median)} / ${fmt(l.allocateUs.p99)}`,
        fmtRatio(ratio(r.allocateUs.median, l.allocateUs.median)),
        `${fmt(r.rebalanceUs.median)} / ${fmt(r.rebalanceUs.p99)}`,
        `${fmt(l.rebalanceUs.median)} / ${fmt(l.rebalanceUs.p99)}`,
        fmtRatio(ratio(r.rebalanceUs.median, l.rebalanceUs.median)),
      ];
    }),
    note: 'both strategies read the same ClusterView (every node Up); allocate timed in batches of 50 calls, rebalance one call per sample.',
  };
  const panels: ChartPanel[] = [
    {
      title: 'S9 shards back on their node after a rolling restart (of 1,000)',
      unit: 'shards',
      log: false,
      groups: SIZES.map((n) => `${n} nodes`),
      series: KINDS.map((kind) => ({ label: kind, values: SIZES.map((n) => find(kind, n).rollingBack) })),
    },
  ];
  const headlines = SIZES.map((n) => {
    const r = find('ring', n);
    const l = find('least-shard', n);
    return (
      `S9 ${n} nodes: rolling restart leaves ${r.rollingBack}/${SHARDS} shards on their node with the ring (least-shard ${l.rollingBack}); ` +
      `join moves ${r.joinMoves} (least-shard ${l.joinMoves}), leave ${r.leaveMoves} (${l.leaveMoves}); max/mean load ${fmt(r.maxLoad / r.meanLoad)}; ` +
      `allocate ${fmtRatio(ratio(r.allocateUs.median, l.allocateUs.median))} of least-shard, rebalance ${fmtRatio(ratio(r.rebalanceUs.median, l.rebalanceUs.median))}`
    );
  });
  return {
    id: 's9',
    title: 'Ring vs least-shard',
    tables: [placement, costs],
    data: { shards: SHARDS, figures },
    headlines,
    panels,
  };
}
