// Time as the cluster sees it: a clock plus one-shot and repeating timers, injectable so tests drive
// heartbeats, failure detection and downing deterministically (fake timers or a hand-written scheduler).

export interface Cancellable {
  cancel(): void;
}

export interface Scheduler {
  /**
   * Milliseconds. Timing uses only differences, but a down decision is stamped with it (`downedAtMs`) for
   * other nodes to measure from, so outside tests it must be wall-clock time (as `systemScheduler`'s is).
   */
  now(): number;
  setTimeout(fn: () => void, delayMs: number): Cancellable;
  setInterval(fn: () => void, intervalMs: number): Cancellable;
}

/** The process clock and timers; honours `vi.useFakeTimers()` because it looks the globals up at call time. */
export const systemScheduler: Scheduler = {
  now: () => Date.now(),
  setTimeout(fn, delayMs) {
    const handle = setTimeout(fn, delayMs);
    return { cancel: () => clearTimeout(handle) };
  },
  setInterval(fn, intervalMs) {
    const handle = setInterval(fn, intervalMs);
    return { cancel: () => clearInterval(handle) };
  },
};
