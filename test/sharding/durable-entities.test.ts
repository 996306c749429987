// Durable entities through ClusterSharding on an in-process cluster (issue 36): a crashed host's entities come
// back on the new host with their last committed state; a send the crashed host processed and committed, whose
// answer was lost, is answered by the new host without being applied again; a graceful move reads the store
// rather than shipping state; a durable type on a node without an entity store is refused at init.
import { describe, expect, it } from 'vitest';
import { counterBehavior, type CounterValue } from '../../src/node/counter.js';
import { MemoryEntityStore } from '../support/memory-entity-store.js';
import {
  TestCluster,
  entityInShard,
  eventually,
  moveShard as move,
  pinTo,
  settle,
  useTestClusters,
  type TestNode,
} from './harness.js';

const SHARDS = 10;

describe('durable entities in a cluster', () => {
  let cluster: TestCluster;
  let target = '';
  useTestClusters(() => (cluster = new TestCluster()));

  function start(store: MemoryEntityStore): [TestNode, TestNode, TestNode] {
    cluster = new TestCluster({ entityStore: store });
    const nodes = cluster.addNodes(7001, 7002, 7003);
    target = nodes[1].key;
    cluster.initAll({
      typeName: 'Counter',
      behavior: counterBehavior,
      numberOfShards: SHARDS,
      durable: true,
      allocationStrategy: pinTo(() => target),
    });
    return nodes;
  }

  const region = (node: TestNode) => node.sharding.stats().types['Counter']?.region;
  const ask = (via: TestNode, id: string, op: 'increment' | 'get' = 'increment') =>
    settle(via.sharding.entityRefFor('Counter', id).ask<CounterValue>({ op }));

  it("a crashed host's entity continues on the new host from its last committed state", async () => {
    const [a, b, c] = start(new MemoryEntityStore());
    const id = entityInShard(2, SHARDS, 'cart');
    for (let i = 0; i < 5; i++) await ask(a, id);
    target = c.key;
    await cluster.crashAndRemove(b);
    expect(await ask(a, id)).toMatchObject({ value: 6, node: c.key });
  });

  it('a send the crashed host committed, its answer lost, is answered by the new host without being applied again', async () => {
    const store = new MemoryEntityStore();
    const [a, b, c] = start(store);
    const id = entityInShard(4, SHARDS, 'once');
    await ask(a, id);
    // b commits the send, then dies before its answer leaves.
    store.onCommit = () => cluster.net.isolate(b.address);
    const sent = a.sharding.entityRefFor('Counter', id).send({ op: 'increment' });
    await eventually(() => store.commits >= 2, 'the send committed on b');
    store.onCommit = undefined;
    target = c.key;
    await cluster.crashAndRemove(b);
    cluster.net.heal();
    await settle(sent);
    expect(region(c)?.messagesDeduplicated ?? 0).toBe(0);
    expect(await ask(a, id, 'get')).toMatchObject({ value: 2, node: c.key });
  });

  it('a graceful move ships no state: the new host reads the committed row', async () => {
    const [a, b, c] = start(new MemoryEntityStore());
    const id = entityInShard(6, SHARDS, 'moved');
    for (let i = 0; i < 3; i++) await ask(a, id);
    await move({ via: a, shardId: 6, from: b, to: c }, (node) => (target = node.key));
    expect(region(b)?.snapshotsShipped ?? 0).toBe(0);
    expect(await ask(a, id)).toMatchObject({ value: 4, node: c.key });
  });

  it('a durable type on a node without an entity store is refused at init, and nothing is started', () => {
    const [node] = cluster.addNodes(7010);
    expect(() => node.sharding.init({ typeName: 'Durable', behavior: counterBehavior, durable: true })).toThrow(
      expect.objectContaining({ code: 'invalid_argument', message: expect.stringMatching(/no entity store/) }),
    );
    expect(node.sharding.entityTypes().has('Durable')).toBe(false);
  });
});
