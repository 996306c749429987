// The sharding runtime's default clock and timers (coordinators, entity timers): the process ones, unref'd, so
// a runtime left running (its node never shut down) does not keep the process alive. Tests inject their own Scheduler.
import type { Scheduler } from '../cluster/scheduler.js';

/** Looks the globals up at call time, so `vi.useFakeTimers()` drives it as it drives systemScheduler. */
export const backgroundScheduler: Scheduler = {
  now: () => Date.now(),
  setTimeout(fn, delayMs) {
    const handle = setTimeout(fn, delayMs);
    handle.unref?.();
    return { cancel: () => clearTimeout(handle) };
  },
  setInterval(fn, intervalMs) {
    const handle = setInterval(fn, intervalMs);
    handle.unref?.();
    return { cancel: () => clearInterval(handle) };
  },
};
