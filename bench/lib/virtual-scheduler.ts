// The cluster's Scheduler on the bench's discrete-event clock, so a real `Cluster` (heartbeats, failure
// detector, gossip ticks, downing deadlines) runs on simulated time: timers are events of the same clock
// the in-memory network delivers on, and `now()` is wall-clock-like (downing stamps `downedAtMs` with it).
import type { Cancellable, Scheduler } from '../../src/cluster/scheduler.js';
import type { VirtualClock } from './virtual-clock.js';

export function virtualScheduler(clock: VirtualClock, epochMs: number): Scheduler {
  return {
    now: () => epochMs + clock.now(),
    setTimeout(fn: () => void, delayMs: number): Cancellable {
      let live = true;
      // A cancelled event stays in the clock's heap until its time and then does nothing.
      clock.schedule(() => {
        if (!live) return;
        live = false;
        fn();
      }, delayMs);
      return { cancel: () => void (live = false) };
    },
    setInterval(fn: () => void, intervalMs: number): Cancellable {
      let live = true;
      const tick = (): void => {
        if (!live) return;
        clock.schedule(tick, intervalMs);
        fn();
      };
      clock.schedule(tick, intervalMs);
      return { cancel: () => void (live = false) };
    },
  };
}
