// A hand-off's state straight from the old host to the new home (protocol 10), on the coordinator's side: the
// HandOff names the home the strategy gives the shard (`to`), the coordinator holds none of the state and its
// HostShard names the transfer; the old host's copy is released once the new home started the shard. Should the
// shard go elsewhere after all, the old host is asked to send its copy there; a home on the old host starts from
// its own copy; a peer before protocol 10 gets today's relay; a start unconfirmed for a whole retry interval asks
// the old host to send its copy again (chunks lost with a connection).
import { describe, expect, it } from 'vitest';
import type { ShardingMessage } from '../../src/sharding/protocol/messages.js';
import type { CoordinatorConfig } from '../../src/sharding/coordinator/shard-coordinator.js';
import { LeastShardAllocationStrategy, type AllocationStrategy } from '../../src/sharding/strategies/index.js';
import { address, member, registration, startedCoordinator, type Sent } from './coordinator-fakes.js';

const [A, B, C] = [address(1), address(2), address(3)];
type Message<T extends ShardingMessage['type']> = Extract<ShardingMessage, { type: T }>;

/**
 * A coordinator on A, shards 4 to 6 running on B (so least-shard sends shard 4 to A, then C), C a third region; the
 * hand-off of shard 4 up to its HandOff.
 */
function movingShard4(protocolOf: (node: string) => number = () => 10, settings: Partial<CoordinatorConfig> = {}) {
  const started = rebalancing4(protocolOf, settings);
  const { subject, ctx } = started;
  for (const region of [A, B, C]) subject.handle(region, { type: 'BeginHandOffAck', typeName: 'T', shardId: 4 });
  const handOff = of(ctx.take(), 'HandOff')[0];
  if (handOff === undefined) throw new Error('no HandOff');
  expect(handOff.to).toBe(B);
  return { ...started, handOff: handOff.message };
}

/** A coordinator on A, each region on `protocolOf`'s version, shards 4 to 6 running on B; shard 4 rebalanced. */
function rebalancing4(protocolOf: (node: string) => number, settings: Partial<CoordinatorConfig> = {}) {
  const config = { retryIntervalMs: 100_000, coordinatorWarmupMs: 0, rebalanceIntervalMs: 1_000_000 };
  const started = startedCoordinator([member(1), member(2), member(3)], config, settings);
  const { subject, ctx } = started;
  ctx.protocolWith = protocolOf;
  subject.handle(B, registration([4, 5, 6]));
  ctx.take();
  subject.handle(A, { type: 'RebalanceNow', typeName: 'T', requestId: 1, shardIds: [4] });
  return started;
}

function of<T extends ShardingMessage['type']>(sent: Sent[], type: T): Array<{ to: string; message: Message<T> }> {
  return sent.flatMap((s) => (s.message.type === type ? [{ to: s.to, message: s.message as Message<T> }] : []));
}

