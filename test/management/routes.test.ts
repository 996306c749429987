// Route tests of the management API against a real in-process node (Fastify inject): every success path of
// issue 5, and every rejection with its status, its `{ error, message }` body and no change to the placements.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { InjectOptions } from 'fastify';
import type { RunningNode } from '../../src/node/node.js';
import {
  API,
  COUNTER,
  clearPlacements,
  expectError,
  getLocations,
  getPlacements,
  homeOf,
  increment,
  pollUntil,
  startTestNode,
  stopAll,
  useTestNode,
  type LocationsBody,
  type MembersBody,
  type SetPlacementsReply,
} from './node-fixture.js';

const NOT_A_MEMBER = 'app@10.0.0.5:7777';

describe('management routes on a one-node cluster', () => {
  let node: RunningNode;
  let self: string;

  const inject = (options: InjectOptions) => node.http.inject(options);
  const post = (url: string, payload: unknown) =>
    inject({ method: 'POST', url, payload: payload as Record<string, unknown> });
  const setPlacements = (payload: unknown) => post(`${COUNTER}/placements`, payload);

  /** Runs a request that must be rejected, and checks it left the placements (HLCs included) as they were. */
  async function expectRejected(
    options: InjectOptions,
    status: number,
    code: string,
  ): Promise<{ error: string; message: string }> {
    const before = await getPlacements(node);
    const body = expectError(await inject(options), status, code);
    expect(await getPlacements(node)).toEqual(before);
    return body;
  }
  const rejectedPlacement = (payload: unknown, status: number, code: string) =>
    expectRejected(
      { method: 'POST', url: `${COUNTER}/placements`, payload: payload as Record<string, unknown> },
      status,
      code,
    );

  beforeAll(async () => {
    node = await startTestNode();
    self = node.address.toString();
  });
  afterAll(() => stopAll([node]));

  beforeEach(async () => {
    await clearPlacements(node);
    // A baseline pin, so "nothing changed" is checked against a non-empty store.
    expect((await setPlacements({ shardId: 500, target: self })).statusCode).toBe(202);
  });

  describe('POST placements', () => {
    it('writes a single placement and answers 202 with what was written', async () => {
      const response = await setPlacements({ shardId: 42, target: self });
      expect(response.statusCode).toBe(202);
      const body = response.json<SetPlacementsReply>();
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
      expect(response.json<SetPlacementsReply>().placements[0]?.target).toBe(self);
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
      const body = response.json<SetPlacementsReply>();
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
        expect(Object.keys(placement).sort()).toEqual([
          'by',
          'expiresAt',
          'hlc',
          'mode',
          'reason',
          'shardId',
          'target',
          'writer',
        ]);
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
      expect(refused.message).toContain(
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
      const body = response.json<SetPlacementsReply>();
      expect(body.placements.map((p) => p.target)).toEqual([NOT_A_MEMBER, self]);
      expect(body.warnings).toHaveLength(1);
      expect(body.warnings[0]).toMatchObject({ shardId: 11, target: NOT_A_MEMBER });
      expect(body.warnings[0]?.message).toContain(NOT_A_MEMBER);
      expect((await getPlacements(node)).placements.find((p) => p.shardId === 11)?.target).toBe(NOT_A_MEMBER);
    });

    it('lets a later write replace an earlier one', async () => {
      const first = (
        await setPlacements({ shardId: 500, target: NOT_A_MEMBER, allowUnknownTarget: true })
      ).json<SetPlacementsReply>().placements[0];
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
    it('hands allocated shards off (accepted) and reports the ones without a home (homeless)', async () => {
      const { shardId } = await increment(node, 'rebalance-me');
      const homeless = shardId === 998 ? 997 : 998;
      expect(homeOf(await getLocations(node), homeless)).toBeUndefined();
      const response = await post(`${COUNTER}/rebalance`, { shardIds: [shardId, homeless, shardId] });
      expect(response.statusCode).toBe(202);
      expect(response.json()).toEqual({ accepted: [shardId], homeless: [homeless] });
      // The coordinator re-allocates a handed-off shard at once; with one node it comes back here.
      await pollUntil(
        async () => homeOf(await getLocations(node), shardId) === self,
        `shard ${shardId} to be re-homed`,
      );
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
      const body = response.json<LocationsBody>();
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
      const body = response.json<MembersBody>();
      expect(body.self).toBe(self);
      expect(body.members).toEqual([
        {
          address: self,
          status: 'up',
          appVersion: '1.0.0',
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
        entityTypes: [{ typeName: 'Counter', numberOfShards: 1000 }],
        pid: process.pid,
        placementStore: { generation: 0, slots: expect.any(Number), baseSlots: 0, documentItems: expect.any(Number) },
        replication: {
          peers: 0,
          syncedPeers: 0,
          peersBehind: 0,
          framesRejected: 0,
          sendFailures: 0,
          rejectedValues: { outOfRange: 0, aheadOfClock: 0 },
          heldValues: 0,
          quarantinedValues: 0,
          awaitingMissingUpdates: false,
          problems: [],
        },
        storage: {
          durable: false,
          path: null,
          bytesOnDisk: 0,
          lastCommitAt: null,
          logRecordsSinceSnapshot: 0,
          restored: false,
          failure: null,
        },
      });
    });

    it('answers unknown paths with a 404 in the error shape', async () => {
      expectError(await inject({ method: 'GET', url: `${API}/cluster/nothing/here/at/all` }), 404, 'not_found');
    });
  });

  describe('rejected writes change nothing', () => {
    it('400 for malformed JSON or an empty JSON body', async () => {
      const json = { 'content-type': 'application/json' };
      await expectRejected(
        { method: 'POST', url: `${COUNTER}/placements`, payload: '{"shardId": 1, "target": ', headers: json },
        400,
        'malformed_json',
      );
      await expectRejected(
        { method: 'POST', url: `${COUNTER}/placements`, payload: '', headers: json },
        400,
        'malformed_json',
      );
      await expectRejected(
        { method: 'POST', url: `${COUNTER}/rebalance`, payload: '{shardIds:[1]}', headers: json },
        400,
        'malformed_json',
      );
    });

    it('400 for schema violations of the single form', async () => {
      await rejectedPlacement({ target: self }, 400, 'invalid_request');
      await rejectedPlacement({ shardId: 1 }, 400, 'invalid_request');
      const extra = await rejectedPlacement({ shardId: 1, target: self, force: true }, 400, 'invalid_request');
      expect(extra.message).toContain('force');
      await rejectedPlacement({ shardId: '1', target: self }, 400, 'invalid_request');
      await rejectedPlacement({ shardId: 1.5, target: self }, 400, 'invalid_request');
      await rejectedPlacement({ shardId: 1, target: 7701 }, 400, 'invalid_request');
      const negative = await rejectedPlacement({ shardId: -1, target: self }, 400, 'invalid_request');
      expect(negative.message).toContain('shardId');
      const empty = await rejectedPlacement({ shardId: 1, target: '' }, 400, 'invalid_request');
      expect(empty.message).toContain('target');
      await rejectedPlacement({ shardId: 1, target: `app@${'h'.repeat(300)}:1` }, 400, 'invalid_request');
      await rejectedPlacement([{ shardId: 1, target: self }], 400, 'invalid_request');
      await rejectedPlacement({}, 400, 'invalid_request');
    });

    it('400 for schema violations of the bulk form, with no entry written', async () => {
      await rejectedPlacement({ placements: [] }, 400, 'invalid_request');
      await rejectedPlacement({ placements: [{ shardId: 1, target: self }, { shardId: 2 }] }, 400, 'invalid_request');
      await rejectedPlacement(
        {
          placements: [
            { shardId: 1, target: self },
            { shardId: -2, target: self },
          ],
        },
        400,
        'invalid_request',
      );
      await rejectedPlacement({ placements: [{ shardId: 1, target: self, x: 1 }] }, 400, 'invalid_request');
      await rejectedPlacement(
        { placements: [{ shardId: 1, target: self }], shardId: 2, target: self },
        400,
        'invalid_request',
      );
      await rejectedPlacement({ placements: { shardId: 1, target: self } }, 400, 'invalid_request');
    });

    it('400 for a shard id >= numberOfShards, also when only one bulk entry is out of range', async () => {
      const single = await rejectedPlacement({ shardId: 1000, target: self }, 400, 'invalid_shard');
      expect(single.message).toContain('0..999');
      await rejectedPlacement({ shardId: Number.MAX_SAFE_INTEGER, target: self }, 400, 'invalid_shard');
      await rejectedPlacement(
        {
          placements: [
            { shardId: 1, target: self },
            { shardId: 1000, target: self },
          ],
        },
        400,
        'invalid_shard',
      );
    });

    it('400 for an invalid address, also when only one bulk entry is bad', async () => {
      for (const target of [
        'app@host',
        'app@host:',
        '@host:1',
        'app@host:0',
        'app@host:70000',
        'app@bad host:1',
        'http://app@host:1',
      ]) {
        const body = await rejectedPlacement({ shardId: 1, target }, 400, 'invalid_address');
        expect(body.message).toContain('system@host:port');
      }
      await rejectedPlacement(
        {
          placements: [
            { shardId: 1, target: self },
            { shardId: 2, target: 'app@host' },
          ],
        },
        400,
        'invalid_address',
      );
    });

    it('400 invalid_target for a target that is neither an address nor a selector, also in bulk', async () => {
      // Without `@` or `=` a target is neither form; the message names both.
      for (const target of ['nope', 'actor-ts://']) {
        const body = await rejectedPlacement({ shardId: 1, target }, 400, 'invalid_target');
        expect(body.message).toContain('system@host:port');
        expect(body.message).toContain('KEY=VALUE');
      }
      await rejectedPlacement(
        {
          placements: [
            { shardId: 1, target: self },
            { shardId: 2, target: 'nope' },
          ],
        },
        400,
        'invalid_target',
      );
    });

    it('404 for an unknown entity type on every typed route', async () => {
      const unknown = `${API}/cluster/shards/NoSuchType`;
      await expectRejected({ method: 'GET', url: unknown }, 404, 'unknown_type');
      await expectRejected({ method: 'GET', url: `${unknown}/placements` }, 404, 'unknown_type');
      const body = await expectRejected(
        { method: 'POST', url: `${unknown}/placements`, payload: { shardId: 1, target: self } },
        404,
        'unknown_type',
      );
      expect(body.message).toContain('NoSuchType');
      await expectRejected({ method: 'DELETE', url: `${unknown}/placements/500` }, 404, 'unknown_type');
      await expectRejected(
        { method: 'POST', url: `${unknown}/rebalance`, payload: { shardIds: [1] } },
        404,
        'unknown_type',
      );
    });

    it('415 for a body that is not JSON', async () => {
      const text = await expectRejected(
        {
          method: 'POST',
          url: `${COUNTER}/placements`,
          payload: '{"shardId":1,"target":"app@h:1"}',
          headers: { 'content-type': 'text/plain' },
        },
        415,
        'unsupported_media_type',
      );
      expect(text.message).toContain('text/plain');
      await expectRejected(
        {
          method: 'POST',
          url: `${COUNTER}/placements`,
          payload: 'shardId=1&target=app%40h%3A1',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        },
        415,
        'unsupported_media_type',
      );
      await expectRejected(
        {
          method: 'POST',
          url: `${COUNTER}/rebalance`,
          payload: '{"shardIds":[1]}',
          headers: { 'content-type': 'text/plain' },
        },
        415,
        'unsupported_media_type',
      );
    });

    it('accepts application/json with a charset', async () => {
      const response = await inject({
        method: 'POST',
        url: `${COUNTER}/placements`,
        payload: JSON.stringify({ shardId: 8, target: self }),
        headers: { 'content-type': 'application/json; charset=utf-8' },
      });
      expect(response.statusCode).toBe(202);
    });
  });
});

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
