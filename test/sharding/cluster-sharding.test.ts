// ClusterSharding over a MemoryNetwork: lazy allocation, tell/ask across nodes, one message at a time,
// input validation, proxy-only regions, the region buffer limit and shutdown.
import { describe, expect, it } from 'vitest';
import { ActorTsError } from '../../src/errors.js';
import { SHARDING_MESSAGES } from '../../src/sharding/protocol/messages.js';
import { NodeAddress } from '../../src/cluster/address.js';
import { shardIdFor } from '../../src/sharding/core/shard-id.js';
import {
  TestCluster,
  counter,
  entityInShard,
  eventually,
  hostedShards,
  pinTo,
  run,
  settle,
  useTestClusters,
} from './harness.js';
import type { CounterReply, EntityEvent, TestNode } from './harness.js';

describe('ClusterSharding', () => {
  let cluster: TestCluster;
  useTestClusters(() => (cluster = new TestCluster()));

  /** The Counter type (10 shards) on every node, each shard placed on `host`. */
  function initCountersOn(host: TestNode, events: EntityEvent[] = []): void {
    cluster.initAll({
      typeName: 'Counter',
      behavior: counter(events),
      numberOfShards: 10,
      allocationStrategy: pinTo(() => host.key),
    });
  }

  it('allocates shards lazily: nothing before the first message, then exactly the shard that was used', async () => {
    const [a, b] = cluster.addNodes(7001, 7002);
    cluster.initAll({ typeName: 'Counter', behavior: counter(), numberOfShards: 10 });
    await run(1_000);
    const before = await settle(b.sharding.getShardLocations('Counter'));
    expect(before.regions.map((r) => r.address).sort()).toEqual([a.key, b.key]);
    expect(before.regions.every((r) => r.shards.length === 0)).toBe(true);

    const entityId = entityInShard(3, 10);
    const reply = await settle(b.sharding.entityRefFor('Counter', entityId).ask<CounterReply>({ op: 'inc' }));
    expect(reply.count).toBe(1);
    const after = await settle(a.sharding.getShardLocations('Counter'));
    const allocated = after.regions.flatMap((r) => r.shards.map((s) => ({ s, at: r.address })));
    expect(allocated).toEqual([{ s: 3, at: reply.node }]);
    expect(hostedShards(cluster.nodes, 'Counter')).toEqual(new Map([[3, [reply.node]]]));
  });

  it('delivers tell and ask across nodes to one entity that keeps its state', async () => {
    const [a, b, c] = cluster.addNodes(7001, 7002, 7003);
    cluster.initAll({
      typeName: 'Counter',
      behavior: counter(),
      numberOfShards: 50,
      allocationStrategy: pinTo(() => c.key),
    });
    const entityId = 'chat-engineering';
    a.sharding.entityRefFor('Counter', entityId).tell({ op: 'inc' });
    b.sharding.entityRefFor('Counter', entityId).tell({ op: 'inc' });
    await eventually(() => c.sharding.stats().types['Counter']?.region.localEntities === 1, 'entity started on c');
    const reply = await settle(b.sharding.entityRefFor('Counter', entityId).ask<CounterReply>({ op: 'inc' }));
    expect(reply).toEqual({ count: 3, node: c.key, entityId });
    expect(b.sharding.stats().types['Counter']?.region.messagesForwarded).toBeGreaterThanOrEqual(2);
    expect(c.sharding.localShards('Counter')).toEqual([shardIdFor(entityId, 50)]);
    expect(a.sharding.localShards('Counter')).toEqual([]);
  });

  it('runs one message at a time per entity, in arrival order, even when receive is asynchronous', async () => {
    const a = cluster.addNode(7001);
    let active = 0;
    let maxActive = 0;
    const seen: number[] = [];
    a.sharding.init({
      typeName: 'Slow',
      behavior: () => ({
        async receive(message: unknown) {
          active++;
          maxActive = Math.max(maxActive, active);
          await new Promise((resolve) => setTimeout(resolve, 50));
          seen.push(message as number);
          active--;
          return message;
        },
      }),
    });
    const ref = a.sharding.entityRefFor('Slow', 'one');
    const answers = Promise.all([1, 2, 3, 4, 5].map((n) => ref.ask<number>(n)));
    expect(await settle(answers)).toEqual([1, 2, 3, 4, 5]);
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    expect(maxActive).toBe(1);
  });

  it('fails an ask with entity_failed when receive throws, and the entity keeps its state', async () => {
    const [a, b] = cluster.addNodes(7001, 7002);
    initCountersOn(b);
    const ref = a.sharding.entityRefFor('Counter', 'x');
    await settle(ref.ask({ op: 'inc' }));
    const failed = settle(ref.ask({ op: 'fail' }));
    await expect(failed).rejects.toMatchObject({ code: 'entity_failed', message: expect.stringContaining('refused') });
    expect((await settle(ref.ask<CounterReply>({ op: 'get' }))).count).toBe(1);
  });

  it('times out an ask that gets no answer', async () => {
    const [a, b] = cluster.addNodes(7001, 7002);
    initCountersOn(b);
    await settle(a.sharding.entityRefFor('Counter', 'x').ask({ op: 'get' }));
    cluster.net.partition([a.address], [b.address]);
    const pending = settle(a.sharding.entityRefFor('Counter', 'x').ask({ op: 'get' }, { timeoutMs: 1_000 }));
    await expect(pending).rejects.toMatchObject({ code: 'timeout' });
    expect(a.sharding.stats().asksTimedOut).toBe(1);
  });

  it('rejects bad input with typed errors and changes nothing', async () => {
    const a = cluster.addNode(7001);
    a.sharding.init({ typeName: 'Counter', behavior: counter(), numberOfShards: 10 });
    const code = (fn: () => unknown): string | undefined => {
      try {
        fn();
        return undefined;
      } catch (error) {
        return error instanceof ActorTsError ? error.code : 'not an ActorTsError';
      }
    };
    expect(code(() => a.sharding.init({ typeName: 'Counter', behavior: counter() }))).toBe('invalid_argument');
    expect(code(() => a.sharding.init({ typeName: 'bad name', behavior: counter() }))).toBe('invalid_argument');
    expect(code(() => a.sharding.init({ typeName: 'T', behavior: counter(), numberOfShards: 0 }))).toBe(
      'invalid_argument',
    );
    expect(code(() => a.sharding.init({ typeName: 'T', behavior: counter(), numberOfShards: 2.5 }))).toBe(
      'invalid_argument',
    );
    expect(code(() => a.sharding.init({ typeName: 'T', behavior: 'nope' as never }))).toBe('invalid_argument');
    expect(code(() => a.sharding.init({ typeName: 'T', behavior: counter(), allocationStrategy: {} as never }))).toBe(
      'invalid_argument',
    );
    expect(code(() => a.sharding.entityRefFor('Nope', 'x'))).toBe('unknown_type');
    expect(code(() => a.sharding.entityRefFor('Counter', ''))).toBe('invalid_argument');
    expect(code(() => a.sharding.localShards('Nope'))).toBe('unknown_type');
    await expect(a.sharding.rebalanceNow('Counter', [1.5])).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(a.sharding.rebalanceNow('Nope', [1])).rejects.toMatchObject({ code: 'unknown_type' });
    await expect(a.sharding.entityRefFor('Counter', 'x').ask('hi', { timeoutMs: -1 })).rejects.toMatchObject({
      code: 'invalid_argument',
    });
    expect([...a.sharding.entityTypes().keys()]).toEqual(['Counter']);
    expect(a.sharding.localShards('Counter')).toEqual([]);
  });

  it('never hosts entities on a node without the type role: its region is a proxy that routes', async () => {
    const worker1 = cluster.addNode(7001, { roles: ['dad'] });
    const gateway = cluster.addNode(7002, { roles: [] });
    const worker2 = cluster.addNode(7003, { roles: ['dad'] });
    cluster.initAll({ typeName: 'Dad', behavior: counter(), numberOfShards: 20, role: 'dad' });
    const replies: CounterReply[] = [];
    for (let i = 0; i < 20; i++) {
      replies.push(await settle(gateway.sharding.entityRefFor('Dad', `chat-${i}`).ask<CounterReply>({ op: 'inc' })));
    }
    expect(new Set(replies.map((r) => r.node))).toEqual(new Set([worker1.key, worker2.key]));
    expect(gateway.sharding.localShards('Dad')).toEqual([]);
    const stats = gateway.sharding.stats().types['Dad']?.region;
    expect(stats?.proxy).toBe(true);
    expect(stats?.localEntities).toBe(0);
    const locations = await settle(gateway.sharding.getShardLocations('Dad'));
    expect(locations.regions.map((r) => r.address).sort()).toEqual([worker1.key, worker2.key].sort());
  });

  it('buffers messages while no home is known, drops and counts what exceeds bufferSize, then delivers the rest', async () => {
    cluster = new TestCluster({ config: { bufferSize: 5 } });
    const [a, b] = cluster.addNodes(7001, 7002);
    initCountersOn(a);
    await run(1_000);
    // b cannot reach the coordinator (a): every message for an unknown shard waits in b's buffer.
    cluster.net.partition([a.address], [b.address]);
    const ref = b.sharding.entityRefFor('Counter', 'buffered');
    for (let i = 0; i < 8; i++) ref.tell({ op: 'inc' });
    const overflowAsk = ref.ask({ op: 'get' });
    await expect(overflowAsk).rejects.toMatchObject({ code: 'buffer_overflow' });
    const region = (): NonNullable<ReturnType<typeof b.sharding.stats>['types'][string]>['region'] | undefined =>
      b.sharding.stats().types['Counter']?.region;
    expect(region()?.bufferedMessages).toBe(5);
    expect(region()?.bufferOverflowDrops).toBe(4);
    cluster.net.heal();
    await eventually(() => region()?.bufferedMessages === 0, 'buffer flushed');
    const reply = await settle(ref.ask<CounterReply>({ op: 'get' }));
    expect(reply).toMatchObject({ count: 5, node: a.key });
  });

  it('drops and counts a message forwarded maxForwardHops times instead of bouncing it on', async () => {
    const [a, b] = cluster.addNodes(7001, 7002);
    initCountersOn(a);
    const entityId = entityInShard(2, 10);
    await settle(b.sharding.entityRefFor('Counter', entityId).ask({ op: 'inc' }));
    const rogue = cluster.net.transport(NodeAddress.parse('rogue@127.0.0.1:6666'));
    rogue.register(SHARDING_MESSAGES);
    const envelope = {
      type: 'EntityEnvelope',
      typeName: 'Counter',
      shardId: 2,
      entityId,
      payload: { op: 'inc' },
    } as const;
    rogue.send(b.address, { ...envelope, hops: 4 });
    rogue.send(b.address, { ...envelope, hops: 3 });
    await run(100);
    expect(b.sharding.stats().types['Counter']?.region.hopLimitDrops).toBe(1);
    expect(await settle(b.sharding.entityRefFor('Counter', entityId).ask<CounterReply>({ op: 'get' }))).toMatchObject({
      count: 2,
    });
    await rogue.close();
  });

  it('fails an ask whose answer cannot cross the wire, and counts a tell that cannot, without throwing', async () => {
    const [a, b] = cluster.addNodes(7001, 7002);
    b.sharding.init({
      typeName: 'Odd',
      behavior: () => ({ receive: (message) => (message === 'symbol' ? Symbol('not data') : 'fine') }),
      allocationStrategy: pinTo(() => b.key),
    });
    a.sharding.init({
      typeName: 'Odd',
      behavior: () => ({ receive: () => 'a' }),
      allocationStrategy: pinTo(() => b.key),
    });
    const ref = a.sharding.entityRefFor('Odd', 'x');
    expect(await settle(ref.ask('hello'))).toBe('fine');
    await expect(settle(ref.ask('symbol'))).rejects.toMatchObject({
      code: 'entity_failed',
      message: expect.stringContaining('serialised'),
    });
    expect(() => ref.tell(Symbol('no'))).not.toThrow();
    await run(100);
    expect(a.sharding.stats().sendFailures).toBe(1);
  });

  it('shutdown stops local entities, rejects pending asks and refuses new work', async () => {
    const [a, b] = cluster.addNodes(7001, 7002);
    const events: EntityEvent[] = [];
    initCountersOn(b, events);
    await settle(a.sharding.entityRefFor('Counter', 'x').ask({ op: 'inc' }));
    cluster.net.partition([a.address], [b.address]);
    const pending = a.sharding.entityRefFor('Counter', 'x').ask({ op: 'get' });
    await b.sharding.shutdown();
    expect(events.filter((e) => e.kind === 'stop')).toEqual([{ kind: 'stop', entityId: 'x', node: b.key }]);
    await a.sharding.shutdown();
    await expect(pending).rejects.toMatchObject({ code: 'not_running' });
    expect(() => a.sharding.entityRefFor('Counter', 'x')).toThrow(ActorTsError);
  });
});
