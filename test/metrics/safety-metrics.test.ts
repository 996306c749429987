// Issue 25, "metrics that are absent until something happens": every labelled series exists at 0 from the
// first scrape for every known label value, and the new gauges and counters (shards waiting, cordons,
// replication lag, rejected frames, held values, storage failure, refused writes by code) follow the source.
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { MetricsEventHub, metricsPlugin, type MetricsSource } from '../../src/management/metrics.js';
import {
  REFUSED_WRITE_CODES,
  WriteRefusals,
  countRefusedWrites,
  type SafetySource,
} from '../../src/management/safety-metrics.js';
import { parseSamples } from '../support/metrics-samples.js';

interface Safety {
  waiting: number;
  cordoned: number;
  behind: number;
  oldest: number | null;
  rejected: number;
  held: number;
  failed: boolean;
  failedCommits: number;
}

function source(hub: MetricsEventHub, safety: Safety): MetricsSource {
  const safe: SafetySource = {
    shardsWaiting: () => [['Counter', safety.waiting] as const, ['Other', 0] as const],
    cordonedMembers: () => safety.cordoned,
    replication: () => ({
      peersBehind: safety.behind,
      oldestUnreplicatedSeconds: safety.oldest,
      framesRejected: safety.rejected,
      heldValues: safety.held,
    }),
    storage: () => ({ failed: safety.failed, failedCommits: safety.failedCommits }),
  };
  return {
    shardsHosted: () => [['Counter', 0] as const, ['Other', 0] as const],
    placements: () => [],
    members: () => [],
    placementStore: () => ({ generation: 0, items: 0 }),
    durable: true,
    subscribe: hub.subscribe,
    safety: safe,
  };
}

const quiet = (): Safety => ({
  waiting: 0,
  cordoned: 0,
  behind: 0,
  oldest: null,
  rejected: 0,
  held: 0,
  failed: false,
  failedCommits: 0,
});

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function serve(metricsSource: MetricsSource, refusals?: WriteRefusals): Promise<FastifyInstance> {
  const app = Fastify();
  apps.push(app);
  if (refusals !== undefined) {
    countRefusedWrites(app, '/actor-ts', refusals);
    app.post('/actor-ts/pin', async (_request, reply) =>
      reply.code(409).send({ error: 'unknown_target', message: 'no' }),
    );
    app.post('/actor-ts/ok', async (_request, reply) => reply.code(202).send({}));
    app.post('/counters/x', async (_request, reply) =>
      reply.code(400).send({ error: 'invalid_request', message: 'not a placement write' }),
    );
  }
  await app.register(metricsPlugin, {
    source: metricsSource,
    metrics: { processMetrics: false, ...(refusals ? { refusals } : {}) },
  });
  await app.ready();
  return app;
}

async function samples(app: FastifyInstance): Promise<Map<string, number>> {
  return parseSamples((await app.inject({ method: 'GET', url: '/metrics' })).body);
}

describe('metrics at 0 from the start', () => {
  it('has every per-type counter and histogram of every known type, and every refusal code, at 0 before any event', async () => {
    const found = await samples(await serve(source(new MetricsEventHub(), quiet()), new WriteRefusals()));
    for (const type of ['Counter', 'Other']) {
      expect(found.get(`actor_ts_handoffs_total{type="${type}"}`), type).toBe(0);
      expect(found.get(`actor_ts_rebalance_rounds_total{type="${type}"}`), type).toBe(0);
      expect(found.get(`actor_ts_handoff_duration_seconds_count{type="${type}"}`), type).toBe(0);
      expect(found.get(`actor_ts_shards_waiting{type="${type}"}`), type).toBe(0);
    }
    for (const code of REFUSED_WRITE_CODES)
      expect(found.get(`actor_ts_placement_writes_refused_total{code="${code}"}`), code).toBe(0);
    for (const name of [
      'actor_ts_cordoned_members',
      'actor_ts_replication_peers_behind',
      'actor_ts_replication_oldest_unreplicated_seconds',
      'actor_ts_replication_frames_rejected_total',
      'actor_ts_placement_values_held',
      'actor_ts_placement_storage_failed',
      'actor_ts_placement_storage_failed_commits_total',
    ]) {
      expect(found.get(name), name).toBe(0);
    }
  });

  it('keeps a hand-off that completed before the first scrape (priming never resets what was observed)', async () => {
    const hub = new MetricsEventHub();
    const app = await serve(source(hub, quiet()));
    hub.onHandOffCompleted('Counter', 0.2);
    hub.onRebalanceRound('Counter');
    const first = await samples(app);
    expect(first.get('actor_ts_handoffs_total{type="Counter"}')).toBe(1);
    expect(first.get('actor_ts_handoff_duration_seconds_count{type="Counter"}')).toBe(1);
    hub.onHandOffCompleted('Counter', 0.3);
    expect((await samples(app)).get('actor_ts_handoff_duration_seconds_count{type="Counter"}')).toBe(2);
  });
});

describe('the safety metrics', () => {
  it('follow the source: waiting shards, cordons, lag, rejected frames, held values, failed storage', async () => {
    const safety = quiet();
    const app = await serve(source(new MetricsEventHub(), safety));
    Object.assign(safety, {
      waiting: 3,
      cordoned: 1,
      behind: 2,
      oldest: 12.5,
      rejected: 4,
      held: 5,
      failed: true,
      failedCommits: 1,
    });
    const found = await samples(app);
    expect(found.get('actor_ts_shards_waiting{type="Counter"}')).toBe(3);
    expect(found.get('actor_ts_cordoned_members')).toBe(1);
    expect(found.get('actor_ts_replication_peers_behind')).toBe(2);
    expect(found.get('actor_ts_replication_oldest_unreplicated_seconds')).toBe(12.5);
    expect(found.get('actor_ts_replication_frames_rejected_total')).toBe(4);
    expect(found.get('actor_ts_placement_values_held')).toBe(5);
    expect(found.get('actor_ts_placement_storage_failed')).toBe(1);
    expect(found.get('actor_ts_placement_storage_failed_commits_total')).toBe(1);
  });

  it('counts refused write requests under the API by their error code, not successes or other routes', async () => {
    const refusals = new WriteRefusals();
    const app = await serve(source(new MetricsEventHub(), quiet()), refusals);
    await app.inject({ method: 'POST', url: '/actor-ts/pin' });
    await app.inject({ method: 'POST', url: '/actor-ts/pin' });
    await app.inject({ method: 'POST', url: '/actor-ts/ok' });
    await app.inject({ method: 'POST', url: '/counters/x' });
    const found = await samples(app);
    expect(found.get('actor_ts_placement_writes_refused_total{code="unknown_target"}')).toBe(2);
    expect(found.get('actor_ts_placement_writes_refused_total{code="invalid_request"}')).toBe(0);
  });
});
