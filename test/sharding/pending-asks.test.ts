// Pending asks on their own: each settles exactly once, by its answer, its timeout or the shutdown; the asks of one
// turn with one timeout share a timer, which goes once none of them waits.
import { describe, expect, it, vi } from 'vitest';
import { ActorTsError } from '../../src/errors.js';
import { PendingAsks } from '../../src/sharding/region/pending-asks.js';
import { useFakeTime } from '../support/fake-time.js';

useFakeTime();

describe('PendingAsks', () => {
  it('resolves with the answer and ignores a late or repeated one', async () => {
    const asks = new PendingAsks();
    const { id, answer } = asks.open<number>(1_000, () => 'timed out');
    expect(asks.settle(id, { ok: true, value: 42 })).toBe(true);
    await expect(answer).resolves.toBe(42);
    expect(asks.settle(id, { ok: true, value: 43 })).toBe(false);
    expect(asks.size).toBe(0);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(asks.timedOut).toBe(0);
  });

  it('rejects a failed outcome with the failure code it is given', async () => {
    const asks = new PendingAsks();
    const failed = asks.open(1_000, () => 'timed out');
    const dropped = asks.open(1_000, () => 'timed out');
    asks.settle(failed.id, { ok: false, error: 'boom' });
    asks.settle(dropped.id, { ok: false, error: 'full' }, 'buffer_overflow');
    await expect(failed.answer).rejects.toMatchObject({ code: 'entity_failed', message: 'boom' });
    await expect(dropped.answer).rejects.toMatchObject({ code: 'buffer_overflow', message: 'full' });
  });

  it('times an unanswered ask out after its timeout, not before, and counts it', async () => {
    const asks = new PendingAsks();
    const { id, answer } = asks.open(1_000, () => 'ask to T/e timed out');
    const outcome = answer.then(
      () => 'resolved',
      (error: unknown) => error,
    );
    await vi.advanceTimersByTimeAsync(999);
    expect(asks.size).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    // Nothing took it back (no withdraw given): it is reported as having left this node.
    expect(await outcome).toMatchObject({
      code: 'timeout',
      message: expect.stringMatching(/^ask to T\/e timed out; delivered: true/),
      delivered: true,
    });
    expect(asks.timedOut).toBe(1);
    expect(asks.settle(id, { ok: true, value: 1 })).toBe(false);
  });

  it('fails every waiting ask at shutdown with the given error, and no timer fires afterwards', async () => {
    const asks = new PendingAsks();
    const answers = [asks.open(1_000, () => 'x'), asks.open(5_000, () => 'y')].map((ask) => ask.answer);
    const stopping = new ActorTsError('not_running', 'shut down');
    asks.failAll(stopping);
    for (const answer of answers) await expect(answer).rejects.toBe(stopping);
    expect(asks.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    expect(asks.timedOut).toBe(0);
  });

  it('numbers asks uniquely', () => {
    const asks = new PendingAsks();
    const ids = Array.from({ length: 5 }, () => asks.open(1_000, () => 'x'));
    expect(new Set(ids.map((ask) => ask.id)).size).toBe(5);
    for (const ask of ids) ask.answer.catch(() => undefined);
    asks.failAll(new Error('done'));
  });

  it('reports delivered: false when the timeout took the message back from this node', async () => {
    const asks = new PendingAsks();
    const withdrawn: number[] = [];
    const { id, answer } = asks.open(
      1_000,
      () => 'ask to T/e timed out',
      (askId) => withdrawn.push(askId) > 0,
    );
    const outcome = answer.then(
      () => 'resolved',
      (error: unknown) => error,
    );
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await outcome).toMatchObject({ code: 'timeout', delivered: false });
    expect(withdrawn).toEqual([id]);
  });

  it('gives the asks of one turn with one timeout one timer, gone once none waits, and each its own outcome', async () => {
    const asks = new PendingAsks();
    const first = [asks.open(1_000, () => 'a'), asks.open(1_000, () => 'b'), asks.open(2_000, () => 'c')];
    expect(vi.getTimerCount()).toBe(2);
    for (const ask of first) asks.settle(ask.id, { ok: true, value: ask.id });
    expect(vi.getTimerCount()).toBe(0);
    await Promise.all(first.map((ask) => ask.answer));
    const early = asks.open(1_000, () => 'early');
    const answered = asks.open(1_000, () => 'answered');
    const earlyOutcome = early.answer.catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(500);
    // A later turn: a deadline of its own, 500 ms after the first turn's.
    const late = asks.open(1_000, () => 'late');
    const lateOutcome = late.answer.catch((error: unknown) => error);
    expect(vi.getTimerCount()).toBe(2);
    asks.settle(answered.id, { ok: true, value: 'yes' });
    await expect(answered.answer).resolves.toBe('yes');
    await vi.advanceTimersByTimeAsync(499);
    expect(asks.size).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(await earlyOutcome).toMatchObject({ code: 'timeout', message: expect.stringMatching(/^early/) });
    expect(asks.size).toBe(1);
    await vi.advanceTimersByTimeAsync(499);
    expect(asks.size).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await lateOutcome).toMatchObject({ code: 'timeout', message: expect.stringMatching(/^late/) });
    expect(asks.timedOut).toBe(2);
    expect(vi.getTimerCount()).toBe(0);
  });
});
