// The down-removal margin exists for a downed process that may still run its shards. A crashed one, whose
// address refuses connections (confirmed by the coordinator's own probes, death-confirmation.ts), runs
// nothing: its shards get a new home as soon as the probes confirm it, not when the margin ends.
import { describe, expect, it } from 'vitest';
import { CONFIRM_SPACING_MS } from '../../src/cluster/membership/death-confirmation.js';
import { TestCluster, counter, entityInShard, settle, useTestClusters, type CounterReply } from './harness.js';

const SHARDS = 20;
const MARGIN_MS = 10_000;

describe('down-removal margin and confirmed deaths', () => {
  let cluster: TestCluster;
  useTestClusters(() => (cluster = new TestCluster({ config: { downRemovalMarginMs: MARGIN_MS } })));

  it("re-homes a crashed member's shards once the coordinator's probes confirm it, well within the margin", async () => {
    const [a, b, c] = cluster.addNodes(7001, 7002, 7003);
    cluster.initAll({ typeName: 'Counter', behavior: counter(), numberOfShards: SHARDS });
    for (let i = 0; i < 30; i++) await settle(a.sharding.entityRefFor('Counter', `e${i}`).ask({ op: 'inc' }));
    const [shardId] = c.sharding.localShards('Counter');
    if (shardId === undefined) throw new Error('c hosts no shard');

    await cluster.crash(c);
    cluster.members.setReachable(c.address, false);
    cluster.members.setStatus(c.address, 'down');
    const downAt = Date.now();
    const reply = await settle(
      b.sharding.entityRefFor('Counter', entityInShard(shardId, SHARDS)).ask<CounterReply>({ op: 'inc' }),
    );
    expect([a.key, b.key]).toContain(reply.node);
    // Two probes CONFIRM_SPACING_MS apart, then one round of allocation: far less than the 10 s margin.
    expect(Date.now() - downAt).toBeLessThan(CONFIRM_SPACING_MS + 2_000);
  });

  // The margin in full for a member only silent: failover.test.ts ('keeps a downed member's shards on it ...').
});
