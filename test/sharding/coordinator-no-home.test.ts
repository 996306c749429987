// The coordinator with a strategy that may answer "no home now" (a require pin no candidate satisfies): the
// shard stays unallocated, requests wait, and it is allocated when membership, registrations or placements
// change, or when the strategy's next change (a pin expiring) comes due; never in a loop of its own.
import { describe, expect, it } from 'vitest';
import type { NodeAddress } from '../../src/cluster/address.js';
import type { AllocationStrategy } from '../../src/sharding/strategies/index.js';
import {
  ManualScheduler,
  address,
  member,
  registration,
  startedCoordinator,
  type FakeContext,
} from './coordinator-fakes.js';

const A = address(1);
const B = address(2);
const C = address(3);

/** Allows only the nodes in `allowed` for every shard; counts its calls; expires at `expiresAt` if set. */
class RuleStrategy implements AllocationStrategy {
  allowed = new Set<string>();
  moves = new Set<number>();
  allocateCalls = 0;
  expiresAt: number | undefined;
  constructor(private readonly scheduler: ManualScheduler) {}
  allocate(_shardId: number, candidates: ReadonlyArray<NodeAddress>): NodeAddress | undefined {
    this.allocateCalls++;
    if (this.expiresAt !== undefined && this.scheduler.now() >= this.expiresAt) return candidates[0];
    return candidates.find((c) => this.allowed.has(c.toString()));
  }
  rebalance(): ReadonlySet<number> {
    const moves = this.moves;
    this.moves = new Set();
    return moves;
  }
  nextChangeInMs(): number | undefined {
    if (this.expiresAt === undefined) return undefined;
    const left = this.expiresAt - this.scheduler.now();
    return left > 0 ? left : undefined;
  }
}

function coordinator(members = [member(1), member(2)]) {
  const scheduler = new ManualScheduler();
  const strategy = new RuleStrategy(scheduler);
  const config = {
    retryIntervalMs: 100,
    coordinatorWarmupMs: 500,
    rebalanceIntervalMs: 1_000_000,
    handOffTimeoutMs: 5_000,
  };
  return { ...startedCoordinator(members, config, { strategy }, scheduler), strategy };
}

const homes = (ctx: FakeContext) =>
  ctx
    .take()
    .flatMap((s) =>
      s.message.type === 'ShardHome' || s.message.type === 'HostShard'
        ? [[s.to, s.message.type, s.message.shardId]]
        : [],
    );

describe('ShardCoordinator: no home now', () => {
  it('leaves the shard unallocated, asks again only on changes, and allocates it on the first allowed region', () => {
    const { subject, ctx, scheduler, strategy } = coordinator();
    subject.handle(A, { type: 'GetShardHome', typeName: 'T', shardId: 4 });
    expect(homes(ctx)).toEqual([]);
    expect(subject.stats()).toMatchObject({ allocatedShards: 0, waitingShards: 1 });
    const calls = strategy.allocateCalls;
    // Time alone (retry ticks, no change) asks nothing.
    scheduler.advance(10_000);
    expect(strategy.allocateCalls).toBe(calls);
    // A membership change that allows nothing: asked once more, still no home.
    subject.onMembershipChange();
    expect(strategy.allocateCalls).toBe(calls + 1);
    expect(homes(ctx)).toEqual([]);
    // A new node that the rule allows registers: allocated there and announced to every region.
    ctx.members = [member(1), member(2), member(3)];
    strategy.allowed.add(C);
    subject.handle(C, registration());
    expect(homes(ctx)).toEqual([
      [C, 'HostShard', 4],
      [A, 'ShardHome', 4],
      [B, 'ShardHome', 4],
      [C, 'ShardHome', 4],
    ]);
    expect(subject.locations()).toContainEqual({ address: C, shards: [4] });
    expect(subject.stats().waitingShards).toBe(0);
  });

  it('asks again when placements change (rebalanceSoon)', () => {
    const { subject, ctx, strategy } = coordinator();
    subject.handle(A, { type: 'GetShardHome', typeName: 'T', shardId: 2 });
    strategy.allowed.add(B);
    subject.rebalanceSoon();
    expect(homes(ctx)).toContainEqual([B, 'HostShard', 2]);
  });

  it('a shard handed off to a rule nobody satisfies waits without a home, then is allocated', () => {
    const { subject, ctx, strategy } = coordinator();
    strategy.allowed.add(A);
    subject.handle(A, { type: 'GetShardHome', typeName: 'T', shardId: 1 });
    expect(subject.locations()).toContainEqual({ address: A, shards: [1] });
    subject.handle(A, { type: 'ShardStarted', typeName: 'T', shardId: 1 });
    strategy.allowed.clear();
    strategy.moves = new Set([1]);
    subject.rebalanceSoon();
    for (const region of [A, B]) subject.handle(region, { type: 'BeginHandOffAck', typeName: 'T', shardId: 1 });
    const handOff = ctx.take().find((s) => s.message.type === 'HandOff');
    expect(handOff?.to).toBe(A);
    const handOffId = handOff?.message.type === 'HandOff' ? handOff.message.handOffId : -1;
    subject.handle(A, { type: 'ShardStopped', typeName: 'T', shardId: 1, handOffId });
    expect(homes(ctx)).toEqual([]);
    expect(subject.stats().allocatedShards).toBe(0);
    strategy.allowed.add(B);
    subject.onMembershipChange();
    expect(homes(ctx)).toContainEqual([B, 'HostShard', 1]);
  });

  it("runs a rebalance round and asks again at the strategy's next change, not at the next tick", () => {
    const { subject, ctx, scheduler, strategy } = coordinator();
    strategy.expiresAt = scheduler.now() + 3_000;
    subject.rebalanceSoon();
    subject.handle(A, { type: 'GetShardHome', typeName: 'T', shardId: 6 });
    expect(homes(ctx)).toEqual([]);
    const rounds = subject.stats().rebalanceRounds;
    scheduler.advance(2_999);
    expect(homes(ctx)).toEqual([]);
    scheduler.advance(1);
    expect(subject.stats().rebalanceRounds).toBe(rounds + 1);
    expect(homes(ctx)).toContainEqual([A, 'HostShard', 6]);
    // Nothing left to expire: no further timer of its own.
    const pending = scheduler.pending;
    scheduler.advance(100_000);
    expect(scheduler.pending).toBe(pending);
  });

  it('stop cancels the expiry timer', () => {
    const { subject, scheduler, strategy } = coordinator();
    strategy.expiresAt = scheduler.now() + 3_000;
    subject.rebalanceSoon();
    subject.stop();
    expect(scheduler.pending).toBe(0);
  });
});
