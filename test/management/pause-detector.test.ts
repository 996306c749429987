// The pause detector: a check timer that fires far later than due means the process was frozen; writes are held
// for holdMs after that, and only then.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startPauseDetector } from '../../src/node/pause-detector.js';

/** A clock and one repeating timer the test drives by hand, as a frozen process would see them. */
function manual() {
  let time = 0;
  let tick: (() => void) | undefined;
  return {
    now: () => time,
    setInterval: (callback: () => void) => {
      tick = callback;
      return {};
    },
    clearInterval: () => {
      tick = undefined;
    },
    /** The timer fires after `ms` of wall time (as it does after a freeze of that length). */
    fireAfter(ms: number) {
      time += ms;
      tick?.();
    },
    passes(ms: number) {
      time += ms;
    },
    get stopped() {
      return tick === undefined;
    },
  };
}

describe('startPauseDetector', () => {
  it('holds writes for holdMs after a gap longer than the threshold, not after ordinary ticks', () => {
    const clock = manual();
    const pauses: number[] = [];
    const detector = startPauseDetector({
      thresholdMs: 1_500,
      holdMs: 3_000,
      intervalMs: 200,
      ...clock,
      onPause: (ms) => pauses.push(ms),
    });
    for (let i = 0; i < 10; i++) clock.fireAfter(200);
    clock.fireAfter(1_200);
    expect(detector.holding()).toBeUndefined();
    clock.fireAfter(30_200);
    expect(pauses).toEqual([30_000]);
    expect(detector.holding()).toMatch(/frozen for 30000 ms/);
    clock.passes(2_999);
    expect(detector.holding()).toBeDefined();
    clock.passes(1);
    expect(detector.holding()).toBeUndefined();
    detector.close();
    expect(clock.stopped).toBe(true);
  });
});

describe('the pause detector and the wall clock (issue 27 case 7)', () => {
  /** The detector with its default clock and a timer the test fires; the wall clock is faked and stepped. */
  function withWallClock() {
    let tick: (() => void) | undefined;
    const detector = startPauseDetector({
      thresholdMs: 1_500,
      holdMs: 10_000,
      intervalMs: 200,
      setInterval: (callback: () => void) => {
        tick = callback;
        return {};
      },
      clearInterval: () => {
        tick = undefined;
      },
    });
    return { detector, fire: () => tick?.() };
  }

  afterEach(() => {
    vi.useRealTimers();
  });

  it('a wall clock stepped forward an hour is no pause: writes are not held', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { detector, fire } = withWallClock();
    fire();
    vi.setSystemTime(Date.now() + 3_600_000);
    fire();
    expect(detector.holding()).toBeUndefined();
    detector.close();
  });

  it('a wall clock stepped back an hour after a real pause does not stretch the hold', () => {
    vi.useFakeTimers({ toFake: ['Date', 'performance'] });
    const { detector, fire } = withWallClock();
    vi.advanceTimersByTime(5_000); // frozen: both clocks move on
    fire();
    expect(detector.holding()).toMatch(/frozen for 4800 ms/);
    vi.setSystemTime(Date.now() - 3_600_000);
    for (let i = 0; i < 51; i++) {
      vi.advanceTimersByTime(200);
      fire();
    }
    expect(detector.holding()).toBeUndefined();
    detector.close();
  });
});
