// Test helper: polls a condition until it holds or a deadline passes (no fixed sleeps for synchronisation);
// the wall-clock polling of test/support/poll.ts, with the signature the cluster tests use.
import { poll } from '../support/poll.js';

/** A condition that throws fails the wait at once. */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  await poll(what, condition, { timeoutMs, intervalMs: 5, retryOnError: false });
}
