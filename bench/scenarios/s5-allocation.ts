// Scenario 5, allocation cost: allocate and rebalance of externalAllocationStrategy (least-shard fallback,
// 1,000 explicit placements read from a PlacementStore) against plain least-shard, with 10,000 shards on
// 100 nodes; with and without a placement change between calls (a change rebuilds the strategy's view).
import { PlacementStore } from '../../crdt/index.js';
import type { NodeAddress } from '../../src/cluster/address.js';
import { explicitPlacementState } from '../../src/sharding/api/external-allocation-controller.js';
import {
  LeastShardAllocationStrategy,
  externalAllocationStrategy,
  type AllocationStrategy,
} from '../../src/sharding/strategies/index.js';
import { timeMs } from '../lib/heap.js';
import type { BenchOptions, ChartPanel, ScenarioResult } from '../lib/scenario.js';
import { seededRandom, shuffled } from '../lib/seeded-random.js';
import { simAddress } from '../lib/sim-cluster.js';
import { fmt, fmtRatio, fmtSummary, ratio, summarize, type Summary } from '../lib/stats.js';
import type { Table } from '../lib/table.js';
import { TYPE_NAME } from '../protocols/types.js';

const SHARDS = 10_000;
const NODES = 100;
const PINS = 1000;

interface CallFigures {
  readonly call: 'allocate' | 'rebalance';
  readonly strategy: 'external' | 'least-shard';
  readonly change: boolean;
  readonly calls: number;
  /** Wall-clock microseconds per call. */
  readonly us: Summary;
}

export async function allocationCost(options: BenchOptions): Promise<ScenarioResult> {
  const random = seededRandom(options.seed * 17);
  const candidates: NodeAddress[] = Array.from({ length: NODES }, (_, i) => simAddress(i));
  // Every shard but the ones allocate is asked about, spread evenly, in allocation order.
  const free = [SHARDS - 2, SHARDS - 1];
  const sets = candidates.map(() => new Set<number>());
  for (let shardId = 0; shardId < SHARDS; shardId++) if (!free.includes(shardId)) sets[shardId % NODES]?.add(shardId);
  const currentShards = new Map(candidates.map((address, i) => [address.toString(), sets[i] as ReadonlySet<number>]));
  const store = new PlacementStore({ node: 'operator' });
  const pinned = shuffled(
    Array.from({ length: SHARDS - 2 }, (_, i) => i),
    random,
  ).slice(0, PINS - 1);
  pinned.push(SHARDS - 2); // one of the free shards is pinned: allocate takes the explicit path for it
  const targetOf = (): string => (candidates[Math.floor(random() * NODES)] as NodeAddress).toString();
  for (const shardId of pinned) store.set(TYPE_NAME, shardId, targetOf());
  const getState = explicitPlacementState(() => store.snapshot(TYPE_NAME));
  const strategies: Record<CallFigures['strategy'], AllocationStrategy> = {
    external: externalAllocationStrategy(new LeastShardAllocationStrategy(), getState),
    'least-shard': new LeastShardAllocationStrategy(),
  };
  const change = (): void =>
    void store.set(TYPE_NAME, pinned[Math.floor(random() * pinned.length)] as number, targetOf());
  const allocateCalls = options.quick ? 2000 : 10_000;
  const rebalanceCalls = options.quick ? 100 : 400;
  const none = new Set<number>();
  const figures: CallFigures[] = [];
  for (const withChange of [false, true]) {
    for (const [name, strategy] of Object.entries(strategies) as Array<[CallFigures['strategy'], AllocationStrategy]>) {
      // Alternates the unpinned and the pinned free shard, so both paths are in the figure.
      const allocate = measure(allocateCalls, withChange ? change : undefined, (i) => {
        strategy.allocate(free[i % 2] as number, candidates, currentShards);
      });
      const rebalance = measure(rebalanceCalls, withChange ? change : undefined, () => {
        strategy.rebalance(currentShards, candidates, none);
      });
      figures.push({ call: 'allocate', strategy: name, change: withChange, calls: allocateCalls, us: allocate });
      figures.push({ call: 'rebalance', strategy: name, change: withChange, calls: rebalanceCalls, us: rebalance });
    }
  }
  return report(figures);
}

