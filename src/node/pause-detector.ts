// Notices that this process was frozen (SIGSTOP, a VM migration, a long GC): a repeating timer that fires far
// later than due means the event loop did not run meanwhile. The others may have downed or removed this node
// during the pause and it has not heard yet, so for `holdMs` afterwards it takes no writes: long enough for
// their gossip to reach it, after which a node still up writes again. It measures with the monotonic clock:
// the wall clock stepped forward (NTP, an operator) is no freeze, and one stepped back must not hold writes
// until real time catches up with the step.
export interface PauseDetectorOptions {
  /** A gap this much longer than the check interval counts as a pause. */
  readonly thresholdMs: number;
  /** How long writes are refused after a pause ends. */
  readonly holdMs: number;
  readonly intervalMs?: number;
  /** A monotonic clock in ms; performance.now by default. Never the wall clock (Date.now), see above. */
  readonly now?: () => number;
  readonly setInterval?: (callback: () => void, ms: number) => { unref?(): void };
  readonly clearInterval?: (handle: { unref?(): void }) => void;
  readonly onPause?: (pausedMs: number) => void;
}

export interface PauseDetector {
  /** Why writes are held now, or undefined. */
  holding(): string | undefined;
  close(): void;
}

export function startPauseDetector(options: PauseDetectorOptions): PauseDetector {
  const intervalMs = options.intervalMs ?? 200;
  // The global, looked up on each call (so a test's fake performance clock is the one read).
  const now = options.now ?? (() => globalThis.performance.now());
  let last = now();
  let holdUntil = 0;
  let lastPauseMs = 0;
  const handle = (options.setInterval ?? setInterval)(() => {
    const at = now();
    const gap = at - last - intervalMs;
    last = at;
    if (gap <= options.thresholdMs) return;
    lastPauseMs = Math.round(gap);
    holdUntil = at + options.holdMs;
    options.onPause?.(gap);
  }, intervalMs);
  handle.unref?.();
  return {
    holding: () =>
      now() < holdUntil
        ? `this node was frozen for ${lastPauseMs} ms and may have been put out of the cluster meanwhile; it takes writes again once it has heard from the cluster (within ${options.holdMs} ms)`
        : undefined,
    close: () => (options.clearInterval ?? ((h) => clearInterval(h as NodeJS.Timeout)))(handle),
  };
}
