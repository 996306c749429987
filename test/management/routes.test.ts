// Route tests of the management API against a real in-process node (Fastify inject): every success path of
// issue 5. The rejections are in routes-rejections.test.ts, the body limit and the bearer token in
// routes-auth.test.ts.
import { readFileSync } from 'node:fs';
import { PROTOCOL_VERSION } from '../../src/cluster/transport/wire-message.js';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningNode } from '../../src/node/node.js';
import { MEMORY_STORAGE, ALONE_REPLICATION } from '../support/health-inputs.js';
import { useOneNodeRoutes } from '../support/one-node-routes.js';
import { homeOn, waitForHome } from '../support/shard-homes.js';
import { API, clearPlacements, COUNTER, expectError, getLocations, getPlacements, increment } from './node-fixture.js';
import { PLACEMENT_FIELDS } from '../support/placement-json.js';
import type { MembersAnswer, PinsWritten, ShardLocationsAnswer } from '../../src/management/api-shapes.js';

const NOT_A_MEMBER = 'app@10.0.0.5:7777';

describe('management routes on a one-node cluster', () => {
  const routes = useOneNodeRoutes();
  const { inject, post, setPlacements, expectRejected } = routes;
  let node: RunningNode;
  let self: string;
  beforeAll(() => {
    node = routes.node();
    self = node.address.toString();
  });

  describe('POST placements', () => {
    it('writes a single placement and answers 202 with what was written', async () => {
      const response = await setPlacements({ shardId: 42, target: self });
      expect(response.statusCode).toBe(202);
      const body = response.json<PinsWritten>();
      expect(body.warnings).toEqual([]);
      expect(body.placements).toHaveLength(1);
      const [written] = body.placements;
      expect(written).toMatchObject({ shardId: 42, target: self, writer: self });
      expect(written?.hlc).toMatchObject({ node: self, counter: expect.any(Number), wallMs: expect.any(Number) });
      expect((await getPlacements(node)).placements).toContainEqual(written);
    });

    it('accepts an actor-ts:// target and stores the plain address', async () => {
      const response = await setPlacements({ shardId: 7, target: `actor-ts://${self}` });
      expect(response.statusCode).toBe(202);
      expect(response.json<PinsWritten>().placements[0]?.target).toBe(self);
      expect((await getPlacements(node)).placements.find((p) => p.shardId === 7)?.target).toBe(self);
    });

    it('writes the bulk form, every entry, and lists them sorted by shard id', async () => {
      const response = await setPlacements({
        placements: [
          { shardId: 900, target: self },
          { shardId: 3, target: `actor-ts://${self}` },
          { shardId: 0, target: self },
          { shardId: 999, target: self },
        ],
      });
      expect(response.statusCode).toBe(202);
      const body = response.json<PinsWritten>();
      expect(body.placements.map((p) => [p.shardId, p.target])).toEqual([
        [900, self],
        [3, self],
        [0, self],
        [999, self],
      ]);
      expect(body.warnings).toEqual([]);
      const listed = (await getPlacements(node)).placements;
      expect(listed.map((p) => p.shardId)).toEqual([0, 3, 500, 900, 999]);
      for (const placement of listed) {
        expect(Object.keys(placement).sort()).toEqual(PLACEMENT_FIELDS);
        expect(placement).toMatchObject({ mode: 'prefer', expiresAt: null, reason: null, by: null });
      }
    });

    it('refuses a target that is not a current member with 409 unknown_target, writing nothing of the request', async () => {
      await clearPlacements(node);
      const refused = expectError(
        await setPlacements({
          placements: [
            { shardId: 12, target: self },
            { shardId: 11, target: NOT_A_MEMBER },
          ],
        }),
        409,
        'unknown_target',
      );
      // A prefer pin to nobody does not unhome its shard: the fallback keeps it; the pin would simply do nothing.
      expect(refused.message).toContain(
        `no current member matches target ${NOT_A_MEMBER}, so the pin of shard 11 would be in force nowhere ` +
          '(the shard stays where the fallback puts it)',
      );
      const required = expectError(
        await setPlacements({ shardId: 11, target: NOT_A_MEMBER, mode: 'require' }),
        409,
        'unknown_target',
      );
      expect(required.message).toContain(
        `no current member matches target ${NOT_A_MEMBER}, so shard 11 would lose its home`,
      );
      expect((await getPlacements(node)).placements).toEqual([]);
    });

    it('with allowUnknownTarget: warns, but still writes, when the target is not a current member', async () => {
      const response = await setPlacements({
        placements: [
          { shardId: 11, target: NOT_A_MEMBER },
          { shardId: 12, target: self },
        ],
        allowUnknownTarget: true,
      });
      expect(response.statusCode).toBe(202);
      const body = response.json<PinsWritten>();
      expect(body.placements.map((p) => p.target)).toEqual([NOT_A_MEMBER, self]);
      expect(body.warnings).toHaveLength(1);
      expect(body.warnings[0]).toMatchObject({ shardId: 11, target: NOT_A_MEMBER });
      expect(body.warnings[0]?.message).toContain(NOT_A_MEMBER);
      expect((await getPlacements(node)).placements.find((p) => p.shardId === 11)?.target).toBe(NOT_A_MEMBER);
    });

    it('lets a later write replace an earlier one', async () => {
      const first = (
        await setPlacements({ shardId: 500, target: NOT_A_MEMBER, allowUnknownTarget: true })
      ).json<PinsWritten>().placements[0];
      const listed = (await getPlacements(node)).placements.filter((p) => p.shardId === 500);
      expect(listed).toEqual([first]);
    });
  });

  describe('GET placements', () => {
    it('answers { placements: [] } when there are none', async () => {
      await clearPlacements(node);
      const response = await inject({ method: 'GET', url: `${COUNTER}/placements` });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ placements: [] });
    });

    it('sorts by shard id whatever the write order', async () => {
      for (const shardId of [77, 5, 640, 1])
        expect((await setPlacements({ shardId, target: self })).statusCode).toBe(202);
      expect((await getPlacements(node)).placements.map((p) => p.shardId)).toEqual([1, 5, 77, 500, 640]);
    });
  });

  describe('DELETE placement', () => {
    it('answers 204 with no body and the pin is gone', async () => {
      const response = await inject({ method: 'DELETE', url: `${COUNTER}/placements/500` });
      expect(response.statusCode).toBe(204);
      expect(response.body).toBe('');
      expect((await getPlacements(node)).placements).toEqual([]);
    });

    it('answers 404 when the shard has no explicit placement', async () => {
      await expectRejected({ method: 'DELETE', url: `${COUNTER}/placements/501` }, 404, 'not_found');
      expect((await inject({ method: 'DELETE', url: `${COUNTER}/placements/500` })).statusCode).toBe(204);
      await expectRejected({ method: 'DELETE', url: `${COUNTER}/placements/500` }, 404, 'not_found');
    });

    it('rejects a shard id that is not a non-negative integer or is out of range', async () => {
      for (const bad of ['abc', '-1', '1.5', '1e3']) {
        await expectRejected({ method: 'DELETE', url: `${COUNTER}/placements/${bad}` }, 400, 'invalid_request');
      }
      const body = await expectRejected({ method: 'DELETE', url: `${COUNTER}/placements/1000` }, 400, 'invalid_shard');
      expect(body.message).toContain('0..999');
    });
  });

  describe('POST rebalance', () => {
    it('hands allocated shards off (accepted) and reports the ones without a home (unallocated)', async () => {
      const { shardId } = await increment(node, 'rebalance-me');
      const unallocated = shardId === 998 ? 997 : 998;
      expect(await homeOn(node, unallocated)).toBeUndefined();
      const response = await post(`${COUNTER}/rebalance`, { shardIds: [shardId, unallocated, shardId] });
      expect(response.statusCode).toBe(202);
      // `homeless`, the old name of the same list, is answered for one more release.
      expect(response.json()).toEqual({ accepted: [shardId], unallocated: [unallocated], homeless: [unallocated] });
      // The coordinator re-allocates a handed-off shard at once; with one node it comes back here.
      await waitForHome(node, shardId, self, `shard ${shardId} to be re-homed`);
      expect((await increment(node, 'rebalance-me')).node).toBe(self);
    });

    it('rejects bad shard ids and changes nothing', async () => {
      const { shardId } = await increment(node, 'stays-put');
      const locations = await getLocations(node);
      const rebalance = (payload: unknown) =>
        ({ method: 'POST', url: `${COUNTER}/rebalance`, payload: payload as Record<string, unknown> }) as const;
      await expectRejected(rebalance({ shardIds: [shardId, 1000] }), 400, 'invalid_shard');
      await expectRejected(rebalance({ shardIds: [] }), 400, 'invalid_request');
      await expectRejected(rebalance({ shardIds: [-1] }), 400, 'invalid_request');
      await expectRejected(rebalance({ shardIds: ['1'] }), 400, 'invalid_request');
      await expectRejected(rebalance({ shardIds: [1.5] }), 400, 'invalid_request');
      await expectRejected(rebalance({}), 400, 'invalid_request');
      await expectRejected(rebalance({ shardIds: [shardId], extra: true }), 400, 'invalid_request');
      expect(await getLocations(node)).toEqual(locations);
    });
  });

  describe('read routes', () => {
    it('GET shards answers { regions: [...], handingOff: [...] } with the allocated shards', async () => {
      const answers = await Promise.all(['ann', 'bob', 'cy', 'dee'].map((id) => increment(node, id)));
      const response = await inject({ method: 'GET', url: COUNTER });
      expect(response.statusCode).toBe(200);
      const body = response.json<ShardLocationsAnswer>();
      expect(Object.keys(body)).toEqual(['regions', 'handingOff']);
      expect(body.handingOff).toEqual([]);
      expect(body.regions.map((region) => region.address)).toEqual([self]);
      for (const answer of answers) {
        expect(answer.node).toBe(self);
        expect(body.regions[0]?.shards).toContain(answer.shardId);
      }
    });

    it('GET members lists this node as an up member', async () => {
      const response = await inject({ method: 'GET', url: `${API}/cluster/members` });
      expect(response.statusCode).toBe(200);
      const body = response.json<MembersAnswer>();
      expect(body.self).toBe(self);
      expect(body.members).toEqual([
        {
          address: self,
          status: 'up',
          appVersion: '1.0.0',
          release: JSON.parse(readFileSync('package.json', 'utf8')).version,
          protocol: PROTOCOL_VERSION,
          upNumber: expect.any(Number),
          reachable: true,
          roles: [],
          attributes: {},
          cordoned: false,
        },
      ]);
    });

    it('GET health answers ok for an up node', async () => {
      const response = await inject({ method: 'GET', url: `${API}/health` });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({
        status: 'ok',
        memberStatus: 'up',
        reasons: [],
        self,
        entityTypes: [
          {
            typeName: 'Counter',
            numberOfShards: 1000,
            shardIdFunction: 'fnv1a-utf8',
            durable: false,
            activeEntities: expect.any(Number),
          },
        ],
        pid: process.pid,
        placementStore: { generation: 0, slots: expect.any(Number), baseSlots: 0, documentItems: expect.any(Number) },
        replication: ALONE_REPLICATION,
        storage: MEMORY_STORAGE,
      });
    });

    it('answers unknown paths with a 404 in the error shape', async () => {
      expectError(await inject({ method: 'GET', url: `${API}/cluster/nothing/here/at/all` }), 404, 'not_found');
    });
  });
});
