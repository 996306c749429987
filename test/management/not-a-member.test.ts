// Writes on a node that is not a member of any cluster (its only seed is a closed port, so it never joins)
// are refused with 503 not_a_member at once, through inject and through its real HTTP server, and nothing
// is written; reads still answer. A member's writes are accepted (the routes tests cover them in detail).
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNode, type RunningNode } from '../../src/node/node.js';
import { API, COUNTER, expectError, getPlacements, startTestNode, stopAll } from './node-fixture.js';

/** A loopback port nothing listens on: bound once to learn a free number, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

describe('a node that never joined refuses writes with 503 not_a_member', () => {
  let loner: RunningNode;
  let member: RunningNode;
  beforeAll(async () => {
    member = await startTestNode();
    loner = await startNode({
      port: 0,
      http: { port: 0 },
      logLevel: 'silent',
      seeds: [`app@127.0.0.1:${await closedPort()}`],
      cluster: { retryJoinIntervalMs: 100 },
    });
  });
  afterAll(() => stopAll([loner, member]));

  const writes = (target: string) => [
    { method: 'POST' as const, url: `${COUNTER}/placements`, payload: { shardId: 3, target } },
    { method: 'POST' as const, url: `${COUNTER}/placements`, payload: { placements: [{ shardId: 4, target }] } },
    { method: 'DELETE' as const, url: `${COUNTER}/placements/3` },
    { method: 'POST' as const, url: `${COUNTER}/rebalance`, payload: { shardIds: [3] } },
  ];

  it('through inject: every write route answers 503, nothing is written, reads still answer', async () => {
    for (const write of writes(member.address.toString())) {
      const body = expectError(await loner.http.inject(write), 503, 'not_a_member');
      expect(body.message).toMatch(/not joined/);
    }
    expect((await getPlacements(loner)).placements).toEqual([]);
    const health = await loner.http.inject({ method: 'GET', url: `${API}/health` });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toMatchObject({ status: 'starting' });
  });

  it('through its real HTTP server', async () => {
    for (const write of writes(member.address.toString())) {
      const response = await fetch(`${loner.httpUrl}${write.url}`, {
        method: write.method,
        ...(write.payload
          ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(write.payload) }
          : {}),
      });
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual({ error: 'not_a_member', message: expect.stringMatching(/not joined/) });
    }
  });

  it('a member takes the same writes', async () => {
    const [set, remove] = [writes(member.address.toString())[0]!, writes(member.address.toString())[2]!];
    expect((await member.http.inject(set)).statusCode).toBe(202);
    expect((await member.http.inject(remove)).statusCode).toBe(204);
  });
});
