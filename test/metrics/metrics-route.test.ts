// GET /metrics: Prometheus text with every node metric of the right type, values following a fake MetricsSource
// (a pin, a hand-off, a member going down) and its events; the read guard applies; nothing is global.
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { MetricsEventHub, metricsPlugin, type MetricsSource } from '../../src/management/metrics.js';
import { parseSamples } from '../support/metrics-samples.js';

interface FakeState {
  hosted: Map<string, number>;
  pins: Array<{ type: string; mode: string; count: number }>;
  members: Array<{ status: string; reachable: boolean }>;
  store: { generation: number; items: number };
}

function fakeSource(state: FakeState, hub: MetricsEventHub, durable = false): MetricsSource {
  return {
    shardsHosted: () => state.hosted.entries(),
    placements: () => state.pins,
    members: () => state.members,
    placementStore: () => state.store,
    durable,
    subscribe: hub.subscribe,
  };
}

function freshState(): FakeState {
  return {
    hosted: new Map([['Counter', 4]]),
    pins: [],
    members: [
      { status: 'up', reachable: true },
      { status: 'up', reachable: true },
      { status: 'up', reachable: true },
    ],
    store: { generation: 0, items: 0 },
  };
}

/** Sample lines of a scrape as `name{labels}` -> value. */
const samples = parseSamples;

/** Asserts the scrape's value of each named sample (undefined: no such sample). */
function expectSamples(text: string, expected: Record<string, unknown>): void {
  const found = samples(text);
  expect(Object.fromEntries(Object.keys(expected).map((name) => [name, found.get(name)]))).toEqual(expected);
}

function types(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const match of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) out.set(match[1] ?? '', match[2] ?? '');
  return out;
}

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function serve(source: MetricsSource, guard?: (request: FastifyRequest) => Promise<void>, now?: () => number) {
  const app = Fastify();
  apps.push(app);
  await app.register(metricsPlugin, { source, ...(guard ? { guard } : {}), metrics: now ? { now } : {} });
  await app.ready();
  return app;
}

async function scrape(app: FastifyInstance): Promise<string> {
  const response = await app.inject({ method: 'GET', url: '/metrics' });
  expect(response.statusCode).toBe(200);
  return response.body;
}

