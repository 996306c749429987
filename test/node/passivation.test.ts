// Passivation over a real node (startNode, one member, real TCP listener): an entity that passivates itself
// loses its in-memory state and the next message starts it again; the region counts it; out-of-range
// passivation settings are refused at start with invalid_argument, before any port is bound.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActorTsError } from '../../src/errors.js';
import { startNode } from '../../src/node/node.js';
import type { RunningNode } from '../../src/node/node.js';
import type { EntityBehavior } from '../../src/sharding/core/entity-api.js';
import { startTestNode, stopAll } from '../management/node-fixture.js';
import { freePorts, portIsFree } from '../support/ports.js';

let stops = 0;
const counter: EntityBehavior = (ctx) => {
  let count = 0;
  return {
    receive: (message) => {
      if (message === 'bye') ctx.passivate();
      return ++count;
    },
    stop: () => void stops++,
  };
};

describe('startNode: passivation', () => {
  let node: RunningNode | undefined;
  beforeAll(async () => {
    node = await startTestNode({
      entityTypes: [
        { typeName: 'Cart', behavior: counter, numberOfShards: 4, passivation: { maxActiveEntities: 100 } },
      ],
    });
  });
  afterAll(() => stopAll([node]));

  it('a passivated entity starts again, fresh, on the next message', async () => {
    const ref = (node as RunningNode).sharding.entityRefFor('Cart', 'c1');
    expect(await ref.ask('n', { timeoutMs: 5_000 })).toBe(1);
    expect(await ref.ask('bye', { timeoutMs: 5_000 })).toBe(2);
    expect(await ref.ask('n', { timeoutMs: 5_000 })).toBe(1);
    expect(stops).toBe(1);
    const stats = (node as RunningNode).sharding.stats().types.Cart?.region;
    expect(stats?.entitiesPassivated).toEqual({ idle: 0, limit: 0, self: 1 });
    expect(stats?.localEntities).toBe(1);
    const metrics = (await (node as RunningNode).http.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toContain('actor_ts_entities_passivated_total{type="Cart",reason="self"} 1');
    expect(metrics).toContain('actor_ts_entities_passivated_total{type="Cart",reason="idle"} 0');
    expect(metrics).toContain('actor_ts_entities_active{type="Cart"} 1');
  });

  it.each([
    [{ idleMs: 5 }, /passivation\.idleMs must be an integer/],
    [{ maxActiveEntities: 0 }, /passivation\.maxActiveEntities must be an integer/],
  ])('refuses passivation %j at start, naming the type and the field', async (passivation, text) => {
    const [port, httpPort] = (await freePorts(2)) as [number, number];
    const starting = startNode({
      port,
      http: { port: httpPort },
      logLevel: 'silent',
      entityTypes: [{ typeName: 'Cart', behavior: counter, passivation }],
    });
    await expect(starting).rejects.toBeInstanceOf(ActorTsError);
    await expect(starting).rejects.toMatchObject({ code: 'invalid_argument', message: expect.stringMatching(text) });
    expect(await portIsFree(port)).toBe(true);
  });
});
