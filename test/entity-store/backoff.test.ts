// The entity store's backoff (src/entity-store/backoff.ts), on an injected clock: after a failed call the store
// is not asked again until the wait passed (calls meanwhile fail at once, saying when it retries), the wait
// doubles with each failed probe up to its bound, calls that failed together grow it once, and a success ends
// the outage (health's problem cleared).
import { describe, expect, it } from 'vitest';
import { BackoffStore } from '../../src/entity-store/backoff.js';
import { MemoryEntityStore } from '../support/memory-entity-store.js';

describe('entity store backoff', () => {
  it('fails fast while it waits, probes after the wait, doubles it per failed probe, and recovers', async () => {
    let now = 1_000;
    const inner = new MemoryEntityStore();
    let asked = 0;
    const load = inner.load.bind(inner);
    inner.load = (type, id) => (asked++, load(type, id));
    const store = new BackoffStore(inner, { initialMs: 100, maxMs: 400, now: () => now });
    inner.down = true;
    await expect(store.load('T', 'a')).rejects.toMatchObject({ code: 'entity_store_unavailable' });
    expect(store.problem).toMatch(/down/);
    now += 50;
    await expect(store.load('T', 'a')).rejects.toThrow(/retrying in 50 ms/);
    expect(asked).toBe(1);
    const waits: number[] = [];
    for (let probe = 0; probe < 4; probe++) {
      now += 1_000;
      await expect(store.load('T', 'a')).rejects.toThrow(/down/);
      await expect(store.load('T', 'a')).rejects.toThrow(/retrying in (\d+) ms/);
      const refusal = await store.load('T', 'a').then(
        () => 'answered',
        (error: Error) => error.message,
      );
      waits.push(Number(/retrying in (\d+) ms/.exec(refusal)?.[1]));
    }
    expect(waits).toEqual([200, 400, 400, 400]);
    expect(asked).toBe(5);
    inner.down = false;
    now += 1_000;
    expect(await store.load('T', 'a')).toBeUndefined();
    expect(store.problem).toBeUndefined();
    expect(await store.claim({ typeName: 'T', shardId: 1 })).toBe(1);
  });

  it('calls that fail together grow the wait once', async () => {
    let now = 0;
    const inner = new MemoryEntityStore();
    const store = new BackoffStore(inner, { initialMs: 100, maxMs: 10_000, now: () => now });
    inner.down = true;
    await Promise.allSettled(Array.from({ length: 10 }, () => store.load('T', 'x')));
    now += 99;
    await expect(store.load('T', 'x')).rejects.toThrow(/retrying in 1 ms/);
  });
});
