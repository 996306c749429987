// startNode with the application's own entity types over real TCP: two nodes, two types, each under external
// allocation over its own fallback; every management route, explain, dry runs, drain, health (what the console
// lists), metrics and the CLI's --type see both; the demo Counter and its routes are gone; the application's
// routes serve next to the management API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { NodeAddress } from '../../src/cluster/address.js';
import { ActorTsError } from '../../src/errors.js';
import { typesToShow } from '../../src/management/console/page/model.js';
import { HealthAnswer, type ShardLocationsAnswer } from '../../src/management/api-shapes.js';
import { checkedAnswer } from '../support/api-answers.js';
import type { RunningNode } from '../../src/node/node.js';
import type { NodeEntityType } from '../../src/node/application.js';
import type { EntityBehavior } from '../../src/sharding/core/entity-api.js';
import type { AllocationStrategy } from '../../src/sharding/strategies/index.js';
import { run } from '../cli/cli-runner.js';
import { API, expectError, pollUntil, startTestCluster, stopAll } from '../management/node-fixture.js';
import { shardIdFor } from '../../src/sharding/core/shard-id.js';

interface Where {
  readonly typeName: string;
  readonly entityId: string;
  readonly node: string;
}

const where: EntityBehavior = (ctx) => ({
  receive: (): Where => ({ typeName: ctx.typeName, entityId: ctx.entityId, node: ctx.node.toString() }),
});

/** Fewest shards first (ties: lowest address), counting how often it was asked: proves a type's own fallback is used. */
function countingFallback(counter: { allocations: number }): AllocationStrategy {
  return {
    allocate(_shardId, candidates, current) {
      counter.allocations++;
      const load = (candidate: NodeAddress): number => current.get(candidate.toString())?.size ?? 0;
      return [...candidates].sort((x, y) => load(x) - load(y) || x.toString().localeCompare(y.toString()))[0];
    },
    rebalance: () => new Set(),
  };
}

function appRoutes(app: FastifyInstance, node: RunningNode): void {
  app.get<{ Params: { type: string; id: string } }>('/where/:type/:id', async (request) =>
    node.sharding.entityRefFor(request.params.type, request.params.id).ask<Where>('where', { timeoutMs: 5_000 }),
  );
}

