// The clock-offset estimate (issue 41): NTP's offset/uncertainty, hostile samples dropped, and a median that one
// lying or delayed peer cannot move past the bound.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ClockOffsetTracker,
  clusterOffset,
  estimateOffset,
  type MemberClockReading,
  skewReason,
} from '../../src/cluster/membership/clock-offset.js';

const exchange = (offset: number, there: number, back: number, t0 = 1_000_000) => ({
  t0,
  t1: t0 + there + offset,
  t2: t0 + there + offset,
  t3: t0 + there + back,
});

describe('estimateOffset', () => {
  it('recovers the offset within half the round trip, whatever the link asymmetry', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1e9, max: 1e9 }),
        fc.integer({ min: 0, max: 4_000 }),
        fc.integer({ min: 0, max: 4_000 }),
        (offset, there, back) => {
          const s = estimateOffset(exchange(offset, there, back));
          expect(s).toBeDefined();
          expect(Math.abs(s!.offsetMs - offset)).toBeLessThanOrEqual(s!.uncertaintyMs + 1e-9);
          expect(s!.uncertaintyMs).toBe((there + back) / 2);
        },
      ),
    );
  });

  it('drops non-finite, time-reversed, too-slow and implausible samples', () => {
    expect(estimateOffset({ t0: 0, t1: Number.NaN, t2: 1, t3: 2 })).toBeUndefined();
    expect(estimateOffset({ t0: 10, t1: 0, t2: 0, t3: 5 })).toBeUndefined();
    expect(estimateOffset({ t0: 0, t1: 5, t2: 1, t3: 10 })).toBeUndefined();
    expect(estimateOffset(exchange(0, 6_000, 6_000))).toBeUndefined();
    expect(estimateOffset(exchange(1e15, 1, 1))).toBeUndefined();
  });
});

const reading = (member: string, offsetMs: number, reportedOwnOffsetMs?: number): MemberClockReading => ({
  member,
  sample: { offsetMs, uncertaintyMs: 0 },
  ...(reportedOwnOffsetMs === undefined ? {} : { reportedOwnOffsetMs }),
});

describe('clusterOffset', () => {
  it('is the negated median: peers 24 days ahead mean we are 24 days behind', () => {
    const day = 86_400_000;
    expect(clusterOffset([reading('a', 24 * day), reading('b', 24 * day)], 5_000)).toBe(-24 * day);
  });

  it('one lying peer among honest ones cannot push an honest node over the bound', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -1_000, max: 1_000 }), { minLength: 2, maxLength: 8 }),
        fc.integer({ min: -1e12, max: 1e12 }),
        (honest, lie) => {
          const readings = [...honest.map((o, i) => reading(`h${i}`, o)), reading('liar', lie)];
          expect(Math.abs(clusterOffset(readings, 5_000)!)).toBeLessThanOrEqual(1_000);
        },
      ),
    );
  });

  it('a delayed sample is shrunk by its uncertainty, so a slow link alone never signals skew', () => {
    const slow: MemberClockReading = { member: 'a', sample: { offsetMs: 4_900, uncertaintyMs: 4_900 } };
    expect(clusterOffset([slow], 1_000)).toBe(0);
  });

  it('does not trust a member whose own reported offset is extreme', () => {
    const readings = [reading('ok', 100, 0), reading('also-ok', 100, 0), reading('skewed', 1e9, 1e9)];
    expect(clusterOffset(readings, 5_000)).toBe(-100);
    expect(clusterOffset([reading('skewed', 1e9, 1e9)], 5_000)).toBeUndefined();
  });
});

describe('ClockOffsetTracker', () => {
  it('reports entering and leaving skew once each', () => {
    const t = new ClockOffsetTracker(5_000);
    expect(t.record(reading('a', 10_000))).toBeUndefined();
    expect(t.record(reading('b', 10_000))).toBe('entered');
    expect(t.record(reading('a', 20_000))).toBeUndefined();
    expect(t.isSkewed()).toBe(true);
    expect(t.record(reading('a', 100))).toBe('left');
    expect(t.forget('a')).toBeUndefined();
    expect(t.forget('b')).toBeUndefined();
    expect(t.offsetMs()).toBeUndefined();
  });

  it('counts itself: with one peer, neither of two clocks a day apart is a majority against the other', () => {
    const ahead = new ClockOffsetTracker(5_000);
    ahead.record(reading('behind', -86_400_000));
    const behind = new ClockOffsetTracker(5_000);
    behind.record(reading('ahead', 86_400_000));
    expect([ahead.isSkewed(), behind.isSkewed()]).toEqual([false, false]);
    expect([ahead.offsetMs(), behind.offsetMs()]).toEqual([0, 0]);
  });

  it('rejects a bound that is not a positive number', () => {
    expect(() => new ClockOffsetTracker(0)).toThrow(RangeError);
    expect(() => new ClockOffsetTracker(Number.NaN)).toThrow(RangeError);
  });
});

describe('skewReason', () => {
  it('names the offset and direction beyond the bound, and nothing within it', () => {
    expect(skewReason(-2 * 86_400_000, 5_000)).toContain('172800 s behind');
    expect(skewReason(6_000, 5_000)).toContain('6 s ahead of');
    expect(skewReason(4_000, 5_000)).toBeUndefined();
    expect(skewReason(undefined, 5_000)).toBeUndefined();
  });
});
