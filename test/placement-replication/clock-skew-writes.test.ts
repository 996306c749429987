// Issue 27 case 7 (clock_skew): a node whose clock is more than maxAheadMs (7 days) behind holds what the
// others write as "ahead of its clock"; a write of such a shard through it would never win anywhere else,
// yet it was answered 202. Now it is refused with 503 clock_skew saying what to fix, and nothing is written.
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { PlacementStoreError } from '../../crdt/index.js';
import { sendError } from '../../src/management/errors.js';
import { forgedCluster, type ForgedCluster } from './forged-harness.js';

const NOW = 1_780_000_000_000;
const DAY = 24 * 3_600_000;

let cluster: ForgedCluster | undefined;
afterEach(() => cluster?.close());

describe('writes a replica cannot make win (issue 27 case 7)', () => {
  it('a node 8 days behind refuses, with clock_skew, writes to shards it holds newer values for; its other writes win everywhere', () => {
    const clock = { t: NOW };
    cluster = forgedCluster(3, { clocks: [() => clock.t - 8 * DAY, () => clock.t, () => clock.t] });
    const [behind, b, c] = cluster.stores as [
      NonNullable<ForgedCluster['stores'][0]>,
      NonNullable<ForgedCluster['stores'][0]>,
      NonNullable<ForgedCluster['stores'][0]>,
    ];
    for (let shard = 0; shard < 30; shard++) (shard % 2 === 0 ? b : c).set('T', shard, `first-${shard}`);
    cluster.settle();
    expect(behind.stats().heldValues).toBe(30);
    let refused = 0;
    for (let shard = 0; shard < 60; shard++) {
      try {
        behind.set('T', shard, `late-${shard}`);
      } catch (error) {
        expect(error).toBeInstanceOf(PlacementStoreError);
        expect((error as PlacementStoreError).code).toBe('clock_skew');
        expect((error as Error).message).toMatch(/Fix the clock that is wrong \(NTP/);
        refused++;
      }
    }
    expect(refused).toBe(30);
    cluster.settle();
    // Every write that was taken wins on every replica: nothing acknowledged is lost. (The node behind still
    // holds the others' values, and its health says so, until its clock is fixed.)
    for (const store of [b, c]) {
      for (let shard = 0; shard < 60; shard++) {
        expect(store.snapshot('T').placements.get(shard)?.target).toBe(shard < 30 ? `first-${shard}` : `late-${shard}`);
      }
    }
    for (let shard = 30; shard < 60; shard++)
      expect(behind.snapshot('T').placements.get(shard)?.target).toBe(`late-${shard}`);
  });

  it('is answered 503 clock_skew', async () => {
    const app = Fastify();
    app.setErrorHandler((error: PlacementStoreError, _request, reply) => sendError(reply, error));
    app.post('/write', async () => {
      throw new PlacementStoreError('clock_skew', 'fix the clock');
    });
    const response = await app.inject({ method: 'POST', url: '/write' });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({ error: 'clock_skew', message: 'fix the clock' });
    await app.close();
  });
});
