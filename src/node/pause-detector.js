export function startPauseDetector(options) {
    const intervalMs = options.intervalMs ?? 200;
    const now = options.now ?? Date.now;
    let last = now();
    let holdUntil = 0;
    let lastPauseMs = 0;
    const handle = (options.setInterval ?? setInterval)(() => {
        const at = now();
        const gap = at - last - intervalMs;
        last = at;
        if (gap <= options.thresholdMs)
            return;
        lastPauseMs = gap;
        holdUntil = at + options.holdMs;
        options.onPause?.(gap);
    }, intervalMs);
    handle.unref?.();
    return {
        holding: () => now() < holdUntil
            ? `this node was frozen for ${lastPauseMs} ms and may have been put out of the cluster meanwhile; it takes writes again once it has heard from the cluster (within ${options.holdMs} ms)`
            : undefined,
        close: () => (options.clearInterval ?? ((h) => clearInterval(h)))(handle),
    };
}
//# sourceMappingURL=pause-detector.js.map