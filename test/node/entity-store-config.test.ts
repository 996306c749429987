// How a node is given its entity store (issue 36): `--entity-store lmdb:DIR | postgres://...` parsed into the
// config (anything else a usage error), and startNode refusing, before it binds a port, a durable type without a
// store, a store of no known kind, and a store it cannot reach (entity_store_unavailable, every port released).
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { NodeConfigInput } from '../../src/node/config.js';
import { counterBehavior } from '../../src/node/counter.js';
import { startNode, type StartNodeInput } from '../../src/node/node.js';
import { freePorts, portIsFree } from '../support/ports.js';

async function runNodeCommand(...args: string[]): Promise<{ code: number; err: string; input?: NodeConfigInput }> {
  const err: string[] = [];
  let input: NodeConfigInput | undefined;
  const code = await main(
    ['node', 'actor-ts-placement', 'node', ...args],
    { out: () => undefined, err: (line) => err.push(line) },
    { runNode: (given) => ((input = given), Promise.resolve(0)) },
  );
  return { code, err: err.join('\n'), ...(input === undefined ? {} : { input }) };
}

async function refusal(input: StartNodeInput): Promise<{ code?: string; message: string }> {
  return startNode({ port: 0, http: { port: 0 }, logLevel: 'silent', ...input }).then(
    async (node) => {
      await node.stop();
      throw new Error('the node started');
    },
    (error: { code?: string; message: string }) => error,
  );
}

describe('entity store configuration', () => {
  it('--entity-store takes lmdb:DIR and postgres:// URLs, and refuses anything else as a usage error', async () => {
    expect((await runNodeCommand('--entity-store', 'lmdb:/var/lib/app/entities')).input?.entityStore).toEqual({
      kind: 'lmdb',
      dir: '/var/lib/app/entities',
    });
    const url = 'postgres://app@db.internal:5432/app';
    expect((await runNodeCommand('--entity-store', url)).input?.entityStore).toEqual({ kind: 'postgres', url });
    const bad = await runNodeCommand('--entity-store', 'mysql://db/app');
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/neither postgres:\/\/user@host:5432\/db nor lmdb:DIR/);
  });

  it('refuses a durable type without a store, and a store of no known kind, before anything starts', async () => {
    const durable = { entityTypes: [{ typeName: 'Cart', behavior: counterBehavior, durable: true }] };
    expect(await refusal(durable)).toMatchObject({
      code: 'invalid_argument',
      message: expect.stringMatching(/"Cart" is durable, but the node has no entityStore/),
    });
    const kinds = { entityStore: { kind: 'redis', url: 'redis://x' } } as unknown as StartNodeInput;
    expect(await refusal(kinds)).toMatchObject({
      code: 'invalid_argument',
      message: expect.stringMatching(/entityStore.kind must be 'postgres' or 'lmdb'/),
    });
  });

  it('a PostgreSQL store nobody answers at refuses the start with entity_store_unavailable, every port free', async () => {
    const [nobody, port, httpPort] = (await freePorts(3)) as [number, number, number];
    const error = await refusal({
      port,
      http: { port: httpPort },
      entityStore: { kind: 'postgres', url: `postgres://app@127.0.0.1:${nobody}/app` },
    });
    expect(error).toMatchObject({ code: 'entity_store_unavailable' });
    expect([await portIsFree(port), await portIsFree(httpPort)]).toEqual([true, true]);
  });
});
