// The down-removal margin alone: when each member's margin starts, when it ends, and the (dispatcher's)
// timer that re-runs the coordinator's membership check at the earliest end.
import { describe, expect, it } from 'vitest';
import { DownRemovalMargin } from '../../src/sharding/coordinator/down-removal-margin.js';
import { Dispatcher } from '../../src/sharding/coordinator/effects.js';
import { ManualScheduler, address, member, stateWith } from './coordinator-fakes.js';

function margin(marginMs = 2_000) {
  const scheduler = new ManualScheduler();
  const ends: number[] = [];
  const subject = new DownRemovalMargin(marginMs, scheduler, { confirmed: () => ends.push(scheduler.now()) });
  // Its timer runs as the coordinator runs it: a dispatcher timer whose firing is the margin's end.
  const dispatcher = new Dispatcher(stateWith([]), scheduler, { send: () => {}, report: () => {} }, (_fx, timer) => {
    if (timer.type === 'margin-ended') ends.push(scheduler.now());
  });
  const schedule = (now: number, forgettable: (member: string) => boolean): void =>
    dispatcher.dispatch((fx) => subject.schedule(fx, now, forgettable));
  const stop = (): void => {
    subject.stop();
    dispatcher.timers.cancelAll();
  };
  return { subject, scheduler, ends, schedule, stop };
}

describe('DownRemovalMargin', () => {
  it('starts a margin for members seen down, not for others, and never restarts one', () => {
    const { subject, scheduler } = margin();
    const t0 = scheduler.now();
    subject.sawDown([member(1, 'down'), member(2), member(3, 'removed')], t0);
    expect(subject.has(address(1))).toBe(true);
    expect(subject.has(address(2)) || subject.has(address(3))).toBe(false);
    subject.sawDown([member(1, 'down')], t0 + 1_500);
    subject.sawGone(address(1), t0 + 1_500);
    expect(subject.inMargin(address(1), t0 + 1_999)).toBe(true);
    expect(subject.inMargin(address(1), t0 + 2_000)).toBe(false);
  });

  it('runs a margin from the downing decision (downedAtMs), never from a later time, and keeps the earliest start', () => {
    const { subject, scheduler } = margin();
    const t0 = scheduler.now();
    subject.sawDown([{ ...member(1, 'down'), downedAtMs: t0 - 1_500 }], t0);
    expect(subject.inMargin(address(1), t0 + 499)).toBe(true);
    expect(subject.inMargin(address(1), t0 + 500)).toBe(false);
    // Seen first without a decision time (an old peer's gossip), later with one: the earlier start wins.
    subject.sawDown([member(2, 'down')], t0);
    subject.sawDown([{ ...member(2, 'down'), downedAtMs: t0 - 1_000 }], t0 + 100);
    expect(subject.inMargin(address(2), t0 + 1_000)).toBe(false);
    // A decision time ahead of this clock counts as now.
    subject.sawDown([{ ...member(3, 'down'), downedAtMs: t0 + 60_000 }], t0);
    expect(subject.inMargin(address(3), t0 + 1_999)).toBe(true);
    expect(subject.inMargin(address(3), t0 + 2_000)).toBe(false);
  });

  it('sawGone starts a margin for a member that vanished without being seen down', () => {
    const { subject, scheduler } = margin();
    subject.sawGone(address(4), scheduler.now());
    expect(subject.inMargin(address(4), scheduler.now())).toBe(true);
    expect(subject.anyInMargin((key) => key === address(4), scheduler.now())).toBe(true);
    expect(subject.anyInMargin((key) => key !== address(4), scheduler.now())).toBe(false);
  });

  it('fires at the earliest running margin end, and again for the next once rescheduled', () => {
    const { subject, scheduler, ends, schedule } = margin();
    const t0 = scheduler.now();
    subject.sawGone(address(1), t0);
    subject.sawGone(address(2), t0 + 500);
    schedule(t0, () => false);
    expect(scheduler.pending).toBe(1);
    scheduler.advance(2_000);
    expect(ends).toEqual([t0 + 2_000]);
    schedule(scheduler.now(), () => false);
    scheduler.advance(1_000);
    expect(ends).toEqual([t0 + 2_000, t0 + 2_500]);
    schedule(scheduler.now(), () => false);
    expect(scheduler.pending).toBe(0);
  });

  it('forgets ended margins only of members the caller calls forgettable', () => {
    const { subject, scheduler, schedule } = margin(100);
    const t0 = scheduler.now();
    subject.sawGone(address(1), t0);
    subject.sawGone(address(2), t0);
    schedule(t0 + 50, () => true);
    expect(subject.has(address(1))).toBe(true);
    schedule(t0 + 100, (key) => key === address(1));
    expect(subject.has(address(1))).toBe(false);
    expect(subject.has(address(2))).toBe(true);
  });

  it('a margin of 0 never runs and arms no timer', () => {
    const { subject, scheduler, schedule } = margin(0);
    subject.sawGone(address(1), scheduler.now());
    expect(subject.inMargin(address(1), scheduler.now())).toBe(false);
    schedule(scheduler.now(), () => false);
    expect(scheduler.pending).toBe(0);
  });

  it('once stopped, arms no timer and cancels the one it had', () => {
    const { subject, scheduler, ends, schedule, stop } = margin();
    subject.sawGone(address(1), scheduler.now());
    schedule(scheduler.now(), () => false);
    stop();
    expect(scheduler.pending).toBe(0);
    schedule(scheduler.now(), () => false);
    scheduler.advance(5_000);
    expect(ends).toEqual([]);
  });
});
