// Nodes stopped at once (a whole cluster shut down): each leave ends by itself as soon as its shards are handed
// off, however long the leave timeout. A shard's state once went straight to a home that was itself leaving, and
// its old host then kept its copy for that home until the timeout (20 s by default): set to ten minutes here,
// a leave that waits for it fails this test by its own timeout.
import { describe, expect, it } from 'vitest';
import { increment, startTestCluster, stopAll } from '../management/node-fixture.js';

describe('a cluster stopped all at once', () => {
  it('has every leave end as soon as the shards are handed off, not at the leave timeout', async () => {
    const nodes = await startTestCluster(2, { cluster: { leaveTimeoutMs: 600_000 } });
    try {
      const hosts = new Set<string>();
      for (let i = 0; hosts.size < 2 && i < 100; i++) hosts.add((await increment(nodes[i % 2]!, `e${i}`)).node);
      expect(hosts.size).toBe(2);
    } finally {
      await stopAll(nodes);
    }
  }, 30_000);
});
