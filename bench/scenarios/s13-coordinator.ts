// Scenario 13, coordinator cost: one ShardCoordinator in this process (a recording context, a manual
// scheduler, no network) gives 10,000 shards homes on 10 regions, one GetShardHome and one ShardStarted each,
// then drains one region through the whole hand-off protocol (BeginHandOff acknowledged by every region, the
// owner's ShardStopped, the new home's ShardStarted). Its baseline, in the same process: the least-shard
// strategy's own allocate over the same map, which is the one call per shard the coordinator cannot avoid.
// The ratio is what the coordinator's state, events and messages cost on top of the strategy.
import type { ShardingMessage, TypedShardingMessage } from '../../src/sharding/protocol/messages.js';
import { LeastShardAllocationStrategy } from '../../src/sharding/strategies/index.js';
import type { NodeAddress } from '../../src/cluster/address.js';
import { member, startedCoordinator } from '../../test/sharding/coordinator-fakes.js';
import { timeMs } from '../lib/heap.js';
import type { BenchOptions, ScenarioResult } from '../lib/scenario.js';
import { fmt, fmtRatio, ratio } from '../lib/stats.js';
import type { Table } from '../lib/table.js';

const REGIONS = 10;

interface PhaseFigures {
  readonly phase: 'allocate' | 'drain';
  readonly shards: number;
  /** Wall-clock microseconds per shard, the coordinator's. */
  readonly coordinatorUs: number;
  /** Wall-clock microseconds per shard, the strategy's allocate alone over the same map. */
  readonly strategyUs: number;
}

export async function coordinatorCost(options: BenchOptions): Promise<ScenarioResult> {
  const shards = options.quick ? 2_000 : 10_000;
  const rounds = options.quick ? 2 : 5;
  const runs: PhaseFigures[][] = [];
  for (let round = 0; round < rounds; round++) runs.push(oneRun(shards));
  // The fastest of the rounds: the first ones pay the JIT's warm-up.
  const best = (phase: PhaseFigures['phase']): PhaseFigures =>
    runs
      .map((figures) => figures.find((f) => f.phase === phase) as PhaseFigures)
      .reduce((a, b) => (b.coordinatorUs < a.coordinatorUs ? b : a));
  return report([best('allocate'), best('drain')]);
}

function oneRun(shards: number): PhaseFigures[] {
  const members = Array.from({ length: REGIONS }, (_, i) => member(i + 1));
  const regions = members.map((m) => m.address.toString());
  const { subject, ctx } = startedCoordinator(
    members,
    { coordinatorWarmupMs: 0 },
    { numberOfShards: shards, strategy: new LeastShardAllocationStrategy() },
  );
  const requester = regions[0] as string;
  const allocateMs = timeMs(() => {
    for (let shardId = 0; shardId < shards; shardId++)
      subject.handle(requester, { type: 'GetShardHome', typeName: 'T', shardId });
    for (const { to, message } of ctx.take())
      if (message.type === 'HostShard')
        subject.handle(to, { type: 'ShardStarted', typeName: 'T', shardId: message.shardId });
  });
  const allocateBaseline = strategyAlone(
    shards,
    members.map((m) => m.address),
  );
  const drained = regions[REGIONS - 1] as string;
  const moved = subject.locations().find((l) => l.address === drained)?.shards.length ?? 0;
  const drainMs = timeMs(() => drain(subject, ctx, drained, regions));
  const drainBaseline = strategyAlone(
    moved,
    members.slice(0, -1).map((m) => m.address),
  );
  subject.stop();
  return [
    { phase: 'allocate', shards, coordinatorUs: (allocateMs * 1000) / shards, strategyUs: allocateBaseline },
    { phase: 'drain', shards: moved, coordinatorUs: (drainMs * 1000) / moved, strategyUs: drainBaseline },
  ];
}

type Coordinator = ReturnType<typeof startedCoordinator>['subject'];
type Context = ReturnType<typeof startedCoordinator>['ctx'];

/** Drains `region` and answers every message of the protocol until no hand-off is left. */
function drain(subject: Coordinator, ctx: Context, region: string, regions: readonly string[]): void {
  subject.handle(regions[0] as string, { type: 'DrainRegion', typeName: 'T', requestId: 1, region });
  for (let sent = ctx.take(); sent.length > 0; sent = ctx.take()) {
    for (const { to, message } of sent) {
      const answer = answerOf(message);
      if (answer !== undefined) subject.handle(to, answer);
    }
  }
}

function answerOf(message: ShardingMessage): TypedShardingMessage | undefined {
  switch (message.type) {
    case 'BeginHandOff':
      return { type: 'BeginHandOffAck', typeName: 'T', shardId: message.shardId };
    case 'HandOff':
      return { type: 'ShardStopped', typeName: 'T', shardId: message.shardId, handOffId: message.handOffId };
    case 'HostShard':
      return { type: 'ShardStarted', typeName: 'T', shardId: message.shardId };
    default:
      return undefined;
  }
}

/** Microseconds per shard of least-shard's allocate alone, giving `shards` shards homes one by one. */
function strategyAlone(shards: number, candidates: NodeAddress[]): number {
  const strategy = new LeastShardAllocationStrategy();
  const map = new Map(candidates.map((a) => [a.toString(), new Set<number>()]));
  const ms = timeMs(() => {
    for (let shardId = 0; shardId < shards; shardId++) {
      const home = strategy.allocate(shardId, candidates, map);
      map.get(home.toString())?.add(shardId);
    }
  });
  return (ms * 1000) / shards;
}

function report(figures: readonly PhaseFigures[]): ScenarioResult {
  const table: Table = {
    title: `Scenario 13: coordinator cost (${REGIONS} regions, in one process)`,
    headers: ['phase', 'shards', 'coordinator us/shard', 'strategy alone us/shard', 'ratio'],
    rows: figures.map((f) => [
      f.phase,
      String(f.shards),
      fmt(f.coordinatorUs),
      fmt(f.strategyUs),
      fmtRatio(ratio(f.coordinatorUs, f.strategyUs)),
    ]),
    note:
      'allocate: GetShardHome then ShardStarted for every shard. drain: DrainRegion of one region, every ' +
      'BeginHandOff acknowledged, every HandOff answered with ShardStopped, every new HostShard with ShardStarted. ' +
      'Fastest of several rounds; the strategy alone gives the same number of shards homes over the same candidates.',
  };
  return {
    id: '13',
    title: 'Coordinator cost',
    tables: [table],
    data: figures,
    headlines: figures.map(
      (f) =>
        `S13 ${f.phase}: ${fmt(f.coordinatorUs)} us per shard in the coordinator, ${fmtRatio(ratio(f.coordinatorUs, f.strategyUs))} of the strategy alone`,
    ),
    panels: [],
  };
}