/** Times each call on its own; `between` runs untimed before every call. A warm-up pass comes first. */
function measure(calls: number, between: (() => void) | undefined, call: (i: number) => void): Summary {
  for (let i = 0; i < Math.min(200, calls); i++) {
    between?.();
    call(i);
  }
  const samples: number[] = [];
  for (let i = 0; i < calls; i++) {
    between?.();
    samples.push(timeMs(() => call(i)) * 1000);
  }
  return summarize(samples);
}

function report(figures: readonly CallFigures[]): ScenarioResult {
  const find = (
    call: CallFigures['call'],
    strategy: CallFigures['strategy'],
    change: boolean,
  ): CallFigures | undefined => figures.find((f) => f.call === call && f.strategy === strategy && f.change === change);
  const rows: string[][] = [];
  for (const call of ['allocate', 'rebalance'] as const) {
    for (const change of [false, true]) {
      const ext = find(call, 'external', change);
      const base = find(call, 'least-shard', change);
      rows.push([
        call,
        change ? 'yes' : 'no',
        ext ? fmtSummary(ext.us) : 'n/a',
        base ? fmtSummary(base.us) : 'n/a',
        ext && base ? fmtRatio(ratio(ext.us.median, base.us.median)) : 'n/a',
        ext && base ? fmtRatio(ratio(ext.us.p99, base.us.p99)) : 'n/a',
        String(ext?.calls ?? 0),
      ]);
    }
  }
  const main: Table = {
    title: `Scenario 5: allocation cost (${SHARDS.toLocaleString('en-US')} shards, ${NODES} nodes, ${PINS.toLocaleString('en-US')} explicit placements)`,
    headers: [
      'call',
      'change between calls',
      'external us',
      'least-shard us',
      'ratio (median)',
      'ratio (p99)',
      'calls',
    ],
    rows,
    note:
      'wall-clock microseconds per call, median / p99. external = externalAllocationStrategy(least-shard, ' +
      'explicitPlacementState(store.snapshot)). change: one placement written to the store before every call ' +
      '(not timed), so every call sees a new snapshot: allocate looks its shard up in it directly, rebalance ' +
      'copies its 1,000 valid targets once (it looks up every allocated shard).',
  };
  const panels: ChartPanel[] = [
    {
      title: 'S5 time per call, median (wall-clock us)',
      unit: 'us',
      log: true,
      groups: ['allocate', 'allocate + change', 'rebalance', 'rebalance + change'],
      series: (['external', 'least-shard'] as const).map((strategy) => ({
        label: strategy === 'external' ? 'external (ours) over least-shard' : 'least-shard alone',
        values: (['allocate', 'rebalance'] as const).flatMap((call) =>
          [false, true].map((change) => find(call, strategy, change)?.us.median ?? Number.NaN),
        ),
      })),
    },
  ];
  const headlines = (['allocate', 'rebalance'] as const).map((call) => {
    const e0 = find(call, 'external', false);
    const b0 = find(call, 'least-shard', false);
    const e1 = find(call, 'external', true);
    const b1 = find(call, 'least-shard', true);
    return (
      `S5 ${call}: ${fmt(e0?.us.median ?? Number.NaN)} us without a change (${fmtRatio(ratio(e0?.us.median ?? Number.NaN, b0?.us.median ?? Number.NaN))} of least-shard alone), ` +
      `${fmt(e1?.us.median ?? Number.NaN)} us with a change before each call (${fmtRatio(ratio(e1?.us.median ?? Number.NaN, b1?.us.median ?? Number.NaN))})`
    );
  });
  return {
    id: 's5',
    title: 'Allocation cost',
    tables: [main],
    data: { shards: SHARDS, nodes: NODES, pins: PINS, figures },
    headlines,
    panels,
  };
}
