// Route tests of the management API against a real in-process node (Fastify inject): every rejection of issue 5
// with its status, its `{ error, message }` body and no change to the placements.
import { beforeAll, describe, expect, it } from 'vitest';
import { useOneNodeRoutes } from '../support/one-node-routes.js';
import { API, COUNTER } from './node-fixture.js';

/** Targets that look like an address but are not one (no port, port out of range, a space, a scheme). */
const BAD_ADDRESSES = [
  'app@host',
  'app@host:',
  '@host:1',
  'app@host:0',
  'app@host:70000',
  'app@bad host:1',
  'http://app@host:1',
];

describe('management routes on a one-node cluster', () => {
  const routes = useOneNodeRoutes();
  const { inject, expectRejected, rejectedPlacement } = routes;
  let self: string;
  beforeAll(() => {
    self = routes.node().address.toString();
  });
  /** A bulk write whose second entry has `target`: refused whole, with `code`. */
  const rejectedInBulk = (target: string, code: string) =>
    rejectedPlacement(
      {
        placements: [
          { shardId: 1, target: self },
          { shardId: 2, target },
        ],
      },
      400,
      code,
    );

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
      for (const target of BAD_ADDRESSES) {
        const body = await rejectedPlacement({ shardId: 1, target }, 400, 'invalid_address');
        expect(body.message).toContain('system@host:port');
      }
      await rejectedInBulk('app@host', 'invalid_address');
    });

    it('400 invalid_target for a target that is neither an address nor a selector, also in bulk', async () => {
      // Without `@` or `=` a target is neither form; the message names both.
      for (const target of ['nope', 'actor-ts://']) {
        const body = await rejectedPlacement({ shardId: 1, target }, 400, 'invalid_target');
        expect(body.message).toContain('system@host:port');
        expect(body.message).toContain('KEY=VALUE');
      }
      await rejectedInBulk('nope', 'invalid_target');
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
      /** A POST of `payload` as `contentType`, which must be refused as not JSON. */
      const notJson = (url: string, payload: string, contentType: string) =>
        expectRejected(
          { method: 'POST', url, payload, headers: { 'content-type': contentType } },
          415,
          'unsupported_media_type',
        );
      const text = await notJson(`${COUNTER}/placements`, '{"shardId":1,"target":"app@h:1"}', 'text/plain');
      expect(text.message).toContain('text/plain');
      await notJson(`${COUNTER}/placements`, 'shardId=1&target=app%40h%3A1', 'application/x-www-form-urlencoded');
      await notJson(`${COUNTER}/rebalance`, '{"shardIds":[1]}', 'text/plain');
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
