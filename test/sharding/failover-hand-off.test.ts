// A coordinator failing in the middle of a hand-off (no shard starts elsewhere while its old owner still stops
// it; only the stopping region's own answer ends the wait) and stale messages arriving late or reordered (a stale
// ShardHome neither keeps a second copy running nor stops the real home).
import { describe, expect, it } from 'vitest';
import { isFamilyMessage } from '../../src/cluster/transport/wire-message.js';
import { SHARDING_MESSAGES, type ShardingMessage } from '../../src/sharding/protocol/messages.js';
import { TestCluster, askLater, eventually, hostedShards, pinTo, run, settle, useTestClusters } from './harness.js';
import type { CounterReply, EntityEvent } from './harness.js';
import { SHARDS, maxConcurrentHosts, slowCounter, startWithY, yShard } from './failover-fixtures.js';

describe('failover during a hand-off', () => {
  let cluster: TestCluster;
  useTestClusters(() => (cluster = new TestCluster()));

  it('starts no shard elsewhere while its previous owner, handing it off when the coordinator failed, still stops it', async () => {
    const events: EntityEvent[] = [];
    const { a, b, c, first, moveY } = await startWithY(cluster, { behavior: slowCounter(events, 3_000) });
    expect(first).toMatchObject({ node: c.key });

    // y is busy for 3 s, so once c is told to hand its shard off, the shard drains for that long.
    c.sharding.entityRefFor('Counter', 'y').tell({ op: 'slow' });
    moveY(b);
    expect(await settle(a.sharding.rebalanceNow('Counter', [yShard]))).toMatchObject({ accepted: [yShard] });
    await eventually(() => !c.sharding.localShards('Counter').includes(yShard), 'c stopping the shard');
    expect(events.some((e) => e.kind === 'stop')).toBe(false);

    // The coordinator's node crashes mid hand-off: c's ShardStopped will never reach it.
    await cluster.crashAndRemove(a);
    expect(b.sharding.coordinatorFor('Counter')?.toString()).toBe(b.key);
    const { answer } = askLater(b, 'y');
    await eventually(() => answer() !== undefined, 'the ask is answered');

    expect(answer()).toMatchObject({ node: b.key, count: 1 });
    expect(maxConcurrentHosts(events, 'y')).toBe(1);
    expect(events.filter((e) => e.kind !== 'message').map((e) => `${e.kind}@${e.node}`)).toEqual([
      `start@${c.key}`,
      `stop@${c.key}`,
      `start@${b.key}`,
    ]);
    expect(hostedShards([b, c], 'Counter')).toEqual(new Map([[yShard, [b.key]]]));
    const locations = await settle(b.sharding.getShardLocations('Counter'));
    expect(locations.regions.filter((r) => r.shards.includes(yShard)).map((r) => r.address)).toEqual([b.key]);
  });

  it("ends the wait only on the stopping region's answer, and never erases a live home on a late or duplicated ShardStopped", async () => {
    const events: EntityEvent[] = [];
    const [a, b, c, d] = cluster.addNodes(7001, 7002, 7003, 7004);
    cluster.initAll({
      typeName: 'Counter',
      behavior: slowCounter(events, 3_000),
      numberOfShards: SHARDS,
      allocationStrategy: pinTo(() => c.address, yShard),
    });
    expect(await settle(a.sharding.entityRefFor('Counter', 'y').ask<CounterReply>({ op: 'inc' }))).toMatchObject({
      node: c.key,
    });
    const handOffs: Array<ShardingMessage & { type: 'HandOff' }> = [];
    c.transport.onMessage((_from, message) => {
      if (isFamilyMessage(SHARDING_MESSAGES, message) && message.type === 'HandOff' && message.shardId === yShard)
        handOffs.push(message);
    });
    const stoppedReports: Array<ShardingMessage & { type: 'ShardStopped' }> = [];
    b.transport.onMessage((from, message) => {
      if (
        isFamilyMessage(SHARDING_MESSAGES, message) &&
        message.type === 'ShardStopped' &&
        message.shardId === yShard &&
        from.equals(c.address)
      )
        stoppedReports.push(message);
    });

    c.sharding.entityRefFor('Counter', 'y').tell({ op: 'slow' });
    await settle(a.sharding.rebalanceNow('Counter', [yShard]));
    await eventually(() => !c.sharding.localShards('Counter').includes(yShard), 'c stopping the shard');
    await cluster.crashAndRemove(a);
    const { answer } = askLater(d, 'y');
    await eventually(
      () => handOffs.some((m) => m.handOffId !== handOffs[0]?.handOffId),
      'the new coordinator asked c for the shard',
    );
    const current = handOffs.at(-1)?.handOffId ?? 0;
    const former = handOffs[0]?.handOffId ?? 0;

    // While c still stops the shard: a report from another region (even with the right id) and c's answer to
    // the former coordinator's HandOff change nothing.
    d.transport.send(b.address, { type: 'ShardStopped', typeName: 'Counter', shardId: yShard, handOffId: current });
    c.transport.send(b.address, { type: 'ShardStopped', typeName: 'Counter', shardId: yShard, handOffId: former });
    await run(1_000);
    expect(events.some((e) => e.kind === 'stop')).toBe(false);
    expect(answer()).toBeUndefined();
    const during = await settle(b.sharding.getShardLocations('Counter'));
    expect(during.regions.flatMap((r) => r.shards)).not.toContain(yShard);

    // c's own answer ends the wait; the shard starts afresh, on c again.
    await eventually(() => answer() !== undefined, 'the ask is answered');
    expect(answer()).toMatchObject({ node: c.key, count: 1 });
    expect(stoppedReports.map((m) => m.handOffId)).toContain(current);
    expect(events.filter((e) => e.kind !== 'message').map((e) => `${e.kind}@${e.node}`)).toEqual([
      `start@${c.key}`,
      `stop@${c.key}`,
      `start@${c.key}`,
    ]);

    // A late copy of that report, and a stale registration still listing the shard as stopping, must not
    // erase the live home on c (nor restart it: y keeps its count).
    c.transport.send(b.address, { type: 'ShardStopped', typeName: 'Counter', shardId: yShard, handOffId: current });
    c.transport.send(b.address, {
      type: 'RegisterRegion',
      typeName: 'Counter',
      proxy: false,
      shards: [],
      stopping: [yShard],
      retained: [],
    });
    await run(1_000);
    const after = await settle(b.sharding.getShardLocations('Counter'));
    expect(after.regions.filter((r) => r.shards.includes(yShard)).map((r) => r.address)).toEqual([c.key]);
    expect(await settle(d.sharding.entityRefFor('Counter', 'y').ask<CounterReply>({ op: 'inc' }))).toMatchObject({
      node: c.key,
      count: 2,
    });
    expect(hostedShards(cluster.nodes.slice(1), 'Counter')).toEqual(new Map([[yShard, [c.key]]]));
    expect(maxConcurrentHosts(events, 'y')).toBe(1);
    expect(b.sharding.stats().types['Counter']?.coordinator?.rebalanceInProgress).toBe(0);
  });

  it('stops a copy started by a stale ShardHome that arrives after the shard moved on (reordered delivery)', async () => {
    const { a, b, c, first, moveY } = await startWithY(cluster, { home: 'b' });
    expect(first).toMatchObject({ node: b.key });
    moveY(c);
    await settle(a.sharding.rebalanceNow('Counter', [yShard]));
    await eventually(() => hostedShards([a, b, c], 'Counter').get(yShard)?.join() === c.key, 'shard moved to c');

    // The ShardHome that once announced b, delivered to b only now (as a reordering network may):
    const stale: ShardingMessage = { type: 'ShardHome', typeName: 'Counter', shardId: yShard, region: b.key };
    (b.sharding as unknown as { dispatch(from: string, message: ShardingMessage): void }).dispatch(a.key, stale);
    expect(b.sharding.localShards('Counter')).toEqual([yShard]);

    await eventually(
      () => hostedShards([a, b, c], 'Counter').get(yShard)?.join() === c.key,
      'the stale copy on b stopped',
    );
    expect(await settle(b.sharding.entityRefFor('Counter', 'y').ask<CounterReply>({ op: 'get' }))).toMatchObject({
      node: c.key,
    });
  });

  it('keeps the real home running when a stale ShardHome naming an earlier home reaches it (reordered delivery)', async () => {
    const { a, b, c, moveY } = await startWithY(cluster, { home: 'b' });
    moveY(c);
    await settle(a.sharding.rebalanceNow('Counter', [yShard]));
    expect(await settle(a.sharding.entityRefFor('Counter', 'y').ask<CounterReply>({ op: 'inc' }))).toMatchObject({
      node: c.key,
      count: 1,
    });

    // The broadcast that announced b, overtaken by the later move, reaches c only now:
    const stale: ShardingMessage = { type: 'ShardHome', typeName: 'Counter', shardId: yShard, region: b.key };
    (c.sharding as unknown as { dispatch(from: string, message: ShardingMessage): void }).dispatch(a.key, stale);
    await run(1_000);

    expect(hostedShards([a, b, c], 'Counter')).toEqual(new Map([[yShard, [c.key]]]));
    expect(await settle(c.sharding.entityRefFor('Counter', 'y').ask<CounterReply>({ op: 'inc' }))).toMatchObject({
      node: c.key,
      count: 2,
    });
  });
});
