// A coordinator that takes over after a downing (issue "a new coordinator skips the down-removal margin"):
// shards nobody registered wait out the rest of the margin, measured from when the downing was decided
// (`downedAtMs`); an older member gone from the view is dated from what the cluster saw of its leaving
// (`Membership.departed`), and gets a full margin from the coordinator's start when the cluster saw nothing.
// Driven on a manual clock; the coordinator's sends are recorded.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DepartedMember, MemberInfo, Membership } from '../../src/cluster/member.js';
import { olderMembersGoneSince } from '../../src/sharding/coordinator/membership.js';
import { ShardCoordinator } from '../../src/sharding/coordinator/shard-coordinator.js';
import { LeastShardAllocationStrategy } from '../../src/sharding/strategies/index.js';
import { silentLogger } from '../../src/logging.js';
import { staticMembership, testAddress } from '../support/members.js';
import {
  FakeContext,
  ManualScheduler,
  address,
  member,
  registration,
  startedCoordinator,
} from './coordinator-fakes.js';

const MARGIN_MS = 2_000;

/** A coordinator on the first member of `members`, started, with every live region registered without shards. */
function takeOver(members: MemberInfo[]) {
  const { subject, ctx, scheduler } = startedCoordinator(members, {
    retryIntervalMs: 100_000,
    coordinatorWarmupMs: 500,
    rebalanceIntervalMs: 1_000_000,
    downRemovalMarginMs: MARGIN_MS,
  });
  // The manual clock does not move while the coordinator starts and the regions register.
  const startedAt = scheduler.now();
  /** Asks for a never-heard-of shard's home, then returns when (on the manual clock) a region is told to host it. */
  const allocatedAt = (from: string, shardId: number, limitMs = 10_000): number | undefined => {
    subject.handle(from, { type: 'GetShardHome', typeName: 'T', shardId });
    for (let waited = 0; waited <= limitMs; waited += 10) {
      if (ctx.take().some((s) => s.message.type === 'HostShard' && s.message.shardId === shardId))
        return scheduler.now() - startedAt;
      scheduler.advance(10);
    }
    return undefined;
  };
  return { subject, ctx, scheduler, startedAt, allocatedAt };
}

function downed(port: number, downedAtMs?: number): MemberInfo {
  return downedAtMs === undefined ? member(port, 'down') : { ...member(port, 'down'), downedAtMs };
}

describe('a new coordinator and the down-removal margin', () => {
  it('waits out a full margin from its start when older members are gone from the view (removed before it started)', () => {
    // n1 and n2 (up numbers 1, 2) were downed and removed before n3's coordinator started: no record is left.
    const { allocatedAt, subject } = takeOver([member(3), member(4), member(5)]);
    expect(subject.stats().warm).toBe(true);
    const at = allocatedAt(address(4), 0);
    expect(at).toBeDefined();
    expect(at).toBeGreaterThanOrEqual(MARGIN_MS);
  });

  it('waits only the rest of the margin, measured from when the downing was decided', () => {
    const scheduler = new ManualScheduler();
    // Decided 1,500 ms before this coordinator starts (the manual clock starts at the same time in takeOver).
    const { allocatedAt } = takeOver([member(2), downed(1, scheduler.now() - 1_500), member(3)]);
    const at = allocatedAt(address(3), 0);
    expect(at).toBeGreaterThanOrEqual(MARGIN_MS - 1_500);
    expect(at).toBeLessThan(MARGIN_MS);
  });

  it('does not wait for a downing decided longer than the margin ago', () => {
    const scheduler = new ManualScheduler();
    const { allocatedAt } = takeOver([member(2), downed(1, scheduler.now() - 5_000), member(3)]);
    expect(allocatedAt(address(3), 0)).toBe(0);
  });

  it('runs the margin from its own start for a downing without a decision time, or one ahead of its clock', () => {
    const scheduler = new ManualScheduler();
    for (const member1 of [downed(1), downed(1, scheduler.now() + 60_000)]) {
      const { allocatedAt } = takeOver([member(2), member1, member(3)]);
      const at = allocatedAt(address(3), 0);
      expect(at).toBeGreaterThanOrEqual(MARGIN_MS);
      expect(at).toBeLessThan(MARGIN_MS + 100);
    }
  });

  it('does not wait when no older member is missing (the first member, or older ones still in the view)', () => {
    expect(takeOver([member(1), member(2)]).allocatedAt(address(2), 0)).toBe(0);
    expect(takeOver([member(2), member(1, 'leaving'), member(3)]).allocatedAt(address(3), 0)).toBe(0);
  });
});

/** A departure of the member on `port` (its up number is its port, as in `member`). */
function departed(port: number, removedAtMs: number, downedAtMs?: number): DepartedMember {
  const base = { address: testAddress(port), upNumber: port, removedAtMs };
  return downedAtMs === undefined ? base : { ...base, downedAtMs };
}

/** A FakeContext whose membership also tells what the cluster saw leave. */
class DepartedContext extends FakeContext {
  override readonly membership: Membership;

  constructor(
    members: MemberInfo[],
    config: ConstructorParameters<typeof FakeContext>[1],
    scheduler: ManualScheduler,
    gone: DepartedMember[],
  ) {
    super(members, config, scheduler);
    this.membership = { ...staticMembership(this.self, () => this.members), departed: () => gone };
  }
}

