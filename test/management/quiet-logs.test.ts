// Issue 25, smaller items: a node's log at info is not a request log (Fastify logged every request twice at
// info: an open console wrote ~100 MB a day), and a graceful stop is not a warning.
import { describe, expect, it } from 'vitest';
import { captureLogger } from '../../src/logging.js';
import { startNode } from '../../src/node/node.js';
import { API, pollUntil } from './node-fixture.js';

describe('what a node logs at info', () => {
  it('no line per HTTP request at info (one at debug), and a graceful stop logs no warning', async () => {
    const { logger, records } = captureLogger('info');
    const node = await startNode({ port: 0, http: { port: 0 } }, { logger });
    await pollUntil(
      async () =>
        (await node.http.inject({ method: 'GET', url: `${API}/health` })).json<{ status: string }>().status === 'ok',
      'the node to be up',
    );
    const before = records.length;
    for (let i = 0; i < 20; i++)
      expect((await node.http.inject({ method: 'GET', url: `${API}/health` })).statusCode).toBe(200);
    expect(records.slice(before).map((r) => r.msg)).toEqual([]);
    await node.stop();
    const warnings = records.filter((r) => r.level >= 40).map((r) => r.msg);
    expect(warnings.filter((msg) => msg?.includes('removed from the cluster'))).toEqual([]);
    expect(
      records.some((r) => r.level === 30 && r.msg === 'this node left the cluster (its leave completed): stopping'),
    ).toBe(true);
  });

  it('at debug, each request is one line with its method, URL and status', async () => {
    const { logger, records } = captureLogger('debug');
    const node = await startNode({ port: 0, http: { port: 0 } }, { logger });
    try {
      await node.http.inject({ method: 'GET', url: `${API}/cluster/members` });
      const lines = records.filter((r) => r.msg === 'request' && r['url'] === `${API}/cluster/members`);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ level: 20, method: 'GET', statusCode: 200 });
    } finally {
      await node.stop();
    }
  });
});
