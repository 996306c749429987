// Typed entity types at run time (issue 37), on two in-process nodes over real TCP: the host checks every message
// against the type's Standard Schema (zod here) before `receive`, which gets the schema's output; a refused ask or
// send fails with invalid_message naming the issues, a refused tell is dropped, both counted
// (actor_ts_messages_invalid_total); a schema that throws or rejects refuses the message without hurting the host;
// what is not a Standard Schema is refused at definition with invalid_argument.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RunningNode } from '../../src/node/node.js';
import { defineEntityType } from '../../src/sharding/core/typed-entity.js';
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { startTestCluster, stopAll } from '../management/node-fixture.js';
import { poll } from '../support/poll.js';

const received: unknown[] = [];

const Account = defineEntityType({
  typeName: 'Account',
  numberOfShards: 10,
  message: z.discriminatedUnion('op', [
    z.object({ op: z.literal('deposit'), amount: z.string().regex(/^\d+$/).transform(Number) }),
    z.object({ op: z.literal('balance') }),
  ]),
  behavior: () => {
    let balance = 0;
    return {
      receive(message) {
        received.push(message);
        if (message.op === 'deposit') balance += message.amount;
        return balance;
      },
    };
  },
});

/** A schema whose validation throws for `{ boom: true }` and rejects (asynchronously) for `{ later: true }`. */
const brittle: StandardSchemaV1<{ boom?: boolean; later?: boolean }> = {
  '~standard': {
    version: 1,
    vendor: 'test',
    validate: (value) => {
      const v = value as { boom?: boolean; later?: boolean };
      if (v.boom === true) throw new Error('the schema blew up');
      if (v.later === true) return Promise.reject(new Error('the schema rejected'));
      return { value: v };
    },
  },
};
const Brittle = defineEntityType({
  typeName: 'Brittle',
  numberOfShards: 10,
  message: brittle,
  behavior: () => ({ receive: () => 'ran' }),
});

describe('typed entity types over TCP', () => {
  let nodes: RunningNode[] = [];
  beforeAll(async () => {
    nodes = await startTestCluster(2, { entityTypes: [Account, Brittle] });
  }, 30_000);
  afterAll(() => stopAll(nodes));

  /** An entity id of `type` hosted by `host`, reached from the other node (so its messages cross TCP). */
  async function remoteEntity(typeName: 'Account' | 'Brittle', host: RunningNode): Promise<string> {
    const via = nodes.find((node) => node !== host) as RunningNode;
    for (let i = 0; ; i++) {
      const id = `${typeName}-${i}`;
      const ref = via.sharding.entityRefFor(typeName, id);
      await ref.ask(typeName === 'Account' ? { op: 'balance' } : {});
      const hosted = host.sharding.localShards(typeName).includes(ref.shardId);
      if (hosted) return id;
    }
  }

  it('checks every message on its host: receive gets the output; a refused ask or send fails with the issues', async () => {
    const [a, b] = nodes as [RunningNode, RunningNode];
    const id = await remoteEntity('Account', b);
    const account = a.sharding.entityRefFor(Account, id);
    received.length = 0;
    expect(await account.ask({ op: 'deposit', amount: '40' })).toBe(40);
    await account.send({ op: 'deposit', amount: '2' });
    expect(received).toEqual([
      { op: 'deposit', amount: 40 },
      { op: 'deposit', amount: 2 },
    ]);
    const untyped = a.sharding.entityRefFor('Account', id);
    await expect(untyped.ask({ op: 'deposit', amount: 'lots' })).rejects.toMatchObject({
      code: 'invalid_message',
      message: expect.stringMatching(/^invalid message: amount: /),
    });
    await expect(untyped.send({ op: 'withdraw' })).rejects.toMatchObject({ code: 'invalid_message' });
    untyped.tell('not even an object');
    const metrics = async (): Promise<string> => (await b.http.inject({ method: 'GET', url: '/metrics' })).body;
    await poll('the dropped tell counted', async () =>
      (await metrics()).includes('actor_ts_messages_invalid_total{type="Account"} 3'),
    );
    expect(received).toHaveLength(2);
    expect(await account.ask({ op: 'balance' })).toBe(42);
    // Health lists each type with its entities active on this node (issue 37's active count).
    const health = (await b.http.inject({ method: 'GET', url: '/actor-ts/health' })).json<{
      entityTypes: Array<{ typeName: string; activeEntities: number; durable: boolean }>;
    }>();
    const listed = health.entityTypes.find((type) => type.typeName === 'Account');
    expect(listed).toMatchObject({
      durable: false,
      activeEntities: b.sharding.stats().types['Account']?.region.localEntities,
    });
    expect(listed?.activeEntities).toBeGreaterThanOrEqual(1);
  });

  it('a schema that throws or rejects refuses the message, and the host carries on', async () => {
    const [a, b] = nodes as [RunningNode, RunningNode];
    const id = await remoteEntity('Brittle', b);
    const ref = a.sharding.entityRefFor(Brittle, id);
    await expect(ref.ask({ boom: true })).rejects.toMatchObject({
      code: 'invalid_message',
      message: expect.stringContaining('the schema blew up'),
    });
    await expect(ref.ask({ later: true })).rejects.toMatchObject({
      code: 'invalid_message',
      message: expect.stringContaining('the schema rejected'),
    });
    expect(await ref.ask({})).toBe('ran');
  });

  it('refuses at definition what is not a Standard Schema', () => {
    const notSchemas: unknown[] = [undefined, {}, { '~standard': { version: 2, validate: () => ({}) } }, z];
    for (const message of notSchemas) {
      expect(() =>
        defineEntityType({
          typeName: 'X',
          message: message as StandardSchemaV1,
          behavior: () => ({ receive: () => 1 }),
        }),
      ).toThrow(
        expect.objectContaining({ code: 'invalid_argument', message: expect.stringMatching(/Standard Schema/) }),
      );
    }
  });
});
