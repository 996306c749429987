// Lazy restore across graceful hand-offs: the new home holds each entity's state and creates the entity on its
// first message (with `ctx.restored` before that message), not at the shard's start; an entity never woken
// keeps its state, and the sends it processed, through any number of further moves.
import { describe, expect, it } from 'vitest';
import { counterBehavior, type CounterValue } from '../../src/node/counter.js';
import type { EntityBehavior } from '../../src/sharding/core/entity-api.js';
import {
  TestCluster,
  entityInShard,
  eventually,
  moveShard as move,
  pinTo,
  settle,
  useTestClusters,
} from './harness.js';
import type { TestNode } from './harness.js';

const SHARDS = 10;

describe('lazy restore of handed-over entity state', () => {
  let cluster: TestCluster;
  let target: () => string = () => '';
  useTestClusters(() => (cluster = new TestCluster()));

  function start(behavior: EntityBehavior, count = 3): TestNode[] {
    cluster = new TestCluster();
    const nodes = cluster.addNodes(...Array.from({ length: count }, (_, i) => 7001 + i));
    target = () => (nodes[1] as TestNode).key;
    cluster.initAll({
      typeName: 'Counter',
      behavior,
      numberOfShards: SHARDS,
      allocationStrategy: pinTo(() => target()),
    });
    return nodes;
  }

  const moveShard = (via: TestNode, shardId: number, to: TestNode, from: TestNode): Promise<void> =>
    move({ via, shardId, from, to }, (node) => (target = () => node.key));

  const region = (node: TestNode) => node.sharding.stats().types['Counter']?.region;
  const increment = (via: TestNode, id: string) =>
    settle(via.sharding.entityRefFor('Counter', id).ask<CounterValue>({ op: 'increment' }));

  it('creates a restored entity on its first message there, with its state before that message', async () => {
    const created: Array<{ entityId: string; node: string; restored: unknown }> = [];
    const [a, b, c] = start((ctx) => {
      created.push({ entityId: ctx.entityId, node: ctx.node.toString(), restored: ctx.restored });
      return counterBehavior(ctx);
    }) as [TestNode, TestNode, TestNode];
    const ids = [entityInShard(3, SHARDS, 'p'), entityInShard(3, SHARDS, 'q'), entityInShard(3, SHARDS, 'r')];
    for (const [i, id] of ids.entries()) for (let n = 0; n <= i; n++) await increment(a, id);
    created.length = 0;
    await moveShard(a, 3, c, b);
    // The shard runs on c, its three states held there: none of its entities exists yet.
    expect(created).toEqual([]);
    expect(region(c)).toMatchObject({ localEntities: 0, snapshotsRestored: 3 });
    expect(await increment(a, ids[1] as string)).toMatchObject({ value: 3, node: c.key });
    expect(created).toEqual([{ entityId: ids[1], node: c.key, restored: 2 }]);
    expect(region(c)?.localEntities).toBe(1);
  });

  it('an entity never woken keeps its state through a second move, shipped on as it came', async () => {
    const [a, b, c] = start(counterBehavior) as [TestNode, TestNode, TestNode];
    const woken = entityInShard(4, SHARDS, 'w');
    const asleep = entityInShard(4, SHARDS, 's');
    for (let n = 0; n < 4; n++) await increment(a, asleep);
    await increment(a, woken);
    await moveShard(a, 4, c, b);
    expect(await increment(a, woken)).toMatchObject({ value: 2, node: c.key });
    await moveShard(a, 4, a, c);
    // c shipped both: the woken one's snapshot and the other's state as it had received it.
    expect(region(c)).toMatchObject({ snapshotsRestored: 2, snapshotsShipped: 2, localEntities: 0 });
    expect(region(a)).toMatchObject({ snapshotsRestored: 2, localEntities: 0 });
    expect(await increment(a, asleep)).toMatchObject({ value: 5, node: a.key });
    expect(await increment(a, woken)).toMatchObject({ value: 3, node: a.key });
  });

  it('a send processed before two moves is not processed again by the third home (never woken between)', async () => {
    const [a, b, c, d] = start(counterBehavior, 4) as [TestNode, TestNode, TestNode, TestNode];
    const id = entityInShard(9, SHARDS, 'r');
    await increment(a, id);
    // b processes the send, but its confirmation never reaches a: a keeps retrying it.
    let loseReplies = true;
    const bSend = b.transport.send.bind(b.transport);
    b.transport.send = (to, message) => {
      const type = (message as { type: string }).type;
      if (!loseReplies || (type !== 'EntityReply' && type !== 'EntityReplies')) bSend(to, message);
    };
    // Nothing reaches the entity on c: its state stays held there.
    let blockC = true;
    const aSend = a.transport.send.bind(a.transport);
    a.transport.send = (to, message) => {
      if (!(blockC && to.equals(c.address) && (message as { type: string }).type === 'EntityEnvelope'))
        aSend(to, message);
    };
    const sent = a.sharding.entityRefFor('Counter', id).send({ op: 'increment' });
    await eventually(() => (region(b)?.messagesDeduplicated ?? 0) > 0, 'a retry reached b');
    await moveShard(a, 9, c, b);
    await moveShard(a, 9, d, c);
    expect(region(c)).toMatchObject({ localEntities: 0, snapshotsShipped: 1 });
    loseReplies = false;
    blockC = false;
    await settle(sent);
    expect(region(d)?.messagesDeduplicated).toBeGreaterThan(0);
    expect(await settle(a.sharding.entityRefFor('Counter', id).ask<CounterValue>({ op: 'get' }))).toMatchObject({
      value: 2,
      node: d.key,
    });
  });
});
