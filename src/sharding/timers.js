/** Looks the globals up at call time, so `vi.useFakeTimers()` drives it as it drives systemScheduler. */
export const backgroundScheduler = {
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
//# sourceMappingURL=timers.js.map