describe('a hand-off whose state goes straight to the new home (protocol 10)', () => {
  it('names the new home in the HandOff, holds nothing, and starts the shard there with the transfer named', () => {
    const { subject, ctx, handOff } = movingShard4();
    const { to, handOffId } = handOff;
    expect(to).toBe(A);
    subject.handle(B, { type: 'ShardStopped', typeName: 'T', shardId: 4, handOffId });
    const after = ctx.take();
    expect(of(after, 'HostShard')).toEqual([
      { to, message: { type: 'HostShard', typeName: 'T', shardId: 4, transferId: handOffId } },
    ]);
    expect(of(after, 'RestoreShardState')).toEqual([]);
    expect(subject.stats().handOffStateBytes).toBe(0);
    // The old host keeps its copy until the new home says it started the shard.
    expect(of(after, 'ShardStateReleased')).toEqual([]);
    subject.handle(B, { type: 'ShardStateHeld', typeName: 'T', shardId: 4, handOffId });
    expect(of(ctx.take(), 'ShardStateReleased')).toEqual([]);
    subject.handle(to as string, { type: 'ShardStarted', typeName: 'T', shardId: 4 });
    expect(of(ctx.take(), 'ShardStateReleased')).toEqual([
      { to: B, message: { type: 'ShardStateReleased', typeName: 'T', shardId: 4, handOffId } },
    ]);
  });

  it('asks the old host for its copy again once the start went a whole retry interval unconfirmed', () => {
    const { subject, ctx, scheduler, handOff } = movingShard4();
    const { to, handOffId } = handOff;
    subject.handle(B, { type: 'ShardStopped', typeName: 'T', shardId: 4, handOffId });
    ctx.take();
    scheduler.advance(100_000);
    expect(of(ctx.take(), 'HostShard')).toEqual([]);
    scheduler.advance(100_000);
    const resent = ctx.take();
    expect(of(resent, 'HandOff')).toEqual([
      { to: B, message: { type: 'HandOff', typeName: 'T', shardId: 4, handOffId, to } },
    ]);
    expect(of(resent, 'HostShard').map((s) => [s.to, s.message.transferId])).toEqual([[to, handOffId]]);
  });

  it('sends the old host copy to another home when the one named is gone by the stop', () => {
    const { subject, ctx, handOff } = movingShard4();
    const { to, handOffId } = handOff;
    expect(to).toBe(A);
    const other = C;
    ctx.members = ctx.members.filter((m) => m.address.toString() !== to);
    subject.onMembershipChange();
    ctx.take();
    subject.handle(B, { type: 'ShardStopped', typeName: 'T', shardId: 4, handOffId });
    const after = ctx.take();
    expect(of(after, 'HandOff')).toEqual([
      { to: B, message: { type: 'HandOff', typeName: 'T', shardId: 4, handOffId, to: other } },
    ]);
    expect(of(after, 'HostShard').map((s) => [s.to, s.message.transferId])).toEqual([[other, handOffId]]);
  });

  it('starts the shard on the old host from its own copy when no other region may take it', () => {
    const { subject, ctx, handOff } = movingShard4();
    const { handOffId } = handOff;
    ctx.members = ctx.members.filter((m) => m.address.toString() === B || m.address.toString() === A);
    subject.onMembershipChange();
    // A is the coordinator's node: it leaves the candidates by leaving gracefully.
    subject.handle(A, { type: 'GracefulShutdownRequest', typeName: 'T' });
    ctx.take();
    subject.handle(B, { type: 'ShardStopped', typeName: 'T', shardId: 4, handOffId });
    const after = ctx.take();
    expect(of(after, 'HandOff')).toEqual([]);
    expect(of(after, 'HostShard').map((s) => [s.to, s.message.transferId])).toEqual([[B, handOffId]]);
  });

  it('asks a leaving old host for its copy when no region may take the shard, then lets it go', () => {
    const { subject, ctx, handOff } = movingShard4();
    const { handOffId } = handOff;
    // Every region leaves (a cluster stopping): the HandOff named A, which no longer may take the shard.
    for (const region of [A, B, C]) subject.handle(region, { type: 'GracefulShutdownRequest', typeName: 'T' });
    subject.handle(B, { type: 'ShardStopped', typeName: 'T', shardId: 4, handOffId });
    expect(of(ctx.take(), 'HostShard')).toEqual([]);
    // B keeps its copy for a home that may never come: its reminder makes the coordinator ask for it instead.
    subject.handle(B, { type: 'ShardStateHeld', typeName: 'T', shardId: 4, handOffId });
    const asked = of(ctx.take(), 'HandOff');
    expect(asked.map((s) => [s.to, s.message.to])).toEqual([[B, undefined]]);
    const fetchId = asked[0]?.message.handOffId as number;
    const entities = [{ entityId: 'e', state: new Uint8Array([1]) }];
    const chunk = { typeName: 'T', shardId: 4, handOffId: fetchId, part: 0, parts: 1, entities };
    subject.handle(B, { type: 'ShardStateChunk', ...chunk });
    subject.handle(B, { type: 'ShardStopped', typeName: 'T', shardId: 4, handOffId: fetchId });
    expect(of(ctx.take(), 'ShardStateReleased')).toContainEqual({
      to: B,
      message: { type: 'ShardStateReleased', typeName: 'T', shardId: 4, handOffId: fetchId },
    });
    expect(subject.stats().handOffStateBytes).toBeGreaterThan(0);
  });

  it('asks a leaving old host for its copy alike when it names the copy registering again', () => {
    const { subject, ctx, handOff } = movingShard4();
    const { handOffId } = handOff;
    for (const region of [A, B, C]) subject.handle(region, { type: 'GracefulShutdownRequest', typeName: 'T' });
    subject.handle(B, { type: 'ShardStopped', typeName: 'T', shardId: 4, handOffId });
    ctx.take();
    // The same reminder as ShardStateHeld, in the registration's list of kept copies: one rule decides both.
    subject.handle(B, registration([], { retained: [{ shardId: 4, handOffId }] }));
    expect(of(ctx.take(), 'HandOff').map((s) => [s.to, s.message.to])).toEqual([[B, undefined]]);
  });

  it('leaves the copy with an old host that stays, even while the shard has no home', () => {
    let homeless = false;
    const least = new LeastShardAllocationStrategy();
    const strategy: AllocationStrategy = {
      allocate: (shardId, candidates, shards) =>
        homeless && shardId === 4 ? undefined : least.allocate(shardId, candidates, shards),
      rebalance: (shards, candidates, inProgress) => least.rebalance(shards, candidates, inProgress),
    };
    const { subject, ctx, handOff } = movingShard4(() => 10, { strategy });
    homeless = true;
    subject.handle(B, { type: 'ShardStopped', typeName: 'T', shardId: 4, handOffId: handOff.handOffId });
    expect(of(ctx.take(), 'HostShard')).toEqual([]);
    subject.handle(B, { type: 'ShardStateHeld', typeName: 'T', shardId: 4, handOffId: handOff.handOffId });
    expect(of(ctx.take(), 'HandOff')).toEqual([]);
  });

  it('relays as before when the old host or the new home agreed an older protocol', () => {
    for (const older of [B, 'home']) {
      const { subject, ctx, handOff } = movingShard4((node) =>
        node === older || (older === 'home' && node !== B) ? 9 : 10,
      );
      expect(handOff.to).toBeUndefined();
      subject.handle(B, { type: 'ShardStopped', typeName: 'T', shardId: 4, handOffId: handOff.handOffId });
      expect(of(ctx.take(), 'HostShard').map((s) => s.message.transferId)).toEqual([undefined]);
    }
  });
});

