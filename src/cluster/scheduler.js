// Time as the cluster sees it: a clock plus one-shot and repeating timers, injectable so tests drive
// heartbeats, failure detection and downing deterministically (fake timers or a hand-written scheduler).
/** The process clock and timers; honours `vi.useFakeTimers()` because it looks the globals up at call time. */
export const systemScheduler = {
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
//# sourceMappingURL=scheduler.js.map