// Waiting on the wall clock for something that happens in other processes, sockets or timers the test does not
// control: polls a probe until it yields a value or a deadline passes, and names what it waited for if not.
// Fake-time waiting (vitest's timers) is in fake-time.ts; nothing here imports vitest, so bench/ may use it.

export interface PollOptions {
  /** Give up after this many wall-clock ms; default 30 s. */
  readonly timeoutMs?: number;
  /** Pause between probes; default 100 ms. */
  readonly intervalMs?: number;
  /** A probe that throws counts as "not yet" (default); with false the error ends the wait at once. */
  readonly retryOnError?: boolean;
  /** Checked before each probe: a reason here (say, the process waited on exited) ends the wait at once. */
  readonly giveUp?: () => string | undefined;
}

export async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Polls `probe` until it returns something other than undefined or false and returns that; throws after
 * `timeoutMs` naming `what` and the last value or error seen.
 */
export async function poll<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  options: PollOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  let last: unknown = 'nothing yet';
  for (;;) {
    const reason = options.giveUp?.();
    if (reason !== undefined) throw new Error(`gave up waiting for ${what}: ${reason}`);
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      last = value;
    } catch (error) {
      if (options.retryOnError === false) throw error;
      last = error instanceof Error ? error.message : error;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${String(last)})`);
    await sleep(options.intervalMs ?? 100);
  }
}
