// The down-removal margin alone: when each member's margin starts, when it ends, and the (dispatcher's)
// timer that re-runs the coordinator's membership check at the earliest end; then a coordinator on fakes with
// a process restarted on a crashed address (margins are kept by address).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DownRemovalMargin } from '../../src/sharding/coordinator/membership.js';
import { Dispatcher } from '../../src/sharding/coordinator/effects.js';
import { ManualScheduler, address, member, registration, startedCoordinator, stateWith } from './coordinator-fakes.js';

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

  it('a new process on a downed address gets a margin of its own when it is downed in turn', async () => {
    // The first process at the address crashed (confirmed: its margin ended at once); a new one restarted on the
    // same address and is downed later while only cut off: its probes are accepted, it may still run its shards.
    const scheduler = new ManualScheduler();
    let answer: 'refused' | 'accepting' = 'refused';
    const subject = new DownRemovalMargin(2_000, scheduler, {
      confirmed: () => undefined,
      probe: () => Promise.resolve(answer),
    });
    const t0 = scheduler.now();
    subject.sawDown([{ ...member(1, 'down'), downedAtMs: t0 }], t0);
    for (let i = 0; i < 4; i++) {
      await Promise.resolve();
      scheduler.advance(25);
    }
    expect(subject.inMargin(address(1), scheduler.now())).toBe(false);
    answer = 'accepting';
    scheduler.advance(10_000);
    // The old record still in the view beside the new process, up, then the new one downed, in either order.
    subject.sawDown([{ ...member(1, 'down'), downedAtMs: t0 }, member(1)], scheduler.now());
    scheduler.advance(5_000);
    const t1 = scheduler.now();
    subject.sawDown(
      [
        { ...member(1, 'down'), downedAtMs: t1 },
        { ...member(1, 'down'), downedAtMs: t0 },
      ],
      t1,
    );
    expect(subject.inMargin(address(1), t1 + 1_999)).toBe(true);
    expect(subject.inMargin(address(1), t1 + 2_000)).toBe(false);
    subject.stop();
  });

  it('a downing of a process that restarted while the margin of the one before ran gets a full margin', () => {
    const { subject, scheduler } = margin();
    const t0 = scheduler.now();
    subject.sawDown([{ ...member(1, 'down'), downedAtMs: t0 }], t0);
    scheduler.advance(500);
    subject.sawDown([{ ...member(1, 'down'), downedAtMs: t0 }, member(1, 'joining')], scheduler.now());
    expect(subject.inMargin(address(1), scheduler.now())).toBe(true);
    scheduler.advance(500);
    const t1 = scheduler.now();
    subject.sawDown([{ ...member(1, 'down'), downedAtMs: t1 }], t1);
    expect(subject.inMargin(address(1), t1 + 1_999)).toBe(true);
    expect(subject.inMargin(address(1), t1 + 2_000)).toBe(false);
  });

  it('over any order of restarts and downings at one address, the current downing gets its whole margin', () => {
    // Steps: the clock moves, then the view shows the address's current process live (a restart, the previous
    // process's down record maybe still beside it) or downed (decided a little before now, the previous
    // process's record maybe beside it, maybe confirmed dead by this node's membership: that process is gone,
    // which says nothing of the current one). Nothing is ever probed, so no margin ends early.
    const step = fc.record({
      advance: fc.integer({ min: 0, max: 3_000 }),
      live: fc.boolean(),
      lag: fc.integer({ min: 0, max: 500 }),
      stale: fc.boolean(),
      staleConfirmed: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 12 }), (steps) => {
        const { subject, scheduler, stop } = margin();
        let current: { readonly downedAtMs: number } | undefined; // the current process's downing, once downed
        let previous: number | undefined; // the decision time of the process before, if its record stays
        for (const { advance, live, lag, stale, staleConfirmed } of steps) {
          scheduler.advance(advance);
          const now = scheduler.now();
          if (live && current !== undefined) {
            previous = current.downedAtMs; // a restart: a new process at the address
            current = undefined;
          }
          if (!live && current === undefined) current = { downedAtMs: now - lag };
          const old =
            stale && previous !== undefined
              ? [{ ...member(1, 'down'), downedAtMs: previous, confirmedDead: staleConfirmed }]
              : [];
          const self = current === undefined ? member(1) : { ...member(1, 'down'), downedAtMs: current.downedAtMs };
          subject.sawDown([...old, self], now);
          if (current !== undefined && now < current.downedAtMs + 2_000)
            expect(subject.inMargin(address(1), now)).toBe(true);
        }
        stop();
      }),
    );
  });

  it("ends the margin of a downing whose record this node's membership confirmed dead, and only that one", () => {
    const { subject, scheduler } = margin();
    const t0 = scheduler.now();
    subject.sawDown([{ ...member(1, 'down'), confirmedDead: true }, member(2, 'down')], t0);
    expect(subject.inMargin(address(1), t0)).toBe(false);
    expect(subject.inMargin(address(2), t0)).toBe(true);
    // A later downing at the same address without a confirmation of its own gets its margin.
    scheduler.advance(100);
    subject.sawDown([member(1)], scheduler.now());
    scheduler.advance(3_000);
    const t1 = scheduler.now();
    subject.sawDown(
      [
        { ...member(1, 'down'), downedAtMs: t0, confirmedDead: true },
        { ...member(1, 'down'), downedAtMs: t1 },
      ],
      t1,
    );
    expect(subject.inMargin(address(1), t1)).toBe(true);
    // Decision times come from whichever leader decided: the earlier process's record may carry the later time
    // (the property above found it). Its confirmation still says nothing of the current process.
    subject.sawDown(
      [
        { ...member(1, 'down'), downedAtMs: t1 + 1, confirmedDead: true },
        { ...member(1, 'down'), downedAtMs: t1 },
      ],
      t1 + 1,
    );
    expect(subject.inMargin(address(1), t1 + 1)).toBe(true);
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

describe('the coordinator and a process restarted on a crashed address', () => {
  it('gives the restarted process, downed while only cut off, its whole margin', async () => {
    let answer: 'refused' | 'accepting' = 'refused';
    const members = [member(1), member(2), member(3)];
    const config = { coordinatorWarmupMs: 0, retryIntervalMs: 100_000, rebalanceIntervalMs: 1_000_000 };
    const { subject, ctx, scheduler } = startedCoordinator(members, config, {
      probe: () => Promise.resolve(answer),
    });
    const settle = async (ms: number): Promise<void> => {
      for (let waited = 0; waited < ms; waited += 25) {
        for (let i = 0; i < 4; i++) await Promise.resolve();
        scheduler.advance(25);
      }
    };
    const hostedElsewhere = (shardId: number): boolean =>
      ctx.take().some((s) => s.message.type === 'HostShard' && s.message.shardId === shardId);
    // The first process at address 3 hosts shard 5 and crashes: its margin ends once the probes confirm it.
    subject.handle(address(3), registration([5]));
    const crashed = { ...member(3, 'down'), downedAtMs: scheduler.now() };
    ctx.members = [member(1), member(2), crashed];
    subject.onMembershipChange();
    await settle(100);
    expect(hostedElsewhere(5)).toBe(true);
    // A new process restarts on the address (the old record still beside it), registers shard 7, and is cut off.
    scheduler.advance(5_000);
    ctx.members = [member(1), member(2), member(3), crashed];
    subject.onMembershipChange();
    subject.handle(address(3), registration([7]));
    ctx.take();
    answer = 'accepting';
    scheduler.advance(5_000);
    ctx.members = [member(1), member(2), { ...member(3, 'down'), downedAtMs: scheduler.now() }, crashed];
    subject.onMembershipChange();
    await settle(1_950);
    expect(hostedElsewhere(7)).toBe(false);
    await settle(100);
    expect(hostedElsewhere(7)).toBe(true);
  });
});