describe('GET /metrics', () => {
  it('answers in the Prometheus text format with every metric of the right type', async () => {
    const app = await serve(fakeSource(freshState(), new MetricsEventHub(), true));
    const response = await app.inject({ method: 'GET', url: '/metrics' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const expected: Record<string, string> = {
      actor_ts_shards_hosted: 'gauge',
      actor_ts_placements: 'gauge',
      actor_ts_handoffs_total: 'counter',
      actor_ts_handoff_duration_seconds: 'histogram',
      actor_ts_rebalance_rounds_total: 'counter',
      actor_ts_cluster_members: 'gauge',
      actor_ts_unreachable_members: 'gauge',
      actor_ts_placement_updates_total: 'counter',
      actor_ts_placement_store_items: 'gauge',
      actor_ts_placement_store_generation: 'gauge',
      actor_ts_placement_propagation_seconds: 'histogram',
      actor_ts_placement_storage_commit_seconds: 'histogram',
      // Default Node.js process metrics, under the same prefix.
      actor_ts_process_cpu_seconds_total: 'counter',
      actor_ts_nodejs_heap_size_used_bytes: 'gauge',
    };
    const found = types(response.body);
    for (const [name, type] of Object.entries(expected)) expect(found.get(name), name).toBe(type);
    // Prometheus naming: no shard id label anywhere, and no metric outside the prefix.
    expect(response.body).not.toMatch(/shard_?id=/i);
    for (const name of found.keys()) expect(name.startsWith('actor_ts_'), name).toBe(true);
  });

  it('leaves out the storage commit histogram when placements are not durable', async () => {
    const app = await serve(fakeSource(freshState(), new MetricsEventHub(), false));
    expect(types(await scrape(app)).has('actor_ts_placement_storage_commit_seconds')).toBe(false);
  });

  it('follows the source: a pin, a hand-off, a member going down, store growth', async () => {
    const state = freshState();
    const hub = new MetricsEventHub();
    let now = 10_000;
    const app = await serve(fakeSource(state, hub, true), undefined, () => now);

    expectSamples(await scrape(app), {
      'actor_ts_shards_hosted{type="Counter"}': 4,
      'actor_ts_cluster_members{status="up"}': 3,
      'actor_ts_cluster_members{status="down"}': 0,
      actor_ts_unreachable_members: 0,
      'actor_ts_placements{type="Counter",mode="pin"}': undefined,
      'actor_ts_placement_updates_total{origin="remote"}': 0,
    });

    // A pin written elsewhere arrives 250 ms after its HLC wall time; one written here.
    state.pins = [{ type: 'Counter', mode: 'pin', count: 1 }];
    state.store = { generation: 1, items: 7 };
    hub.onPlacementApplied('remote', now - 250);
    hub.onPlacementApplied('local', now);
    // Its shard hands off in 1.5 s after a rebalance round; this node now hosts one shard fewer.
    hub.onRebalanceRound('Counter');
    hub.onHandOffCompleted('Counter', 1.5);
    state.hosted.set('Counter', 3);
    hub.onStorageCommit(0.002);
    // A member goes down, another becomes unreachable.
    state.members = [
      { status: 'up', reachable: true },
      { status: 'up', reachable: false },
      { status: 'down', reachable: false },
    ];
    now += 1;

    expectSamples(await scrape(app), {
      'actor_ts_placements{type="Counter",mode="pin"}': 1,
      actor_ts_placement_store_generation: 1,
      actor_ts_placement_store_items: 7,
      'actor_ts_placement_updates_total{origin="remote"}': 1,
      'actor_ts_placement_updates_total{origin="local"}': 1,
      actor_ts_placement_propagation_seconds_count: 1,
      actor_ts_placement_propagation_seconds_sum: expect.closeTo(0.25, 9),
      'actor_ts_placement_propagation_seconds_bucket{le="0.1"}': 0,
      'actor_ts_placement_propagation_seconds_bucket{le="0.25"}': 1,
      'actor_ts_rebalance_rounds_total{type="Counter"}': 1,
      'actor_ts_handoffs_total{type="Counter"}': 1,
      'actor_ts_handoff_duration_seconds_sum{type="Counter"}': 1.5,
      'actor_ts_handoff_duration_seconds_bucket{le="1",type="Counter"}': 0,
      'actor_ts_handoff_duration_seconds_bucket{le="2.5",type="Counter"}': 1,
      actor_ts_placement_storage_commit_seconds_count: 1,
      'actor_ts_shards_hosted{type="Counter"}': 3,
      'actor_ts_cluster_members{status="up"}': 2,
      'actor_ts_cluster_members{status="down"}': 1,
      actor_ts_unreachable_members: 2,
    });

    // A type this node no longer hosts disappears instead of sticking at its last value.
    state.hosted.clear();
    expectSamples(await scrape(app), { 'actor_ts_shards_hosted{type="Counter"}': undefined });
  });

  it('counts clock skew as no delay rather than a negative one', async () => {
    const hub = new MetricsEventHub();
    const app = await serve(fakeSource(freshState(), hub), undefined, () => 1_000);
    hub.onPlacementApplied('remote', 5_000);
    expectSamples(await scrape(app), {
      actor_ts_placement_propagation_seconds_sum: 0,
      actor_ts_placement_propagation_seconds_count: 1,
    });
  });

  it('keeps one registry per node: two servers in one process count separately', async () => {
    const hubA = new MetricsEventHub();
    const hubB = new MetricsEventHub();
    const a = await serve(fakeSource(freshState(), hubA));
    const b = await serve(fakeSource(freshState(), hubB));
    hubA.onHandOffCompleted('Counter', 0.1);
    expect(samples(await scrape(a)).get('actor_ts_handoffs_total{type="Counter"}')).toBe(1);
    expect(samples(await scrape(b)).get('actor_ts_handoffs_total{type="Counter"}')).toBe(0);
  });

  it('stops listening to the source when the server closes', async () => {
    const hub = new MetricsEventHub();
    let listening = 0;
    const source = fakeSource(freshState(), hub);
    const counting: MetricsSource = {
      ...source,
      subscribe: (events) => {
        listening += 1;
        const stop = hub.subscribe(events);
        return () => {
          listening -= 1;
          stop();
        };
      },
    };
    const app = await serve(counting);
    expect(listening).toBe(1);
    await app.close();
    expect(listening).toBe(0);
  });

  it('applies the read guard: 401 without the token, the scrape with it', async () => {
    const guard = async (request: FastifyRequest): Promise<void> => {
      if (request.headers.authorization !== 'Bearer s3cret') {
        throw Object.assign(new Error('missing or wrong bearer token'), { statusCode: 401 });
      }
    };
    const app = await serve(fakeSource(freshState(), new MetricsEventHub()), guard);
    const denied = await app.inject({ method: 'GET', url: '/metrics' });
    expect(denied.statusCode).toBe(401);
    expect(denied.body).not.toContain('actor_ts_');
    const allowed = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer s3cret' } });
    expect(allowed.statusCode).toBe(200);
    expect(allowed.body).toContain('actor_ts_shards_hosted');
  });
});
