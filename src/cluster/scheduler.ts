// Time as the runtime sees it: a clock plus one-shot and repeating timers, injected everywhere time is read or
// waited for (membership, heartbeats, downing, coordinators, regions, asks, coordinator requests, entity timers),
// so tests drive them deterministically (fake timers or a hand-written scheduler). One default: systemScheduler.

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

/**
 * The process clock and timers, the runtime's one default. Honours `vi.useFakeTimers()` because it looks the
 * globals up at call time. Its timers are unref'd: a node's sockets keep its process alive, and a runtime left
 * running (a test or script that never shut its node down) must not be kept alive by a retry tick.
 */
export const systemScheduler: Scheduler = {
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
