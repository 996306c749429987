// The keep-majority downing decision as a pure function.
import { describe, expect, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import { decideDowning, nextDowningDeadlineMs, type DowningMember } from '../../src/cluster/downing.js';
import type { MemberStatus } from '../../src/cluster/member.js';

function member(port: number, reachable = true, status: MemberStatus = 'up', unreachableSinceMs?: number): DowningMember {
  const address = new NodeAddress('sys', '10.0.0.1', port);
  return { key: `${address.toString()}#x`, address, status, reachable, unreachableSinceMs: reachable ? undefined : unreachableSinceMs };
}

const base = { downAfterMs: 10_000, minorityDownAfterMs: 7_500 };

describe('decideDowning', () => {
  it('downs members unreachable for downAfterMs from a majority side, not earlier', () => {
    const members = [member(1), member(2), member(3, false, 'up', 0)];
    const self = members[0]!.key;
    expect(decideDowning({ ...base, selfKey: self, members, nowMs: 9_999 })).toEqual({ kind: 'none' });
    expect(decideDowning({ ...base, selfKey: self, members, nowMs: 10_000 })).toEqual({
      kind: 'down-unreachable',
      keys: [members[2]!.key],
    });
  });

  it('downs itself on a minority side after minorityDownAfterMs, never the others', () => {
    const members = [member(1, false, 'up', 0), member(2, false, 'up', 0), member(3)];
    const self = members[2]!.key;
    expect(decideDowning({ ...base, selfKey: self, members, nowMs: 7_499 })).toEqual({ kind: 'none' });
    expect(decideDowning({ ...base, selfKey: self, members, nowMs: 7_500 })).toEqual({ kind: 'down-self' });
    expect(decideDowning({ ...base, selfKey: self, members, nowMs: 60_000 })).toEqual({ kind: 'down-self' });
  });

  it('breaks an even split by the lowest address', () => {
    const members = [member(1), member(2, false, 'up', 0), member(3, false, 'up', 0), member(4)];
    expect(decideDowning({ ...base, selfKey: members[3]!.key, members, nowMs: 10_000 }).kind).toBe('down-unreachable');
    const other = [member(1, false, 'up', 0), member(2), member(3), member(4, false, 'up', 0)];
    expect(decideDowning({ ...base, selfKey: other[1]!.key, members: other, nowMs: 10_000 }).kind).toBe('down-self');
  });

  it('does not count joining or exiting members towards the majority, and ignores members already down', () => {
    const members = [
      member(1),
      member(2, false, 'up', 0),
      member(3, true, 'joining'),
      member(4, true, 'joining'),
      member(5, false, 'down', 0),
    ];
    // Counted: 1 and 2 only; 1 holds the lowest address, so it keeps the majority of an even split.
    expect(decideDowning({ ...base, selfKey: members[0]!.key, members, nowMs: 10_000 })).toEqual({
      kind: 'down-unreachable',
      keys: [members[1]!.key],
    });
  });

  it('decides nothing for a joining node or when everybody is reachable', () => {
    const members = [member(1, true, 'joining'), member(2, false, 'up', 0), member(3, false, 'up', 0)];
    expect(decideDowning({ ...base, selfKey: members[0]!.key, members, nowMs: 60_000 })).toEqual({ kind: 'none' });
    const healthy = [member(1), member(2)];
    expect(decideDowning({ ...base, selfKey: healthy[0]!.key, members: healthy, nowMs: 60_000 })).toEqual({ kind: 'none' });
  });

  it('makes a majority side wait a stagger per unreachable member with a lower address', () => {
    // Link 1-3 cut, 2 reaches both: 1 and 3 each hold a majority of their view; 3 waits one stagger longer.
    const fromOne = [member(1), member(2), member(3, false, 'up', 0)];
    const fromThree = [member(1, false, 'up', 0), member(2), member(3)];
    const staggered = { ...base, staggerMs: 100 };
    expect(decideDowning({ ...staggered, selfKey: fromOne[0]!.key, members: fromOne, nowMs: 10_000 }).kind).toBe('down-unreachable');
    expect(decideDowning({ ...staggered, selfKey: fromThree[2]!.key, members: fromThree, nowMs: 10_099 })).toEqual({ kind: 'none' });
    expect(decideDowning({ ...staggered, selfKey: fromThree[2]!.key, members: fromThree, nowMs: 10_100 }).kind).toBe('down-unreachable');
    // The minority's delay is not staggered.
    const minority = [member(1, false, 'up', 0), member(2, false, 'up', 0), member(3)];
    expect(decideDowning({ ...staggered, selfKey: minority[2]!.key, members: minority, nowMs: 7_500 })).toEqual({ kind: 'down-self' });
  });

  it('names the next deadline at which the decision can change', () => {
    const members = [member(1), member(2, false, 'up', 1_000), member(3, false, 'up', 4_000), member(4), member(5)];
    const input = { ...base, staggerMs: 100, selfKey: members[3]!.key, members };
    // Self is 4: two lower addresses unreachable, so its majority delay is 10,200; the minority delay 7,500 also counts.
    expect(nextDowningDeadlineMs({ ...input, nowMs: 0 })).toBe(8_500);
    expect(nextDowningDeadlineMs({ ...input, nowMs: 8_500 })).toBe(11_200);
    expect(nextDowningDeadlineMs({ ...input, nowMs: 11_200 })).toBe(11_500);
    expect(nextDowningDeadlineMs({ ...input, nowMs: 11_500 })).toBe(14_200);
    expect(nextDowningDeadlineMs({ ...input, nowMs: 14_200 })).toBeUndefined();
    const healthy = [member(1), member(2)];
    expect(nextDowningDeadlineMs({ ...base, selfKey: healthy[0]!.key, members: healthy, nowMs: 0 })).toBeUndefined();
  });
});
