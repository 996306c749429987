// Waiting in fake time: with vitest's fake timers installed, advances them in small steps until a condition
// holds or a fake-time budget runs out, so in-process tests never sleep on the wall clock.
import { afterEach, beforeEach, vi } from 'vitest';

export interface AdvanceOptions {
  /** Fail once this much fake time has passed; default 30 s. */
  readonly maxMs?: number;
  /** Fake ms per step (timers due within a step run in order); default 10. */
  readonly stepMs?: number;
}

/** Advances fake time until `condition` holds and returns the fake ms it took; throws naming `what` past `maxMs`. */
export async function advanceUntil(
  condition: () => boolean,
  what: string,
  options: AdvanceOptions = {},
): Promise<number> {
  const maxMs = options.maxMs ?? 30_000;
  const stepMs = options.stepMs ?? 10;
  let elapsed = 0;
  while (!condition()) {
    if (elapsed >= maxMs) throw new Error(`not true after ${maxMs} ms of fake time: ${what}`);
    await vi.advanceTimersByTimeAsync(stepMs);
    elapsed += stepMs;
  }
  return elapsed;
}

/** Advances fake time until the promise settles, then returns its outcome (its rejection rethrown). */
export async function settleInFakeTime<T>(promise: Promise<T>, maxMs = 30_000): Promise<T> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  await advanceUntil(() => done, 'promise to settle', { maxMs });
  return promise;
}

/** Lets timers due within the next `ms` of fake time run. */
export async function runFor(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
}

/**
 * The lifecycle of a fake-time test file: fake timers before each test, then `cleanUp` (which stops whatever
 * the test started, even after a failure) and real timers again after it.
 */
export function useFakeTime(
  cleanUp: () => Promise<void> | void = () => undefined,
  before: () => void = () => undefined,
): void {
  beforeEach(() => {
    vi.useFakeTimers();
    before();
  });
  afterEach(async () => {
    try {
      await cleanUp();
    } finally {
      vi.useRealTimers();
    }
  });
}
