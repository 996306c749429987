// Route tests of the management API against real in-process nodes (Fastify inject) configured to refuse: a
// body over the configured limit (413), and writes (and, with authReads, reads) without the bearer token (401),
// each leaving the placements as they were.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InjectOptions } from 'fastify';
import type { RunningNode } from '../../src/node/node.js';
import { API, COUNTER, expectError, getPlacements, startTestNode, stopAll, useTestNode } from './node-fixture.js';

describe('management routes with a small body limit', () => {
  const smallLimit = useTestNode({ http: { bodyLimit: 200 } });

  it('413 for a body over the limit, and nothing is written', async () => {
    const node = smallLimit();
    const self = node.address.toString();
    const before = await getPlacements(node);
    const placements = Array.from({ length: 20 }, (_, shardId) => ({ shardId, target: self }));
    const response = await node.http.inject({ method: 'POST', url: `${COUNTER}/placements`, payload: { placements } });
    expectError(response, 413, 'payload_too_large');
    expect(await getPlacements(node)).toEqual(before);
    // A body under the limit still goes through.
    expect(
      (await node.http.inject({ method: 'POST', url: `${COUNTER}/placements`, payload: { shardId: 1, target: self } }))
        .statusCode,
    ).toBe(202);
  });
});

describe('management routes with a bearer token', () => {
  const token = 's3cret-token';
  let writesOnly: RunningNode;
  let readsToo: RunningNode;
  beforeAll(async () => {
    [writesOnly, readsToo] = await Promise.all([
      startTestNode({ authToken: token }),
      startTestNode({ authToken: token, authReads: true }),
    ]);
  });
  afterAll(() => stopAll([writesOnly, readsToo]));

  const writes = (node: RunningNode): InjectOptions[] => [
    { method: 'POST', url: `${COUNTER}/placements`, payload: { shardId: 3, target: node.address.toString() } },
    {
      method: 'POST',
      url: `${COUNTER}/placements`,
      payload: { placements: [{ shardId: 4, target: node.address.toString() }] },
    },
    { method: 'DELETE', url: `${COUNTER}/placements/3` },
    { method: 'POST', url: `${COUNTER}/rebalance`, payload: { shardIds: [3] } },
  ];
  const reads: InjectOptions[] = [
    { method: 'GET', url: `${COUNTER}/placements` },
    { method: 'GET', url: COUNTER },
    { method: 'GET', url: `${API}/cluster/members` },
    { method: 'GET', url: `${API}/health` },
  ];
  const badCredentials: Array<Record<string, string>> = [
    {},
    { authorization: 'Bearer wrong-token!' },
    { authorization: `Bearer ${token}x` },
    { authorization: `Basic ${Buffer.from(`user:${token}`).toString('base64')}` },
    { authorization: token },
    { authorization: 'Bearer ' },
  ];

  it('401 on every write route without the right token, and nothing changes', async () => {
    // A pin to delete, so a DELETE that got through would show.
    const seeded = await writesOnly.http.inject({
      ...writes(writesOnly)[0]!,
      headers: { authorization: `Bearer ${token}` },
    });
    expect(seeded.statusCode).toBe(202);
    const before = await getPlacements(writesOnly);
    for (const request of writes(writesOnly)) {
      for (const headers of badCredentials) {
        expectError(await writesOnly.http.inject({ ...request, headers }), 401, 'unauthorized');
      }
    }
    expect(await getPlacements(writesOnly)).toEqual(before);
  });

  it('401 comes before any other check (unknown type, bad body)', async () => {
    expectError(
      await writesOnly.http.inject({
        method: 'POST',
        url: `${API}/cluster/shards/Nope/placements`,
        payload: { shardId: 1, target: 'x' },
      }),
      401,
      'unauthorized',
    );
    expectError(
      await writesOnly.http.inject({
        method: 'POST',
        url: `${COUNTER}/placements`,
        payload: '{oops',
        headers: { 'content-type': 'application/json' },
      }),
      401,
      'unauthorized',
    );
  });

  it('accepts the right token on every write route (the scheme name in any case)', async () => {
    const [set, bulk, remove, rebalance] = writes(writesOnly);
    const ok = { authorization: `Bearer ${token}` };
    expect((await writesOnly.http.inject({ ...set!, headers: ok })).statusCode).toBe(202);
    expect((await writesOnly.http.inject({ ...bulk!, headers: { authorization: `bearer ${token}` } })).statusCode).toBe(
      202,
    );
    expect((await writesOnly.http.inject({ ...remove!, headers: ok })).statusCode).toBe(204);
    // Past the token check: shard 3 has no home, so the rebalance is refused for that, not for auth.
    expectError(await writesOnly.http.inject({ ...rebalance!, headers: ok }), 409, 'not_allocated');
    expect((await getPlacements(writesOnly)).placements.map((p) => p.shardId)).toEqual([4]);
  });

  it('leaves reads open unless authReads is set', async () => {
    for (const request of reads) {
      expect((await writesOnly.http.inject(request)).statusCode, request.url as string).toBe(200);
    }
  });

  it('with authReads, reads need the token too', async () => {
    for (const request of reads) {
      for (const headers of badCredentials)
        expectError(await readsToo.http.inject({ ...request, headers }), 401, 'unauthorized');
      expect(
        (await readsToo.http.inject({ ...request, headers: { authorization: `Bearer ${token}` } })).statusCode,
      ).toBe(200);
    }
    for (const request of writes(readsToo)) expectError(await readsToo.http.inject(request), 401, 'unauthorized');
  });
});
