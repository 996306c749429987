// Scenario 9, ring vs least-shard (issue 28): RingAllocationStrategy beside LeastShardAllocationStrategy
// in the same process, 1,000 allocated shards over 3, 10 and 100 nodes, through the coordinator's placement
// loop without the coordinator (test/strategies/placement-sim.ts: rebalance rounds applied until the strategy
// asks for nothing, each moved shard allocated again one at a time). Shards moved when one node joins and
// when one leaves, shards back on their node after a rolling restart of every node, max/mean load, moves on
// an unchanged membership after allocating in ascending, descending and a shuffled order (issue 40), and the
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
const ORDERS = ['ascending', 'descending', 'shuffled'] as const;
type Order = (typeof ORDERS)[number];

interface Figures {
  readonly kind: Kind;
  readonly nodes: number;
  /** Moves while settling right after the first 1,000 allocations (shuffled), members unchanged. */
  readonly warmUpMoves: number;
  /** The same, per allocation order: what rebalance proposes (and the loop carries out) with no membership change. */
  readonly orderMoves: Readonly<Record<Order, number>>;
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
  /** Wall-clock microseconds of a new strategy's first allocate: for the ring, its work on a membership change. */
  readonly changeUs: Summary;
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
    ? new RingAllocationStrategy({ cluster: sim.view, numberOfShards: SHARDS })
    : new LeastShardAllocationStrategy({ cluster: sim.view });
}

/** Shard ids 0..SHARDS-1 in `order`; the shuffle is seeded per size. */
function allocationOrder(order: Order, nodes: number, options: BenchOptions): number[] {
  const ids = Array.from({ length: SHARDS }, (_, i) => i);
  if (order === 'descending') return ids.reverse();
  return order === 'shuffled' ? shuffled(ids, seededRandom(options.seed * 31 + nodes)) : ids;
}

/** A fresh placement of SHARDS shards allocated in `order`, and the moves settling it takes (members unchanged). */
function warmUp(
  kind: Kind,
  nodes: number,
  order: Order,
  options: BenchOptions,
): { sim: PlacementSim; strategy: AllocationStrategy; moves: number } {
  const sim = new PlacementSim(Array.from({ length: nodes }, (_, i) => addressOf(i)));
  const strategy = strategyFor(kind, sim);
  for (const shardId of allocationOrder(order, nodes, options)) sim.allocate(strategy, shardId);
  sim.resetMoves();
  sim.settle(strategy);
  return { sim, strategy, moves: sim.moves };
}

function run(kind: Kind, nodes: number, options: BenchOptions): Figures {
  const members = Array.from({ length: nodes }, (_, i) => addressOf(i));
  const orderMoves = Object.fromEntries(
    ORDERS.map((order) => [order, warmUp(kind, nodes, order, options).moves]),
  ) as Record<Order, number>;
  // First messages arrive in no particular order: the rest starts from the seeded shuffle.
  const { sim, strategy, moves: warmUpMoves } = warmUp(kind, nodes, 'shuffled', options);
  const loads = sim.loads();
  const displacedSettled = displacedCount(sim);
  const { allocateUs, rebalanceUs } = cost(strategy, sim, options);
  const changeUs = firstCallCost(kind, sim, options);

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
    orderMoves,
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
    changeUs,
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
 * Per call, on the settled placement: allocate of shards 0..49 (as if homeless) (batches of 50 calls, one sample a
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
    // Ids in the range (the ring's assignment covers it; neither strategy looks at a shard's current home).
    for (let i = 0; i < batch; i++) strategy.allocate(i, sim.candidates, sim.shards);
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

/** A new strategy's first allocate on the settled placement: the ring builds its ring and the range's assignment. */
function firstCallCost(kind: Kind, sim: PlacementSim, options: BenchOptions): Summary {
  const sample = (): number => {
    const strategy = strategyFor(kind, sim);
    const start = process.hrtime.bigint();
    strategy.allocate(0, sim.candidates, sim.shards);
    return Number(process.hrtime.bigint() - start) / 1e3;
  };
  for (let i = 0; i < 10; i++) sample();
  return summarize(Array.from({ length: options.quick ? 20 : 60 }, sample));
}

function report(figures: readonly Figures[]): ScenarioResult {
  const find = (kind: Kind, nodes: number): Figures =>
    figures.find((f) => f.kind === kind && f.nodes === nodes) as Figures;
  const placement: Table = {
    title: `Scenario 9: ring vs least-shard, shards moved and kept (${SHARDS.toLocaleString('en-US')} shards, simulated placement loop)`,
    headers: [
      'nodes',
      'strategy',
      'moves, members unchanged (asc / desc / shuffled)',
      'join: moved',
      'leave: moved',
      'rolling restart: back on their node',
      'rolling restart: moves',
      'max / mean load',
    ],
    rows: figures.map((f) => [
      String(f.nodes),
      f.kind,
      ORDERS.map((order) => f.orderMoves[order]).join(' / '),
      f.kind === 'ring' ? `${f.joinMoves} (C ${f.joinRingHomesChanged})` : String(f.joinMoves),
      f.kind === 'ring' ? `${f.leaveMoves} (C ${f.leaveRingHomesChanged})` : String(f.leaveMoves),
      `${f.rollingBack} / ${SHARDS}`,
      String(f.rollingMoves),
      `${f.maxLoad} / ${fmt(f.meanLoad)} = ${fmt(f.maxLoad / f.meanLoad)}`,
    ]),
    note:
      'moves = hand-offs that landed a shard on another node, counted until rebalance asks for nothing (rounds at the default ' +
      'limit, 20 shards or 10%). unchanged members: settling right after 1,000 first allocations in ascending, descending and a ' +
      'seeded random order of shard ids, members unchanged (the rest starts from the shuffled one). ' +
      'join / leave: one node added / one (graceful) leaving from the settled placement; C = shards whose ring home changed. rolling ' +
      'restart: every node in turn leaves and comes back on its address, settled after each step. D (ring, settled, off their ring ' +
      `home): ${SIZES.map((n) => `${n} nodes ${find('ring', n).displacedSettled}`).join(', ')}.`,
  };
  const costs: Table = {
    title: 'Scenario 9: cost per call on the settled placement (wall-clock us, median / p99; ratio ring / least-shard)',
    headers: [
      'nodes',
      ...(['allocate', 'rebalance'] as const).flatMap((op) => [`${op} ring`, `${op} least-shard`, `${op} ratio`]),
      'membership change, ring',
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
        `${fmt(r.changeUs.median)} / ${fmt(r.changeUs.p99)}`,
      ];
    }),
    note:
      'both strategies read the same ClusterView (every node Up); allocate timed in batches of 50 calls, rebalance one call per ' +
      'sample; membership change: the first allocate of a new ring strategy (its ring and the assignment of all 1,000 shard ids, ' +
      'done once per member set).',
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
      `moves on unchanged members ${ORDERS.map((o) => r.orderMoves[o]).join('/')} (asc/desc/shuffled); join moves ${r.joinMoves} (least-shard ${l.joinMoves}), leave ${r.leaveMoves} (${l.leaveMoves}); max/mean load ${fmt(r.maxLoad / r.meanLoad)}; ` +
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