describe('startNode with application entity types (two nodes, real TCP)', () => {
  let nodes: RunningNode[] = [];
  const ledgerFallback = { allocations: 0 };
  const a = (): RunningNode => nodes[0] as RunningNode;
  const b = (): RunningNode => nodes[1] as RunningNode;
  const inject = (node: RunningNode, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) =>
    node.http.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }) });

  beforeAll(async () => {
    nodes = await startTestCluster(2, {
      entityTypes: [
        { typeName: 'Chat', behavior: where, numberOfShards: 20 },
        {
          typeName: 'Ledger',
          behavior: where,
          numberOfShards: 8,
          fallback: countingFallback(ledgerFallback),
        } satisfies NodeEntityType,
      ],
      httpRoutes: appRoutes,
    });
  }, 60_000);
  afterAll(() => stopAll(nodes));

  it('serves the application routes, runs both types, and registers neither the demo type nor its routes', async () => {
    for (const typeName of ['Chat', 'Ledger']) {
      const answer = await inject(b(), 'GET', `/where/${typeName}/e1`);
      expect(answer.statusCode).toBe(200);
      expect(answer.json<Where>()).toMatchObject({ typeName, entityId: 'e1' });
    }
    expect(ledgerFallback.allocations).toBeGreaterThan(0);
    expectError(await inject(a(), 'GET', `${API}/cluster/shards/Counter`), 404, 'unknown_type');
    expectError(await inject(a(), 'POST', '/counters/x/increment'), 404, 'not_found');
    expect(a().placements('Ledger').typeName).toBe('Ledger');
    expect(() => a().placements('Counter')).toThrow(ActorTsError);
    expect(() => a().counterPlacements).toThrow(expect.objectContaining({ code: 'unknown_type' }));
  });

  it('every placement, rebalance and explain route (with dry runs) works for both types', async () => {
    const target = b().address.toString();
    for (const typeName of ['Chat', 'Ledger']) {
      const path = `${API}/cluster/shards/${typeName}`;
      const located = await inject(a(), 'GET', path);
      expect(located.statusCode).toBe(200);
      expect(
        located
          .json<ShardLocationsAnswer>()
          .regions.map((r) => r.address)
          .sort(),
      ).toEqual(nodes.map((n) => n.address.toString()).sort());

      const dry = await inject(a(), 'POST', `${path}/placements?dryRun=true`, { shardId: 1, target });
      expect(dry.statusCode).toBe(200);
      expect(dry.json<{ dryRun: boolean }>().dryRun).toBe(true);
      expect(await inject(a(), 'POST', `${path}/placements`, { shardId: 1, target, reason: 'test' })).toMatchObject({
        statusCode: 202,
      });
      await pollUntil(
        async () =>
          (await inject(b(), 'GET', `${path}/placements`)).json<{ placements: unknown[] }>().placements.length === 1,
        `${typeName} pin seen on b`,
      );

      // Shard 1 gets a home first: a rebalance of a shard with none moves nothing (409 not_allocated).
      const inShard1 = Array.from({ length: 1000 }, (_, i) => `e${i}`).find(
        (id) => shardIdFor(id, typeName === 'Chat' ? 20 : 8) === 1,
      ) as string;
      expect((await inject(b(), 'GET', `/where/${typeName}/${inShard1}`)).statusCode).toBe(200);
      const rebalanceDry = await inject(a(), 'POST', `${path}/rebalance?dryRun=true`, { shardIds: [1] });
      expect(rebalanceDry.statusCode).toBe(200);
      expect((await inject(a(), 'POST', `${path}/rebalance`, { shardIds: [1] })).statusCode).toBe(202);
      const explained = await inject(b(), 'GET', `${path}/explain/1`);
      expect(explained.statusCode).toBe(200);
      expect(JSON.stringify(explained.json())).toContain(target);
      expect((await inject(a(), 'DELETE', `${path}/placements/1`)).statusCode).toBe(204);
    }
    // Both types' pins were audited under their own names.
    const audit = (await inject(a(), 'GET', `${API}/audit`)).json<{
      entries: Array<{ action: string; typeName: string | null }>;
    }>();
    expect(new Set(audit.entries.filter((e) => e.action === 'pin').map((e) => e.typeName))).toEqual(
      new Set(['Chat', 'Ledger']),
    );
  });

  it('health lists both types, so the console shows both without ?type=; metrics label both', async () => {
    const health = checkedAnswer(HealthAnswer, (await inject(a(), 'GET', `${API}/health`)).json());
    expect(health.entityTypes).toEqual([
      {
        typeName: 'Chat',
        numberOfShards: 20,
        shardIdFunction: 'fnv1a-utf8',
        durable: false,
        activeEntities: expect.any(Number),
      },
      {
        typeName: 'Ledger',
        numberOfShards: 8,
        shardIdFunction: 'fnv1a-utf8',
        durable: false,
        activeEntities: expect.any(Number),
      },
    ]);
    expect(typesToShow('', health)).toEqual(['Chat', 'Ledger']);
    const page = await inject(a(), 'GET', '/');
    expect(page.statusCode).toBe(200);
    const metrics = (await inject(a(), 'GET', '/metrics')).body;
    expect(metrics).toMatch(/actor_ts_shards_hosted\{type="Chat"\}/);
    expect(metrics).toMatch(/actor_ts_shards_hosted\{type="Ledger"\}/);
  });

  it('the CLI reads and explains either type with --type', async () => {
    const url = a().httpUrl;
    const shards = await run('shards', '--type', 'Ledger', '--url', url);
    expect(shards.code).toBe(0);
    const explain = await run('explain', '0', '--type', 'Chat', '--url', url);
    expect(explain.code).toBe(0);
    expect(explain.out.join('\n')).toContain('0');
    expect((await run('shards', '--type', 'Counter', '--url', url)).code).not.toBe(0);
  });

  it('drain moves the shards of both types off a node', async () => {
    const drained: NodeAddress = b().address;
    // Shards of both types on b first (pinned there, then unpinned so the drain may move them).
    for (const typeName of ['Chat', 'Ledger']) {
      await a()
        .placements(typeName)
        .setPlacements([0, 2, 3].map((shardId) => ({ shardId, target: drained })));
      await a()
        .placements(typeName)
        .rebalanceNow([0, 2, 3])
        .catch(() => undefined);
      for (const id of ['x0', 'x1', 'x2', 'x3', 'x4']) await inject(a(), 'GET', `/where/${typeName}/${id}`);
      await pollUntil(async () => b().sharding.localShards(typeName).length > 0, `${typeName} shards on b`);
      for (const shardId of [0, 2, 3]) await a().placements(typeName).removePlacement(shardId);
    }
    const outcome = await inject(
      a(),
      'POST',
      `${API}/cluster/members/${encodeURIComponent(drained.toString())}/drain`,
      { reason: 'test' },
    );
    expect(outcome.statusCode).toBe(202);
    const moves = outcome.json<{ moves: Record<string, unknown[]> }>().moves;
    expect(Object.keys(moves).sort()).toEqual(['Chat', 'Ledger']);
    for (const typeName of ['Chat', 'Ledger']) {
      await pollUntil(async () => b().sharding.localShards(typeName).length === 0, `${typeName} drained off b`, 20_000);
    }
  });
});
