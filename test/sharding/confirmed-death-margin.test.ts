// The down-removal margin exists for a downed process that may still run its shards. A crashed one, whose
// address refuses connections (confirmed by the coordinator's own probes, death-confirmation.ts, or already by
// its node's membership: MemberInfo.confirmedDead), runs nothing: its shards get a new home as soon as the
// death is confirmed, not when the margin ends.
import { describe, expect, it } from 'vitest';
import { CONFIRM_REFUSALS, CONFIRM_SPACING_MS } from '../../src/cluster/membership/death-confirmation.js';
import { MemoryTransport } from '../../src/cluster/transport/memory-transport.js';
import {
  TestCluster,
  counter,
  entityInShard,
  settle,
  useTestClusters,
  type CounterReply,
  type TestNode,
} from './harness.js';

const SHARDS = 20;

/** Probes the node's transport made (the coordinator's own: the fake membership probes nothing). */
function probesOf(node: TestNode): number {
  if (!(node.transport instanceof MemoryTransport)) throw new Error('the harness gives every node a MemoryTransport');
  return node.transport.probes;
}
const MARGIN_MS = 10_000;

describe('down-removal margin and confirmed deaths', () => {
  let cluster: TestCluster;
  useTestClusters(() => (cluster = new TestCluster({ config: { downRemovalMarginMs: MARGIN_MS } })));

  /** Three nodes with traffic; c hosts `shardId`. */
  async function shardOnThird(): Promise<{ a: TestNode; b: TestNode; c: TestNode; shardId: number }> {
    const [a, b, c] = cluster.addNodes(7001, 7002, 7003);
    cluster.initAll({ typeName: 'Counter', behavior: counter(), numberOfShards: SHARDS });
    for (let i = 0; i < 30; i++) await settle(a.sharding.entityRefFor('Counter', `e${i}`).ask({ op: 'inc' }));
    const [shardId] = c.sharding.localShards('Counter');
    if (shardId === undefined) throw new Error('c hosts no shard');
    return { a, b, c, shardId };
  }

  it("re-homes a crashed member's shards once the coordinator's probes confirm it, well within the margin", async () => {
    const { a, b, c, shardId } = await shardOnThird();
    const before = probesOf(a) + probesOf(b);
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
    expect(probesOf(a) + probesOf(b) - before).toBeGreaterThanOrEqual(CONFIRM_REFUSALS);
  });

  it("ends a downed member's margin on its own node's confirmation, without probing the address again", async () => {
    const { a, b, c, shardId } = await shardOnThird();
    const before = probesOf(a) + probesOf(b);
    await cluster.crash(c);
    cluster.members.confirmDead(c.address);
    const reply = await settle(
      b.sharding.entityRefFor('Counter', entityInShard(shardId, SHARDS)).ask<CounterReply>({ op: 'inc' }),
    );
    expect([a.key, b.key]).toContain(reply.node);
    // The view's evidence ended the margin: the coordinator probed nothing (the fake membership probes nothing).
    expect(probesOf(a) + probesOf(b)).toBe(before);
  });

  // The margin in full for a member only silent: failover.test.ts ('keeps a downed member's shards on it ...').
});