/** takeOver, with the cluster's departures: when (ms after the start) a never-heard-of shard is allocated. */
function allocatedAfterTakeOver(members: MemberInfo[], gone: (now: number) => DepartedMember[]): number | undefined {
  const scheduler = new ManualScheduler();
  const config = {
    retryIntervalMs: 100_000,
    coordinatorWarmupMs: 500,
    rebalanceIntervalMs: 1_000_000,
    downRemovalMarginMs: MARGIN_MS,
  };
  const ctx = new DepartedContext(members, config, scheduler, gone(scheduler.now()));
  const settings = { typeName: 'T', numberOfShards: 10, role: undefined, strategy: new LeastShardAllocationStrategy() };
  const subject = new ShardCoordinator(settings, ctx, silentLogger());
  subject.start();
  for (const m of members) subject.handle(m.address.toString(), registration());
  ctx.take();
  const startedAt = scheduler.now();
  subject.handle(address(4), { type: 'GetShardHome', typeName: 'T', shardId: 0 });
  for (let waited = 0; waited <= 10_000; waited += 10) {
    if (ctx.take().some((s) => s.message.type === 'HostShard')) return scheduler.now() - startedAt;
    scheduler.advance(10);
  }
  return undefined;
}

describe('a new coordinator and older members the cluster saw leave', () => {
  it('does not wait for older members downed and removed longer than the margin ago', () => {
    const at = allocatedAfterTakeOver([member(3), member(4)], (now) => [
      departed(1, now - 8_000, now - 9_000),
      departed(2, now - 4_000, now - 4_100),
    ]);
    expect(at).toBe(0);
  });

  it('waits the rest of the margin of the latest one, from its decision time', () => {
    const at = allocatedAfterTakeOver([member(3), member(4)], (now) => [
      departed(1, now - 8_000, now - 9_000),
      departed(2, now - 400, now - 500),
    ]);
    expect(at).toBeGreaterThanOrEqual(MARGIN_MS - 500);
    expect(at).toBeLessThan(MARGIN_MS);
  });

  it('dates a departure without a decision time from when the cluster saw it go', () => {
    const at = allocatedAfterTakeOver([member(2), member(4)], (now) => [departed(1, now - 1_200)]);
    expect(at).toBeGreaterThanOrEqual(MARGIN_MS - 1_200);
    expect(at).toBeLessThan(MARGIN_MS);
  });

  it('waits a full margin when one gap is a member the cluster never saw leave', () => {
    // Up number 2 departed long ago; nothing is known of 1.
    const at = allocatedAfterTakeOver([member(3), member(4)], (now) => [departed(2, now - 60_000, now - 61_000)]);
    expect(at).toBeGreaterThanOrEqual(MARGIN_MS);
  });
});

describe('olderMembersGoneSince', () => {
  const NOW = 100_000;

  it('is undefined exactly when no up number below the own one is missing from the view', () => {
    expect(olderMembersGoneSince([member(1), member(2)], [], address(1), NOW)).toBeUndefined();
    expect(olderMembersGoneSince([member(2), member(1, 'down')], [], address(2), NOW)).toBeUndefined();
    expect(olderMembersGoneSince([member(3), member(1, 'down'), member(4)], [], address(3), NOW)).toBe(NOW);
    expect(olderMembersGoneSince([member(3)], [], address(3), NOW)).toBe(NOW);
    expect(olderMembersGoneSince([member(3)], [], address(9), NOW)).toBeUndefined();
  });

  it('dates a gap by its decision, else by its removal, never after now; a departure of another number explains nothing', () => {
    expect(olderMembersGoneSince([member(2)], [departed(1, NOW - 10, NOW - 50)], address(2), NOW)).toBe(NOW - 50);
    expect(olderMembersGoneSince([member(2)], [departed(1, NOW - 10)], address(2), NOW)).toBe(NOW - 10);
    expect(olderMembersGoneSince([member(2)], [departed(1, NOW - 10, NOW + 5_000)], address(2), NOW)).toBe(NOW);
    expect(olderMembersGoneSince([member(2)], [departed(5, 0, 0)], address(2), NOW)).toBe(NOW);
  });

  it('over any view and departures: the latest gap start, never after now, now when a gap is unknown', () => {
    const gone = fc.record({
      upNumber: fc.integer({ min: 1, max: 8 }),
      removedAtMs: fc.integer({ min: 0, max: NOW }),
      downedAtMs: fc.option(fc.integer({ min: 0, max: 2 * NOW }), { nil: undefined }),
    });
    fc.assert(
      fc.property(
        fc.subarray([1, 2, 3, 4, 5, 6, 7, 8]),
        fc.integer({ min: 1, max: 9 }),
        fc.array(gone),
        (ups, own, list) => {
          const members = [...new Set([...ups, own])].map((n) => member(n));
          const departures = list.map((d) => departed(d.upNumber, d.removedAtMs, d.downedAtMs));
          const since = olderMembersGoneSince(members, departures, address(own), NOW);
          const gaps = [...Array(own - 1).keys()].map((i) => i + 1).filter((n) => !ups.includes(n));
          if (gaps.length === 0) {
            expect(since).toBeUndefined();
            return;
          }
          expect(since).toBeLessThanOrEqual(NOW);
          const gapStarts = gaps.map((n) => {
            const starts = departures
              .filter((d) => d.upNumber === n)
              .map((d) => Math.min(NOW, d.downedAtMs ?? d.removedAtMs));
            return starts.length === 0 ? NOW : Math.max(...starts);
          });
          // Never before any gap's own start (the safe side: now when the cluster saw nothing), and no later.
          expect(since).toBe(Math.max(...gapStarts));
        },
      ),
    );
  });
});
