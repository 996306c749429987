// Losing nodes: the coordinator moving to the next oldest member (homes on live nodes survive), a downed
// member's shards re-homed on next use, and the protocol converging on a lossy, duplicating, reordering network.
import { describe, expect, it } from 'vitest';
import type { EntityBehavior } from '../../src/sharding/region/entity.js';
import { isFamilyMessage } from '../../src/cluster/wire-message.js';
import { SHARDING_MESSAGES, type ShardingMessage } from '../../src/sharding/protocol/messages.js';
import { shardIdFor } from '../../src/sharding/shard-id.js';
import {
  TestCluster,
  askLater,
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

const SHARDS = 30;
const yShard = shardIdFor('y', SHARDS);

async function touchAll(via: TestNode, count: number): Promise<Map<string, string>> {
  const homes = new Map<string, string>();
  for (let i = 0; i < count; i++) {
    const reply = await settle(via.sharding.entityRefFor('Counter', `e${i}`).ask<CounterReply>({ op: 'inc' }));
    homes.set(`e${i}`, reply.node);
  }
  return homes;
}

/** A counter whose `{ op: 'slow' }` takes `slowMs` of fake time, so a shard hosting it drains slowly on hand-off. */
function slowCounter(events: EntityEvent[], slowMs: number): EntityBehavior {
  const inner = counter(events);
  return (ctx) => {
    const entity = inner(ctx);
    return {
      async receive(message: unknown): Promise<unknown> {
        if ((message as { op?: unknown } | null)?.op === 'slow')
          await new Promise((resolve) => setTimeout(resolve, slowMs));
        return entity.receive(message);
      },
      stop: () => entity.stop?.(),
    };
  };
}

/**
 * The most nodes on which the entity was alive (started and not yet stopped) at the same time, replayed from
 * the event log: unlike sampling `localShards`, this also sees entities of a shard that is still stopping.
 */
function maxConcurrentHosts(events: ReadonlyArray<EntityEvent>, entityId: string): number {
  const live = new Set<string>();
  let max = 0;
  for (const event of events) {
    if (event.entityId !== entityId) continue;
    if (event.kind === 'start') live.add(event.node);
    if (event.kind === 'stop') live.delete(event.node);
    max = Math.max(max, live.size);
  }
  return max;
}

describe('failover', () => {
  let cluster: TestCluster;
  useTestClusters(() => (cluster = new TestCluster()));

  /**
   * Three nodes (a, the oldest, runs the coordinator) with the shard of "y" on `home` (c unless given; `moveY`
   * changes it for later allocations), other shards on the lowest address, and "y" counted once via a.
   */
  async function startWithY(options: { behavior?: EntityBehavior; home?: 'b' | 'c' } = {}) {
    const [a, b, c] = cluster.addNodes(7001, 7002, 7003);
    let target = options.home === 'b' ? b : c;
    const allocationStrategy = pinTo(() => target.address, yShard);
    cluster.initAll({
      typeName: 'Counter',
      behavior: options.behavior ?? counter(),
      numberOfShards: SHARDS,
      allocationStrategy,
    });
    const first = await settle(a.sharding.entityRefFor('Counter', 'y').ask<CounterReply>({ op: 'inc' }));
    return { a, b, c, first, moveY: (to: TestNode) => void (target = to) };
  }

  it('moves the coordinator to the next oldest member when the oldest is removed; homes on live nodes survive', async () => {
    const [a, b, c] = cluster.addNodes(7001, 7002, 7003);
    cluster.initAll({ typeName: 'Counter', behavior: counter(), numberOfShards: SHARDS });
    const homes = await touchAll(c, 40);
    const before = await settle(c.sharding.getShardLocations('Counter'));
    const survivors = before.regions.filter((r) => r.address !== a.key);
    expect(survivors.flatMap((r) => r.shards).length).toBeGreaterThan(0);

    await cluster.crashAndRemove(a);
    expect(b.sharding.coordinatorFor('Counter')?.toString()).toBe(b.key);
    const after = await settle(c.sharding.getShardLocations('Counter'));
    // The new coordinator rebuilt its map from the regions' registrations: every home on b and c is known.
    expect(after.regions).toEqual(survivors);
    expect(b.sharding.stats().types['Counter']?.coordinator?.warm).toBe(true);

    // Entities on live nodes kept their place and their state; the dead node's entities start afresh elsewhere.
    for (const [entityId, home] of homes) {
      const reply = await settle(b.sharding.entityRefFor('Counter', entityId).ask<CounterReply>({ op: 'get' }));
      if (home === a.key) expect(reply).toMatchObject({ count: 0 });
      else expect(reply).toMatchObject({ count: 1, node: home });
    }
    for (const [shardId, hosts] of hostedShards([b, c], 'Counter')) expect(hosts, `shard ${shardId}`).toHaveLength(1);
  });

  it('waits for live regions to re-register before allocating shards it has never heard of', async () => {
    // Shard of "y" goes to c; any other shard to the lowest address. A coordinator that did not wait for c's
    // registration would hand y's shard to b and run it twice.
    const { a, b, c, first } = await startWithY();
    expect(first).toMatchObject({ node: c.key });

    cluster.net.partition([b.address], [c.address]);
    await cluster.crashAndRemove(a);
    const pending = b.sharding.entityRefFor('Counter', 'y').ask<CounterReply>({ op: 'inc' });
    await run(200);
    expect(b.sharding.stats().types['Counter']?.coordinator?.warm).toBe(false);
    expect(b.sharding.localShards('Counter')).toEqual([]);
    cluster.net.heal();
    expect(await settle(pending)).toMatchObject({ node: c.key, count: 2 });
    expect(b.sharding.stats().types['Counter']?.coordinator?.warm).toBe(true);
    expect(hostedShards([b, c], 'Counter')).toEqual(new Map([[yShard, [c.key]]]));
  });

  it('stops a second copy when a late region claims a shard the new coordinator already gave away', async () => {
    const { a, b, c } = await startWithY();
    expect(c.sharding.localShards('Counter')).toEqual([yShard]);

    // c stays cut off past the warm-up while the failure detector still calls it reachable (its messages are
    // lost, not late), so the warm-up ends without it and y's shard gets a new home on b.
    cluster.net.partition([b.address], [c.address]);
    await cluster.crashAndRemove(a);
    expect(await settle(b.sharding.entityRefFor('Counter', 'y').ask<CounterReply>({ op: 'inc' }))).toMatchObject({
      node: b.key,
      count: 1,
    });
    cluster.net.heal();
    await eventually(() => c.sharding.localShards('Counter').length === 0, 'c stopped its stale copy');
    expect(hostedShards([b, c], 'Counter')).toEqual(new Map([[yShard, [b.key]]]));
  });

  it('does not give away a shard it never heard of while an unreachable member that may host it has not registered', async () => {
    const events: EntityEvent[] = [];
    const { a, b, c } = await startWithY({ behavior: counter(events) });
    expect(c.sharding.localShards('Counter')).toEqual([yShard]);

    // c is cut off and unreachable (not yet downed) when the coordinator moves from a to b: c still runs y's
    // shard, so b must not start a second copy, however long the warm-up has been over.
    cluster.net.partition([b.address], [c.address]);
    cluster.members.setReachable(c.address, false);
    await cluster.crashAndRemove(a);
    const { answer } = askLater(b, 'y');
    await run(5_000);
    expect(b.sharding.stats().types['Counter']?.coordinator?.warm).toBe(true);
    expect(answer()).toBeUndefined();
    expect(b.sharding.localShards('Counter')).toEqual([]);
    expect(hostedShards([b, c], 'Counter')).toEqual(new Map([[yShard, [c.key]]]));

    // The majority downs c (which stops its copy on seeing itself down): now the shard may start on b.
    cluster.members.setStatus(c.address, 'down');
    await eventually(() => answer() !== undefined, 'the waiting ask is answered');
    expect(answer()).toMatchObject({ node: b.key, count: 1 });
    expect(hostedShards([b, c], 'Counter')).toEqual(new Map([[yShard, [b.key]]]));
    await eventually(
      () => events.some((e) => e.entityId === 'y' && e.kind === 'stop' && e.node === c.key),
      'c stopped its copy',
    );
  });

  it('answers the waiting requests with the old home when the unreachable member comes back and registers it', async () => {
    const { a, b, c } = await startWithY();
    cluster.net.partition([b.address], [c.address]);
    cluster.members.setReachable(c.address, false);
    await cluster.crashAndRemove(a);
    const pending = b.sharding.entityRefFor('Counter', 'y').ask<CounterReply>({ op: 'inc' }, { timeoutMs: 20_000 });
    await run(3_000);
    cluster.net.heal();
    cluster.members.setReachable(c.address, true);
    expect(await settle(pending)).toMatchObject({ node: c.key, count: 2 });
    expect(hostedShards([b, c], 'Counter')).toEqual(new Map([[yShard, [c.key]]]));
  });

  it("drops a downed member's regions and shards; its shards get a new home at once, before their next message", async () => {
    const [a, b, c] = cluster.addNodes(7001, 7002, 7003);
    cluster.initAll({ typeName: 'Counter', behavior: counter(), numberOfShards: SHARDS });
    const homes = await touchAll(a, 40);
    const onC = c.sharding.localShards('Counter');
    expect(onC.length).toBeGreaterThan(0);

    await cluster.crash(c);
    cluster.members.setReachable(c.address, false);
    cluster.members.setStatus(c.address, 'down');
    const locations = await settle(a.sharding.getShardLocations('Counter'));
    expect(locations.regions.map((r) => r.address)).toEqual([a.key, b.key]);
    // Re-homed in the round that removed c's region (issue 26), not on each shard's next message.
    expect(locations.regions.flatMap((r) => r.shards)).toEqual(expect.arrayContaining(onC));

    for (const [entityId, home] of homes) {
      const reply = await settle(b.sharding.entityRefFor('Counter', entityId).ask<CounterReply>({ op: 'inc' }));
      expect(reply.node).not.toBe(c.key);
      expect(reply.count).toBe(home === c.key ? 1 : 2);
      if (home !== c.key) expect(reply.node).toBe(home);
    }
    const rehomed = (await settle(a.sharding.getShardLocations('Counter'))).regions.flatMap((r) => r.shards);
    for (const shardId of onC) expect(rehomed).toContain(shardId);
  });

  /** Three nodes with a 2 s down-removal margin, 40 shards allocated; `onC` are those c hosts. */
  async function withMargin(): Promise<{ a: TestNode; b: TestNode; c: TestNode; onC: number[] }> {
    cluster = new TestCluster({ config: { downRemovalMarginMs: 2_000 } });
    const [a, b, c] = cluster.addNodes(7001, 7002, 7003);
    cluster.initAll({ typeName: 'Counter', behavior: counter(), numberOfShards: SHARDS });
    await touchAll(a, 40);
    const onC = c.sharding.localShards('Counter');
    expect(onC.length).toBeGreaterThan(0);
    return { a, b, c, onC: [...onC] };
  }

  it("keeps a downed member's shards on it for downRemovalMarginMs, then gives them a new home", async () => {
    const { a, b, c, onC } = await withMargin();
    // c was paused, not partitioned as a minority: it did not down itself, the others downed it. Silent, but
    // its address does not refuse connections (it was not confirmed dead), so the margin runs in full.
    cluster.net.isolate(c.address);
    cluster.members.setReachable(c.address, false);
    cluster.members.setStatus(c.address, 'down');
    await run(500);
    // Asked during the margin: the coordinator holds the answer until the shard has a live home.
    const [shardId] = onC as [number];
    const asked = b.sharding.entityRefFor('Counter', entityInShard(shardId, SHARDS)).ask<CounterReply>({ op: 'inc' });
    await run(1_000);
    const during = await settle(a.sharding.getShardLocations('Counter'));
    expect(during.regions.find((r) => r.address === c.key)?.shards).toEqual(onC);
    expect([a.key, b.key]).toContain((await settle(asked)).node);
    const after = await settle(a.sharding.getShardLocations('Counter'));
    expect(after.regions.map((r) => r.address)).toEqual([a.key, b.key]);
    expect(after.regions.flatMap((r) => r.shards)).toContain(shardId);
  });

  it('applies the margin also when the member leaves the view without ever showing as down', async () => {
    const { a, c, onC } = await withMargin();
    // The leader downed and removed c within one gossip round: the coordinator's view goes from up to gone.
    cluster.net.isolate(c.address);
    cluster.members.remove(c.address);
    await run(1_500);
    const during = await settle(a.sharding.getShardLocations('Counter'));
    expect(during.regions.find((r) => r.address === c.key)?.shards).toEqual(onC);
    expect(during.handingOff).toEqual(onC);
    await run(1_000);
    expect((await settle(a.sharding.getShardLocations('Counter'))).regions.map((r) => r.address)).not.toContain(c.key);
  });

  it("a new coordinator does not give a just-downed member's shards away during the margin either", async () => {
    cluster = new TestCluster({ config: { downRemovalMarginMs: 2_000 } });
    const { a, b, c, first } = await startWithY();
    expect(first).toMatchObject({ node: c.key });

    // c is downed by the others and, at the same time, the coordinator's node dies: the new coordinator on b
    // never hears of c's shards, and c may not know yet that it is down.
    await cluster.crash(c);
    cluster.members.setReachable(c.address, false);
    cluster.members.setStatus(c.address, 'down');
    await cluster.crashAndRemove(a);
    const startedAt = Date.now();
    const pending = b.sharding.entityRefFor('Counter', 'y').ask<CounterReply>({ op: 'inc' });
    await run(1_500);
    expect(b.sharding.localShards('Counter')).not.toContain(yShard);
    expect(await settle(pending)).toMatchObject({ node: b.key, count: 1 });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(2_000);
  });

  it('stops the local shards of a node that is downed while still running, so no shard runs twice', async () => {
    const events: EntityEvent[] = [];
    const [a, b, c] = cluster.addNodes(7001, 7002, 7003);
    cluster.initAll({ typeName: 'Counter', behavior: counter(events), numberOfShards: SHARDS });
    await touchAll(a, 30);
    const onC = c.sharding.localShards('Counter');
    expect(onC.length).toBeGreaterThan(0);
    // c sits on the minority side of a partition and is downed; its process keeps running.
    cluster.net.isolate(c.address);
    cluster.members.setReachable(c.address, false);
    cluster.members.setStatus(c.address, 'down');
    await eventually(() => c.sharding.stats().types['Counter']?.region.localEntities === 0, 'c stopped its entities');
    expect(c.sharding.localShards('Counter')).toEqual([]);
    const startedOnC = events.filter((e) => e.kind === 'start' && e.node === c.key).length;
    expect(events.filter((e) => e.kind === 'stop' && e.node === c.key)).toHaveLength(startedOnC);
    await touchAll(b, 30);
    for (const [shardId, hosts] of hostedShards(cluster.nodes, 'Counter'))
      expect(hosts, `shard ${shardId}`).toHaveLength(1);
    expect(hostedShards(cluster.nodes, 'Counter').size).toBeGreaterThanOrEqual(onC.length);
  });

  it('converges on a network that drops, duplicates and reorders: every entity answers, no shard runs twice', async () => {
    cluster = new TestCluster({ seed: 42 });
    const nodes = cluster.addNodes(7001, 7002, 7003);
    cluster.initAll({ typeName: 'Counter', behavior: counter(), numberOfShards: SHARDS });
    cluster.net.setFaults({ dropRate: 0.2, duplicateRate: 0.2, jitterMs: 20, reorder: true });
    const answered = new Set<string>();
    for (let round = 0; round < 20 && answered.size < 30; round++) {
      const asks = [];
      for (let i = 0; i < 30; i++) {
        const entityId = `e${i}`;
        if (answered.has(entityId)) continue;
        const via = nodes[(i + round) % 3] as TestNode;
        asks.push(
          via.sharding
            .entityRefFor('Counter', entityId)
            .ask({ op: 'get' }, { timeoutMs: 500 })
            .then(
              () => answered.add(entityId),
              () => undefined,
            ),
        );
      }
      await settle(Promise.all(asks));
    }
    expect(answered.size).toBe(30);
    cluster.net.setFaults({});
    await run(1_000);
    for (const [shardId, hosts] of hostedShards(nodes, 'Counter')) expect(hosts, `shard ${shardId}`).toHaveLength(1);
    const locations = await settle(nodes[1]!.sharding.getShardLocations('Counter'));
    const believed = new Map(locations.regions.flatMap((r) => r.shards.map((s) => [s, [r.address]] as const)));
    expect(hostedShards(nodes, 'Counter')).toEqual(believed);
  });

  it('starts no shard elsewhere while its previous owner, handing it off when the coordinator failed, still stops it', async () => {
    const events: EntityEvent[] = [];
    const { a, b, c, first, moveY } = await startWithY({ behavior: slowCounter(events, 3_000) });
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
    const { a, b, c, first, moveY } = await startWithY({ home: 'b' });
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
    const { a, b, c, moveY } = await startWithY({ home: 'b' });
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
