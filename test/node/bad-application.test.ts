// startNode refuses bad application input with a typed error naming the problem and leaves no port bound:
// duplicate type names, a behavior that is not a function, a fallback that is not a strategy, httpRoutes that
// throws or takes a path of the management API. Application routes run behind the node's auth and error shape.
import { describe, expect, it } from 'vitest';
import { ActorTsError } from '../../src/errors.js';
import { startNode, type StartNodeInput } from '../../src/node/node.js';
import type { EntityBehavior } from '../../src/sharding/core/entity-api.js';
import type { AllocationStrategy } from '../../src/sharding/strategies/index.js';
import { expectError, startTestNode, stopAll } from '../management/node-fixture.js';
import { freePorts, portIsFree } from '../support/ports.js';

const behavior: EntityBehavior = () => ({ receive: () => 'ok' });

/** Starts a node on two fixed free ports with `input`; returns the rejection, after checking both ports are free again. */
async function refusal(input: StartNodeInput): Promise<ActorTsError> {
  const [port, httpPort] = (await freePorts(2)) as [number, number];
  let failure: unknown;
  try {
    const node = await startNode({ port, http: { port: httpPort }, logLevel: 'silent', ...input });
    await node.stop();
  } catch (error) {
    failure = error;
  }
  expect(failure).toBeInstanceOf(ActorTsError);
  expect(await portIsFree(port)).toBe(true);
  expect(await portIsFree(httpPort)).toBe(true);
  return failure as ActorTsError;
}

describe('startNode: bad application input', () => {
  it('refuses duplicate type names, naming the type', async () => {
    const error = await refusal({
      entityTypes: [
        { typeName: 'Chat', behavior },
        { typeName: 'Chat', behavior },
      ],
    });
    expect(error.code).toBe('invalid_argument');
    expect(error.message).toMatch(/"Chat" is given twice/);
  });

  it('refuses a behavior that is not a function, a bad type name and a bad shard count', async () => {
    const notFunction = await refusal({
      entityTypes: [{ typeName: 'Chat', behavior: {} as unknown as EntityBehavior }],
    });
    expect(notFunction.message).toMatch(/"Chat".*behavior must be a function/);
    expect((await refusal({ entityTypes: [{ typeName: 'a b', behavior }] })).message).toMatch(/typeName must match/);
    expect((await refusal({ entityTypes: [{ typeName: 'Chat', behavior, numberOfShards: 0 }] })).message).toMatch(
      /"Chat".*numberOfShards/,
    );
    expect((await refusal({ entityTypes: 'Chat' as unknown as [] })).message).toMatch(/entityTypes must be an array/);
  });

  it('refuses a fallback that is not an allocation strategy', async () => {
    const error = await refusal({
      entityTypes: [
        { typeName: 'Chat', behavior, fallback: { allocate: () => undefined } as unknown as AllocationStrategy },
      ],
    });
    expect(error.message).toMatch(/"Chat": fallback must be an AllocationStrategy/);
  });

  it('refuses httpRoutes that is not a function, that throws, or that registers a route the management API owns', async () => {
    expect((await refusal({ httpRoutes: 'x' as unknown as () => void })).message).toMatch(
      /httpRoutes must be a function/,
    );
    const thrown = await refusal({
      httpRoutes: () => {
        throw new Error('no routes today');
      },
    });
    expect(thrown.message).toBe('httpRoutes failed: no routes today');
    const rejected = await refusal({ httpRoutes: async () => Promise.reject(new Error('later')) });
    expect(rejected.message).toBe('httpRoutes failed: later');
    for (const path of ['/actor-ts/health', '/actor-ts/mine', '/metrics', '/']) {
      const owned = await refusal({ httpRoutes: (app) => void app.get(path, async () => 'mine') });
      expect(owned.message).toMatch(
        new RegExp(`httpRoutes registered GET ${path.replace('/', '\\/')}, a path the management API owns`),
      );
    }
  });
});

describe('application routes on the node server', () => {
  it('need the bearer token for writes (reads too with authReads) and answer errors as { error, message }', async () => {
    const node = await startTestNode({
      port: 0,
      http: { port: 0 },
      authToken: 'secret',
      entityTypes: [{ typeName: 'Chat', behavior }],
      httpRoutes: (app) => {
        app.get('/app/read', async () => ({ read: true }));
        app.post('/app/write', async () => ({ written: true }));
        app.get('/app/fails', async () => {
          throw new ActorTsError('invalid_argument', 'bad chat');
        });
      },
    });
    try {
      expect((await node.http.inject({ method: 'GET', url: '/app/read' })).json()).toEqual({ read: true });
      expectError(await node.http.inject({ method: 'POST', url: '/app/write' }), 401, 'unauthorized');
      const authorized = await node.http.inject({
        method: 'POST',
        url: '/app/write',
        headers: { authorization: 'Bearer secret' },
      });
      expect(authorized.json()).toEqual({ written: true });
      expect(
        expectError(await node.http.inject({ method: 'GET', url: '/app/fails' }), 400, 'invalid_argument').message,
      ).toBe('bad chat');
    } finally {
      await stopAll([node]);
    }
  });
});