describe("the owner told the shard's likely next home as the hand-off begins (protocol 12)", () => {
  /** Shard 4's BeginHandOffs and its HandOff, each region on `protocolOf`'s version. */
  function begun(protocolOf: (node: string) => number) {
    const { subject, ctx } = rebalancing4(protocolOf);
    const begins = of(ctx.take(), 'BeginHandOff');
    for (const region of [A, B, C]) subject.handle(region, { type: 'BeginHandOffAck', typeName: 'T', shardId: 4 });
    return { begins, handOff: of(ctx.take(), 'HandOff')[0]?.message };
  }

  it("names the coming HandOff and the home to the owner alone, the HandOff's own id and home the same", () => {
    const { begins, handOff } = begun(() => 12);
    const plain = { type: 'BeginHandOff', typeName: 'T', shardId: 4 };
    expect(begins.filter((s) => s.to !== B).map((s) => s.message)).toEqual([plain, plain]);
    const owner = begins.find((s) => s.to === B)?.message;
    expect(owner).toEqual({ ...plain, handOffId: handOff?.handOffId, to: A });
    expect(handOff).toMatchObject({ to: A });
  });

  it('names another home in the HandOff when the one told starts leaving meanwhile: the state would leave with it', () => {
    const { subject, ctx } = rebalancing4(() => 12);
    expect(of(ctx.take(), 'BeginHandOff').find((s) => s.to === B)?.message.to).toBe(A);
    subject.handle(A, { type: 'GracefulShutdownRequest', typeName: 'T' });
    for (const region of [A, B, C]) subject.handle(region, { type: 'BeginHandOffAck', typeName: 'T', shardId: 4 });
    expect(of(ctx.take(), 'HandOff').map((s) => s.message.to)).toEqual([C]);
  });

  it('tells an owner on protocol 11 nothing more, and names no home a region cannot take state at', () => {
    for (const protocolOf of [(node: string) => (node === B ? 11 : 12), (node: string) => (node === B ? 12 : 9)]) {
      const { begins } = begun(protocolOf);
      expect(begins.map((s) => s.message)).toEqual(
        [A, B, C].map(() => ({ type: 'BeginHandOff', typeName: 'T', shardId: 4 })),
      );
    }
  });
});
