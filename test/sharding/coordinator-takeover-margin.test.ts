// A coordinator taking over after its predecessor's node and a downed node were both removed before it
// started: it has no record of either, so it cannot date the downing, and it must still hold back the shards
// nobody registered for a full down-removal margin (the downed node may still run them). Several sharding
// nodes over the in-memory network, on fake timers.
import { describe, expect, it } from 'vitest';
import type { NodeAddress } from '../../src/cluster/address.js';
import type { AllocationStrategy } from '../../src/sharding/strategies/index.js';
import { shardIdFor } from '../../src/sharding/core/shard-id.js';
import { TestCluster, counter, run, settle, useTestClusters, type CounterReply } from './harness.js';

const SHARDS = 30;
const MARGIN_MS = 2_000;

let cluster: TestCluster;
useTestClusters(() => (cluster = new TestCluster()));

/** Puts the shard of "y" on whatever `target()` names; other shards on the lowest address. */
function pinY(target: () => NodeAddress): AllocationStrategy {
  const yShard = shardIdFor('y', SHARDS);
  return {
    allocate: (shardId, candidates) =>
      (shardId === yShard ? candidates.find((x) => x.equals(target())) : undefined) ??
      ([...candidates].sort((x, y) => (x.toString() < y.toString() ? -1 : 1))[0] as NodeAddress),
    rebalance: () => new Set(),
  };
}

describe('a new coordinator after older members were removed without a trace', () => {
  it('gives a shard nobody registered a home only after a full margin from its start', async () => {
    cluster = new TestCluster({ config: { downRemovalMarginMs: MARGIN_MS } });
    const a = cluster.addNode(7001);
    const b = cluster.addNode(7002);
    const c = cluster.addNode(7003);
    const d = cluster.addNode(7004);
    const yShard = shardIdFor('y', SHARDS);
    cluster.initAll({
      typeName: 'Counter',
      behavior: counter(),
      numberOfShards: SHARDS,
      allocationStrategy: pinY(() => b.address),
    });
    expect(await settle(d.sharding.entityRefFor('Counter', 'y').ask<CounterReply>({ op: 'inc' }))).toMatchObject({
      node: b.key,
    });

    // b (hosting y) was downed and removed in one gossip round while the coordinator's node a died and was
    // removed too: c's new coordinator never sees either, and b may not know yet that it is out.
    await cluster.crash(b);
    await cluster.crash(a);
    cluster.members.remove(b.address);
    cluster.members.remove(a.address);
    const takeoverAt = Date.now();
    const pending = d.sharding.entityRefFor('Counter', 'y').ask<CounterReply>({ op: 'inc' });
    await run(MARGIN_MS - 100);
    expect([c, d].some((node) => node.sharding.localShards('Counter').includes(yShard))).toBe(false);
    const answer = await settle(pending);
    expect([c.key, d.key]).toContain(answer.node);
    expect(answer.count).toBe(1);
    expect(Date.now() - takeoverAt).toBeGreaterThanOrEqual(MARGIN_MS);
  });
});
