// The coordinator as a whole, on a recorded ShardingContext and a manual scheduler: what it sends for each
// message, the down-removal margin driven by the injected clock, and that stop leaves no timer behind.
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logging.js';
import { type CoordinatorEvents, ShardCoordinator } from '../../src/sharding/coordinator/shard-coordinator.js';
import { LeastShardAllocationStrategy } from '../../src/sharding/strategies/index.js';
import { FakeContext, ManualScheduler, address, member, registration } from './coordinator-fakes.js';

const A = address(1);
const B = address(2);
const C = address(3);

function coordinator(members = [member(1), member(2)], config = {}, events: CoordinatorEvents = {}) {
  const scheduler = new ManualScheduler();
  const ctx = new FakeContext(
    members,
    {
      retryIntervalMs: 100,
      coordinatorWarmupMs: 500,
      rebalanceIntervalMs: 1_000_000,
      handOffTimeoutMs: 5_000,
      ...config,
    },
    scheduler,
  );
  const subject = new ShardCoordinator(
    { typeName: 'T', numberOfShards: 10, role: undefined, strategy: new LeastShardAllocationStrategy(), events },
    ctx,
    silentLogger(),
  );
  return { subject, ctx, scheduler };
}

function register(subject: ShardCoordinator, from: string, shards: number[] = []): void {
  subject.handle(from, registration(shards));
}

describe('ShardCoordinator (dispatch)', () => {
  it('asks every live member to register, and is warm once they have', () => {
    const { subject, ctx } = coordinator([member(1), member(2), member(3, 'removed')]);
    subject.start();
    expect(ctx.take().map((s) => [s.to, s.message.type])).toEqual([
      [A, 'RegisterRequired'],
      [B, 'RegisterRequired'],
    ]);
    register(subject, A, [0]);
    expect(subject.stats().warm).toBe(false);
    register(subject, B);
    expect(subject.stats()).toMatchObject({ warm: true, regions: 2, allocatedShards: 1 });
    expect(subject.locations()).toEqual([
      { address: A, shards: [0] },
      { address: B, shards: [] },
    ]);
  });

  it('answers GetShardHome with the known home, or allocates and tells the region to host it', () => {
    const { subject, ctx } = coordinator();
    subject.start();
    register(subject, A, [0]);
    register(subject, B);
    ctx.take();
    subject.handle(B, { type: 'GetShardHome', typeName: 'T', shardId: 0 });
    subject.handle(A, { type: 'GetShardHome', typeName: 'T', shardId: 1 });
    expect(ctx.take()).toEqual([
      { to: B, message: { type: 'ShardHome', typeName: 'T', shardId: 0, region: A } },
      { to: B, message: { type: 'HostShard', typeName: 'T', shardId: 1 } },
      { to: A, message: { type: 'ShardHome', typeName: 'T', shardId: 1, region: B } },
    ]);
    expect(subject.stats().allocations).toBe(1);
  });

  it("keeps a downed member's shards through the margin on the injected clock, then gives them a new home", () => {
    const { subject, ctx, scheduler } = coordinator([member(1), member(2)], { downRemovalMarginMs: 2_000 });
    subject.start();
    register(subject, A);
    register(subject, B, [5]);
    ctx.take();
    ctx.members = [member(1), member(2, 'down')];
    subject.onMembershipChange();
    expect(ctx.take()).toEqual([{ to: B, message: expect.objectContaining({ type: 'HandOff', shardId: 5 }) }]);
    subject.handle(A, { type: 'GetShardHome', typeName: 'T', shardId: 5 });
    scheduler.advance(1_950);
    expect(ctx.take().filter((s) => s.message.type === 'ShardHome' || s.message.type === 'HostShard')).toEqual([]);
    scheduler.advance(50);
    expect(ctx.take().filter((s) => s.message.type === 'HostShard')).toEqual([
      { to: A, message: { type: 'HostShard', typeName: 'T', shardId: 5 } },
    ]);
    expect(subject.locations()).toEqual([{ address: A, shards: [5] }]);
  });

  it('a region that stopped a shard it was told to hand off frees it for a new home', () => {
    const { subject, ctx } = coordinator([member(1), member(2), member(3)]);
    subject.start();
    register(subject, A, [0]);
    register(subject, B);
    register(subject, C);
    subject.handle(A, { type: 'GracefulShutdownRequest', typeName: 'T' });
    for (const from of [A, B, C]) subject.handle(from, { type: 'BeginHandOffAck', typeName: 'T', shardId: 0 });
    const handOff = ctx.take().find((s) => s.message.type === 'HandOff');
    if (handOff?.message.type !== 'HandOff') throw new Error('no HandOff sent to the leaving region');
    subject.handle(A, { type: 'ShardStopped', typeName: 'T', shardId: 0, handOffId: handOff.message.handOffId });
    expect(subject.stats()).toMatchObject({ handOffsStarted: 1, handOffsCompleted: 1, rebalanceInProgress: 0 });
    // The leaving region is no candidate any more.
    expect(subject.locations().find((l) => l.shards.includes(0))?.address).not.toBe(A);
  });

  it('reports each completed hand-off with its duration on the scheduler clock, and each rebalance round', () => {
    const completed: Array<[string, number]> = [];
    const rounds: string[] = [];
    const { subject, ctx, scheduler } = coordinator(
      [member(1), member(2)],
      { rebalanceIntervalMs: 10_000 },
      {
        onHandOffCompleted: (type, seconds) => completed.push([type, seconds]),
        onRebalanceRound: (type) => rounds.push(type),
      },
    );
    subject.start();
    register(subject, A, [0]);
    register(subject, B);
    subject.handle(A, { type: 'RebalanceNow', typeName: 'T', requestId: 1, shardIds: [0] });
    for (const from of [A, B]) subject.handle(from, { type: 'BeginHandOffAck', typeName: 'T', shardId: 0 });
    scheduler.advance(250);
    const handOff = ctx.take().find((s) => s.message.type === 'HandOff');
    if (handOff?.message.type !== 'HandOff') throw new Error('no HandOff sent to the owner');
    expect(completed).toEqual([]);
    subject.handle(A, { type: 'ShardStopped', typeName: 'T', shardId: 0, handOffId: handOff.message.handOffId });
    expect(completed).toEqual([['T', 0.25]]);
    expect(rounds).toEqual([]);
    scheduler.advance(10_000);
    expect(rounds).toEqual(['T']);
  });

  it('stop cancels every timer it owns (intervals, warm-up, margin, hand-offs) and ignores later messages', () => {
    const { subject, ctx, scheduler } = coordinator([member(1), member(2), member(3, 'down')], {
      downRemovalMarginMs: 2_000,
    });
    subject.start();
    register(subject, A, [0]);
    subject.handle(A, { type: 'RebalanceNow', typeName: 'T', requestId: 1, shardIds: [0] });
    expect(scheduler.pending).toBeGreaterThanOrEqual(4);
    subject.stop();
    expect(scheduler.pending).toBe(0);
    ctx.take();
    register(subject, B);
    scheduler.advance(60_000);
    expect(ctx.take()).toEqual([]);
  });
});
