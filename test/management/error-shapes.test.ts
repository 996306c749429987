// Every status the API answers has the error shape `{ error, message }`, also the ones Fastify produces
// itself (unknown route, body limit, media type, JSON parse, router's parameter limit), checked through inject.
import { describe, expect, it } from 'vitest';
import { API, COUNTER, expectError, useTestNode } from './node-fixture.js';

describe('error shapes through inject', () => {
  const node = useTestNode({ http: { bodyLimit: 1_000 } });

  it('entity ids of 101 to 256 characters reach the route (the schema decides, not the router)', async () => {
    for (const length of [100, 101, 180, 256]) {
      const response = await node().http.inject({ method: 'POST', url: `/counters/${'k'.repeat(length)}/increment` });
      expect(response.statusCode, `id of ${length}: ${response.body}`).toBe(200);
    }
    expectError(
      await node().http.inject({ method: 'POST', url: `/counters/${'k'.repeat(257)}/increment` }),
      400,
      'invalid_request',
    );
  });

  it('414 in the error shape for a path parameter longer than the router takes', async () => {
    expectError(
      await node().http.inject({ method: 'GET', url: `/counters/${'k'.repeat(10_000)}` }),
      414,
      'uri_too_long',
    );
    expectError(
      await node().http.inject({ method: 'GET', url: `${API}/cluster/shards/${'T'.repeat(10_000)}` }),
      414,
      'uri_too_long',
    );
  });

  it('a type name over its schema limit is a 400, not a router error', async () => {
    expectError(
      await node().http.inject({ method: 'GET', url: `${API}/cluster/shards/${'T'.repeat(129)}` }),
      400,
      'invalid_request',
    );
  });

  it('400 bad_url for a path that is not validly percent-encoded', async () => {
    expectError(await node().http.inject({ method: 'GET', url: '/counters/%E0%A4%A' }), 400, 'bad_url');
  });

  it('404, 413, 415 and JSON parse errors', async () => {
    const post = (payload: string, contentType = 'application/json') =>
      node().http.inject({
        method: 'POST',
        url: `${COUNTER}/placements`,
        headers: { 'content-type': contentType },
        payload,
      });
    expectError(await node().http.inject({ method: 'PUT', url: `${API}/health` }), 404, 'not_found');
    expectError(await post(JSON.stringify({ shardId: 1, target: 'x'.repeat(2_000) })), 413, 'payload_too_large');
    expectError(await post('<xml/>', 'application/xml'), 415, 'unsupported_media_type');
    expectError(await post('{"shardId": 1,'), 400, 'malformed_json');
    expectError(await post(''), 400, 'malformed_json');
  });
});
