// A coordinator that takes over after a downing (issue "a new coordinator skips the down-removal margin"):
// shards nobody registered wait out the rest of the margin, measured from when the downing was decided
// (`downedAtMs`), and a full margin from the coordinator's start when an older member left the view without
// a record it can date. Driven on a manual clock; the coordinator's sends are recorded.
import { describe, expect, it } from 'vitest';
import type { MemberInfo } from '../../src/cluster/member.js';
import { olderMembersUntraced } from '../../src/sharding/coordinator/down-removal-margin.js';
import { ManualScheduler, address, member, startedCoordinator } from './coordinator-fakes.js';

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

describe('olderMembersUntraced', () => {
  it('is true exactly when an up number below the own one is held by no member in the view', () => {
    expect(olderMembersUntraced([member(1), member(2)], address(1))).toBe(false);
    expect(olderMembersUntraced([member(2), member(1, 'down')], address(2))).toBe(false);
    expect(olderMembersUntraced([member(3), member(1, 'down'), member(4)], address(3))).toBe(true);
    expect(olderMembersUntraced([member(3)], address(3))).toBe(true);
    expect(olderMembersUntraced([member(3)], address(9))).toBe(false);
  });
});
