// A hand-off's state straight from the old host to the new home (protocol 10), across in-process nodes: the
// chunks and the coordinator's HostShard travel on different connections, so the HostShard may come first and
// the new home waits for the state (its messages buffered) before it starts the shard; a named home lost before
// its start gets nothing lost, since the old host sends its kept copy to the next home; and a coordinator lost
// between the stop and the start is replaced by one that asks the old host for that copy.
import { describe, expect, it } from 'vitest';
import type { CounterValue } from '../../src/node/counter.js';
import type { ShardingMessage } from '../../src/sharding/protocol/messages.js';
import { TestCluster, counterNodes, entityInShard, eventually, run, settle, useTestClusters } from './harness.js';
import type { TestNode } from './harness.js';

const SHARDS = 10;

describe('hand-off state straight from the old host to the new home', () => {
  let cluster: TestCluster;
  let target: () => string = () => '';
  useTestClusters(() => (cluster = new TestCluster()));

  /** a (the coordinator), b and c; shard `shardId` runs on b with Counter `id` at `value`. */
  async function start(shardId: number, value: number): Promise<{ a: TestNode; b: TestNode; c: TestNode; id: string }> {
    const started = counterNodes(SHARDS, () => target());
    cluster = started.cluster;
    const [a, b, c] = started.nodes;
    target = () => b.key;
    const id = entityInShard(shardId, SHARDS, 'd');
    for (let i = 0; i < value; i++) await counter(a, id, 'increment');
    expect(b.sharding.localShards('Counter')).toEqual([shardId]);
    return { a, b, c, id };
  }

  const counter = (via: TestNode, id: string, op: 'get' | 'increment' = 'get'): Promise<CounterValue> =>
    settle(via.sharding.entityRefFor('Counter', id).ask<CounterValue>({ op }));

  /** Holds back what `from` sends `to` of the given types; `release` sends it on, in order. */
  function holdBack(from: TestNode, to: TestNode, types: ReadonlyArray<ShardingMessage['type']>) {
    const held: Array<() => void> = [];
    const send = from.transport.send.bind(from.transport);
    let holding = true;
    from.transport.send = (address, message) => {
      const type = (message as { type: ShardingMessage['type'] }).type;
      if (holding && address.equals(to.address) && types.includes(type)) held.push(() => send(address, message));
      else send(address, message);
    };
    return {
      get count(): number {
        return held.length;
      },
      release(): void {
        holding = false;
        for (const deliver of held.splice(0)) deliver();
      },
      drop(): void {
        held.length = 0;
      },
    };
  }

  const hostShardsTo = (from: TestNode, to: TestNode): ShardingMessage[] => {
    const recorded: ShardingMessage[] = [];
    const send = from.transport.send.bind(from.transport);
    from.transport.send = (address, message) => {
      if (address.equals(to.address) && (message as { type: string }).type === 'HostShard')
        recorded.push(message as unknown as ShardingMessage);
      send(address, message);
    };
    return recorded;
  };

  it('a HostShard ahead of the state: the new home starts the shard only once the state is in, messages waiting', async () => {
    const { a, b, c, id } = await start(6, 4);
    const chunks = holdBack(b, c, ['RestoreShardState']);
    const hosts = hostShardsTo(a, c);
    target = () => c.key;
    await settle(a.sharding.rebalanceNow('Counter', [6]));
    await eventually(() => hosts.length > 0 && chunks.count > 0, 'HostShard sent to c, the state held back');
    expect(hosts[0]).toMatchObject({ type: 'HostShard', shardId: 6, transferId: expect.any(Number) });
    const during = a.sharding.entityRefFor('Counter', id).ask<CounterValue>({ op: 'increment' }, { timeoutMs: 20_000 });
    let answered = false;
    void during.then(() => (answered = true));
    await run(3_000);
    expect(c.sharding.localShards('Counter')).toEqual([]);
    expect(answered).toBe(false);
    chunks.release();
    // At once, not at the coordinator's next retry tick (100 ms here).
    await run(10);
    expect(c.sharding.localShards('Counter')).toEqual([6]);
    expect(await settle(during)).toMatchObject({ value: 5, node: c.key });
    expect(c.sharding.stats().types['Counter']?.region).toMatchObject({ snapshotsRestored: 1 });
  });

  it('the old host reports the stop ahead of its state, so the HostShard travels while the state is packed', async () => {
    const { a, b, c, id } = await start(6, 3);
    const order: string[] = [];
    const send = b.transport.send.bind(b.transport);
    b.transport.send = (address, message) => {
      const { type } = message as { type: string };
      if (type === 'ShardStopped' || type === 'RestoreShardState') order.push(type);
      send(address, message);
    };
    // The in-memory transport holds nothing back; a TCP one writes the report out at once when told (flush).
    b.transport.flush = (address) => order.push(`flush ${address.equals(a.address) ? 'a' : address.toString()}`);
    target = () => c.key;
    await settle(a.sharding.rebalanceNow('Counter', [6]));
    expect(await counter(a, id)).toMatchObject({ value: 3, node: c.key });
    expect(order).toEqual(['ShardStopped', 'flush a', 'RestoreShardState']);
  });

  it('the home named is gone before its start: the old host sends its copy to the next home, nothing lost', async () => {
    const { a, b, c, id } = await start(6, 3);
    const chunks = holdBack(b, c, ['RestoreShardState']);
    target = () => c.key;
    await settle(a.sharding.rebalanceNow('Counter', [6]));
    await eventually(() => chunks.count > 0 && !b.sharding.localShards('Counter').includes(6), 'shard 6 stopped on b');
    chunks.drop();
    target = () => a.key;
    await cluster.crashAndRemove(c);
    expect(await counter(b, id, 'increment')).toMatchObject({ value: 4, node: a.key });
    await eventually(() => b.sharding.stats().types['Counter']?.region.stateBytesRetained === 0, 'b released');
  });

  it('a coordinator lost between the stop and the start: the next one has the old host send its copy again', async () => {
    const { a, b, c, id } = await start(6, 2);
    const hosts = holdBack(a, c, ['HostShard', 'ShardHome']);
    target = () => c.key;
    await settle(b.sharding.rebalanceNow('Counter', [6]));
    await eventually(() => hosts.count > 0, 'the HostShard for c withheld');
    hosts.drop();
    await cluster.crashAndRemove(a);
    expect(await counter(b, id, 'increment')).toMatchObject({ value: 3, node: c.key });
    await eventually(() => b.sharding.stats().types['Counter']?.region.stateBytesRetained === 0, 'b released');
  });
});
