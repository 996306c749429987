// Cordon, uncordon, drain and audit routes on one real node through inject: the bad inputs the issue names
// (not a member, a malformed address, draining the last node that could take the shards), members listing
// `cordoned`, and every accepted write audited once, newest first, with by and reason.
import { describe, expect, it } from 'vitest';
import { COUNTER_SHARDS } from '../../src/node/counter.js';
import { shardIdFor } from '../../src/sharding/core/shard-id.js';
import { API, COUNTER, expectError, increment, useTestNode } from './node-fixture.js';
import type { MembersAnswer } from '../../src/management/api-shapes.js';

interface AuditBody {
  entries: Array<{
    action: string;
    typeName: string | null;
    shardIds: number[];
    target: string | null;
    by: string | null;
    reason: string | null;
    hlc: unknown;
  }>;
}

describe('cordon, uncordon, drain and audit routes on one node', () => {
  const node = useTestNode();
  const self = (): string => node().address.toString();
  const memberPath = (address: string): string => `${API}/cluster/members/${encodeURIComponent(address)}`;
  const audit = async (): Promise<AuditBody['entries']> =>
    (await node().http.inject({ method: 'GET', url: `${API}/audit` })).json<AuditBody>().entries;
  const cordoned = async (): Promise<boolean | undefined> =>
    (await node().http.inject({ method: 'GET', url: `${API}/cluster/members` })).json<
      MembersAnswer & { members: Array<{ cordoned: boolean }> }
    >().members[0]?.cordoned;

  it('refuses a cordon of an address that is not a member (404 unknown_member) and of a malformed one (400)', async () => {
    const before = (await audit()).length;
    expectError(
      await node().http.inject({ method: 'POST', url: `${memberPath('app@127.0.0.1:1')}/cordon`, payload: {} }),
      404,
      'unknown_member',
    );
    expectError(
      await node().http.inject({ method: 'POST', url: `${memberPath('not-an-address')}/cordon`, payload: {} }),
      400,
      'invalid_address',
    );
    expectError(
      await node().http.inject({ method: 'POST', url: `${memberPath('app@host:99999')}/drain`, payload: {} }),
      400,
      'invalid_address',
    );
    expectError(
      await node().http.inject({
        method: 'POST',
        url: `${memberPath(self())}/cordon`,
        payload: { by: 'x'.repeat(200) },
      }),
      400,
      'invalid_request',
    );
    expectError(
      await node().http.inject({ method: 'POST', url: `${memberPath(self())}/cordon`, payload: { extra: 1 } }),
      400,
      'invalid_request',
    );
    expect(await cordoned()).toBe(false);
    expect((await audit()).length).toBe(before);
  });

  it('cordons and uncordons a member, lists it as cordoned meanwhile, and audits both', async () => {
    const response = await node().http.inject({
      method: 'POST',
      url: `${memberPath(self())}/cordon`,
      payload: { by: 'ops@test', reason: 'kernel upgrade' },
    });
    expect(response.statusCode, response.body).toBe(202);
    expect(response.json()).toMatchObject({
      address: self(),
      cordoned: true,
      by: 'ops@test',
      reason: 'kernel upgrade',
    });
    expect(await cordoned()).toBe(true);
    // The actor-ts:// form names the same member.
    const removed = await node().http.inject({
      method: 'DELETE',
      url: `${memberPath(`actor-ts://${self()}`)}/cordon?by=ops%40test&reason=done`,
    });
    expect(removed.statusCode, removed.body).toBe(204);
    expect(await cordoned()).toBe(false);
    expectError(
      await node().http.inject({ method: 'DELETE', url: `${memberPath(self())}/cordon` }),
      404,
      'not_cordoned',
    );
    const [uncordon, cordon] = await audit();
    expect(uncordon).toMatchObject({
      action: 'uncordon',
      typeName: null,
      shardIds: [],
      target: self(),
      by: 'ops@test',
      reason: 'done',
    });
    expect(cordon).toMatchObject({
      action: 'cordon',
      typeName: null,
      target: self(),
      by: 'ops@test',
      reason: 'kernel upgrade',
    });
    expect(cordon?.hlc).toMatchObject({ node: self() });
  });

  it('takes a cordon without a body', async () => {
    const response = await node().http.inject({ method: 'POST', url: `${memberPath(self())}/cordon` });
    expect(response.statusCode, response.body).toBe(202);
    expect(response.json()).toMatchObject({ by: null, reason: null });
    expect((await node().http.inject({ method: 'DELETE', url: `${memberPath(self())}/cordon` })).statusCode).toBe(204);
  });

  it('warns about a pin to a cordoned node: it takes no new shards until uncordoned', async () => {
    expect(
      (await node().http.inject({ method: 'POST', url: `${memberPath(self())}/cordon`, payload: {} })).statusCode,
    ).toBe(202);
    const pin = await node().http.inject({
      method: 'POST',
      url: `${COUNTER}/placements`,
      payload: { shardId: 9, target: self(), mode: 'require' },
    });
    expect(pin.statusCode, pin.body).toBe(202);
    const warnings = pin.json<{ warnings: Array<{ shardId: number; message: string }> }>().warnings;
    expect(warnings).toEqual([
      {
        shardId: 9,
        target: self(),
        message: expect.stringMatching(
          /is cordoned: it takes no new shards until uncordoned; unless shard 9 already runs there/,
        ),
      },
    ]);
    expect((await node().http.inject({ method: 'DELETE', url: `${COUNTER}/placements/9` })).statusCode).toBe(204);
    expect((await node().http.inject({ method: 'DELETE', url: `${memberPath(self())}/cordon` })).statusCode).toBe(204);
  });

  it('refuses to drain the last node that could take its shards (409 no_capacity): nothing cordoned, nothing moved', async () => {
    const { shardId } = await increment(node(), 'drain-me');
    const before = (await audit()).length;
    expectError(
      await node().http.inject({ method: 'POST', url: `${memberPath(self())}/drain`, payload: { reason: 'r' } }),
      409,
      'no_capacity',
    );
    expect(await cordoned()).toBe(false);
    const locations = (await node().http.inject({ method: 'GET', url: COUNTER })).json<{
      regions: Array<{ shards: number[] }>;
      handingOff: number[];
    }>();
    expect(locations.regions[0]?.shards).toContain(shardId);
    expect(locations.handingOff).toEqual([]);
    expect((await audit()).length).toBe(before);
  });

  it('audits pins, unpins and rebalances once each with by and reason; a refused write is not audited', async () => {
    const pin = await node().http.inject({
      method: 'POST',
      url: `${COUNTER}/placements`,
      payload: {
        placements: [
          { shardId: 3, target: self(), by: 'ann', reason: 'hot' },
          { shardId: 1, target: self(), by: 'ann', reason: 'hot' },
        ],
      },
    });
    expect(pin.statusCode, pin.body).toBe(202);
    // A rebalance of a shard with no home moves nothing: refused (409), not audited.
    expectError(
      await node().http.inject({
        method: 'POST',
        url: `${COUNTER}/rebalance`,
        payload: { shardIds: [3], by: 'bob', reason: 'test' },
      }),
      409,
      'not_allocated',
    );
    // A message to an entity of shard 3 gives it its home; then the rebalance hands it off.
    const entity = Array.from({ length: 10_000 }, (_, i) => `e${i}`).find(
      (id) => shardIdFor(id, COUNTER_SHARDS) === 3,
    ) as string;
    expect((await node().http.inject({ method: 'POST', url: `/counters/${entity}/increment` })).statusCode).toBe(200);
    const rebalance = await node().http.inject({
      method: 'POST',
      url: `${COUNTER}/rebalance`,
      payload: { shardIds: [3], by: 'bob', reason: 'test' },
    });
    expect(rebalance.statusCode, rebalance.body).toBe(202);
    expect(
      (await node().http.inject({ method: 'DELETE', url: `${COUNTER}/placements/3?by=cy&reason=over` })).statusCode,
    ).toBe(204);
    expect((await node().http.inject({ method: 'DELETE', url: `${COUNTER}/placements/1` })).statusCode).toBe(204);
    expectError(await node().http.inject({ method: 'DELETE', url: `${COUNTER}/placements/1` }), 404, 'not_found');
    expectError(
      await node().http.inject({ method: 'POST', url: `${COUNTER}/rebalance`, payload: { shardIds: [1], reason: '' } }),
      400,
      'invalid_request',
    );
    expectError(
      await node().http.inject({ method: 'DELETE', url: `${COUNTER}/placements/1?who=me` }),
      400,
      'invalid_request',
    );
    const [unpin1, unpin3, moved, pinned] = await audit();
    expect(pinned).toMatchObject({
      action: 'pin',
      typeName: 'Counter',
      shardIds: [1, 3],
      target: self(),
      by: 'ann',
      reason: 'hot',
    });
    expect(pinned?.hlc).toMatchObject({ node: self() });
    expect(moved).toMatchObject({ action: 'rebalance', typeName: 'Counter', by: 'bob', reason: 'test', hlc: null });
    expect(unpin3).toMatchObject({ action: 'unpin', typeName: 'Counter', shardIds: [3], by: 'cy', reason: 'over' });
    expect(unpin1).toMatchObject({ action: 'unpin', shardIds: [1], by: null, reason: null });
  });
});

describe('cordon routes with an auth token', () => {
  const node = useTestNode({ authToken: 'tok' });
  const path = (): string => `${API}/cluster/members/${encodeURIComponent(node().address.toString())}`;

  it('need the token for cordon, uncordon and drain, and change nothing without it', async () => {
    for (const [method, suffix] of [
      ['POST', 'cordon'],
      ['DELETE', 'cordon'],
      ['POST', 'drain'],
    ] as const) {
      expectError(await node().http.inject({ method, url: `${path()}/${suffix}` }), 401, 'unauthorized');
    }
    expect(node().sharding.cordons.list()).toEqual([]);
    const ok = await node().http.inject({
      method: 'POST',
      url: `${path()}/cordon`,
      headers: { authorization: 'Bearer tok' },
    });
    expect(ok.statusCode, ok.body).toBe(202);
    expect(
      (await node().http.inject({ method: 'GET', url: `${API}/audit` })).json<AuditBody>().entries.map((e) => e.action),
    ).toEqual(['cordon']);
  });
});
