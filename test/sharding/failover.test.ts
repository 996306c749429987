// Losing nodes: the coordinator moving to the next oldest member (homes on live nodes survive), a downed
// member's shards re-homed at once (and the first answer after it reported), and the protocol converging on a lossy, duplicating, reordering network.
// A coordinator failing in the middle of a hand-off, and stale messages, are in failover-hand-off.test.ts.
import { describe, expect, it } from 'vitest';
import { TestCluster, askLater, counter, eventually, hostedShards, run, settle, useTestClusters } from './harness.js';
import type { CounterReply, EntityEvent, TestNode } from './harness.js';
import { SHARDS, entityOfShard, startWithY, touchAll, yShard } from './failover-fixtures.js';

describe('failover', () => {
  let cluster: TestCluster;
  useTestClusters(() => (cluster = new TestCluster()));

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
    const { a, b, c, first } = await startWithY(cluster);
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
    const { a, b, c } = await startWithY(cluster);
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
    const { a, b, c } = await startWithY(cluster, { behavior: counter(events) });
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
    const { a, b, c } = await startWithY(cluster);
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

  it("reports a failover's first message where an ask to one of the dead member's shards is first answered", async () => {
    const steps: string[] = [];
    cluster = new TestCluster({
      events: (address) => ({ onFailoverStep: (member, phase) => void steps.push(`${address}: ${member} ${phase}`) }),
    });
    const [, b, c] = cluster.addNodes(7001, 7002, 7003);
    cluster.initAll({ typeName: 'Counter', behavior: counter(), numberOfShards: SHARDS });
    const homes = await touchAll(b, 40);
    const onC = [...homes].filter(([, home]) => home === c.key).map(([entityId]) => entityId);
    const elsewhere = [...homes].find(([, home]) => home !== c.key)?.[0];
    expect(onC.length).toBeGreaterThan(1);

    await cluster.crash(c);
    cluster.members.setReachable(c.address, false);
    cluster.members.setStatus(c.address, 'down');
    await run(500);
    const firstMessage = (): string[] => steps.filter((step) => step.endsWith('first-message'));
    expect(firstMessage()).toEqual([]);
    // An answer from a shard that never lived on c is no failover's first message.
    await settle(b.sharding.entityRefFor('Counter', elsewhere ?? 'none').ask({ op: 'inc' }));
    expect(firstMessage()).toEqual([]);
    await settle(b.sharding.entityRefFor('Counter', onC[0] ?? 'none').send({ op: 'inc' }));
    expect(firstMessage()).toEqual([`${b.key}: ${c.key} first-message`]);
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
    const asked = b.sharding.entityRefFor('Counter', entityOfShard(shardId)).ask<CounterReply>({ op: 'inc' });
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
    const { a, b, c, first } = await startWithY(cluster);
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
});
