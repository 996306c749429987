// A removed member's shards get their new homes in the round that removes its region (issue 26: "re-home the
// dead node's shards in one round and deliver their buffered messages at once"), through the strategy and the
// cordons as any allocation, and every region hears of each new home (a ShardHome flushes its buffer) without
// asking first: with no down-removal margin, and when the margin's hand-offs timed out before it ended.
import { describe, expect, it } from 'vitest';
import { testAddress } from '../support/members.js';
import type { CordonView } from '../../src/sharding/placements/cordon-view.js';
import * as strategies from '../../src/sharding/strategies/index.js';
import { address, member, registration, startedCoordinator, type FakeContext } from './coordinator-fakes.js';

const A = address(1);
const B = address(2);
const C = address(3);
const D = address(4);

/** D is cordoned; shard 2 is pinned to C; the rest go to the least-loaded candidate. */
function coordinator(config: { downRemovalMarginMs: number; handOffTimeoutMs?: number }) {
  const cordons: CordonView = { isCordoned: (key) => key === D, list: () => [{ address: D }] };
  const pins = new Map([[2, strategies.PlacementPin.of(testAddress(3))]]);
  const fallback = new strategies.LeastShardAllocationStrategy();
  const strategy = strategies.externalAllocationStrategy(fallback, () => ({ explicitPlacements: pins }));
  const members = [member(1), member(2), member(3), member(4)];
  const started = startedCoordinator(
    members,
    { retryIntervalMs: 100_000, coordinatorWarmupMs: 500, rebalanceIntervalMs: 1_000_000, ...config },
    { strategy, cordons },
  );
  // B hosts shards 1, 2 and 3 (started there before this coordinator's time); C hosts 4.
  started.subject.handle(B, registration([1, 2, 3]));
  started.subject.handle(C, registration([4]));
  started.ctx.take();
  return { ...started, down: () => (started.ctx.members = [member(1), member(2, 'down'), member(3), member(4)]) };
}

/** The HostShard and ShardHome messages sent since the last call, as [to, type, shard, home]. */
function homes(ctx: FakeContext): Array<[string, string, number, string?]> {
  return ctx.take().flatMap((s): Array<[string, string, number, string?]> => {
    if (s.message.type === 'HostShard') return [[s.to, 'HostShard', s.message.shardId]];
    if (s.message.type === 'ShardHome') return [[s.to, 'ShardHome', s.message.shardId, s.message.region]];
    return [];
  });
}

/** What the round must send: each shard hosted on its new home, and announced to every registered region. */
const rehomed: Array<[string, string, number, string?]> = [
  [A, 'HostShard', 1],
  ...[A, C, D].map((to): [string, string, number, string] => [to, 'ShardHome', 1, A]),
  [C, 'HostShard', 2],
  ...[A, C, D].map((to): [string, string, number, string] => [to, 'ShardHome', 2, C]),
  [A, 'HostShard', 3],
  ...[A, C, D].map((to): [string, string, number, string] => [to, 'ShardHome', 3, A]),
];

describe("ShardCoordinator: a removed member's shards", () => {
  it('are all re-homed in the round that removes the region when no margin runs, before anyone asks', () => {
    const { subject, ctx, down } = coordinator({ downRemovalMarginMs: 0 });
    down();
    subject.onMembershipChange();
    // The pin sends 2 to C; the cordoned D gets nothing; 1 and 3 go to A, the least loaded.
    expect(homes(ctx)).toEqual(rehomed);
    expect(subject.locations()).toEqual([
      { address: A, shards: [1, 3] },
      { address: C, shards: [2, 4] },
      { address: D, shards: [] },
    ]);
    expect(subject.stats()).toMatchObject({ allocations: 3, waitingShards: 0 });
  });

  it('are all re-homed when the margin ends, even after their hand-offs timed out within it', () => {
    const { subject, ctx, scheduler, down } = coordinator({ downRemovalMarginMs: 2_000, handOffTimeoutMs: 500 });
    down();
    subject.onMembershipChange();
    scheduler.advance(500);
    // Timed out: the shards stay on B for now, and the regions are told so again.
    expect(subject.stats().handOffsTimedOut).toBe(3);
    expect(homes(ctx).filter(([, type]) => type === 'HostShard')).toEqual([]);
    scheduler.advance(1_500);
    expect(homes(ctx)).toEqual(rehomed);
    expect(subject.locations().find((l) => l.address === B)).toBeUndefined();
  });

  it('wait for the gate like any other when an unregistered member is unreachable, then are announced', () => {
    const { subject, ctx, down } = coordinator({ downRemovalMarginMs: 0 });
    const E = address(5);
    down();
    ctx.members.push({ ...member(5), reachable: false });
    subject.onMembershipChange();
    expect(homes(ctx)).toEqual([]);
    // The unreachable member registers: the gate opens, and each held shard is allocated and announced to all.
    ctx.members[4] = member(5);
    subject.handle(E, registration());
    const sent = homes(ctx);
    for (const shardId of [1, 2, 3]) {
      const host = sent.filter(([, type, id]) => type === 'HostShard' && id === shardId).map(([to]) => to);
      expect(host).toHaveLength(1);
      const told = sent.filter(([, type, id]) => type === 'ShardHome' && id === shardId);
      expect(told).toEqual([A, C, D, E].map((to) => [to, 'ShardHome', shardId, host[0]]));
    }
    expect(subject.locations().find((l) => l.address === D)?.shards).toEqual([]);
  });
});
