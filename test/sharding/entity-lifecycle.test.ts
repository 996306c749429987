// Timers and piped work across an entity's life in a cluster (fake time): a pipe whose entity was handed off
// is dropped and counted on the old node, never delivered to the entity's next incarnation; timers stop with
// the hand-off; `ctx.self` is the entity's own reference and `ctx.node` the node it runs on.
import { describe, expect, it } from 'vitest';
import { PlacementStore } from '../../crdt/index.js';
import { MemoryNetwork } from '../../src/cluster/transport/memory-transport.js';
import { PlacementReplication } from '../../src/placement-replication/placement-replication.js';
import { ClusterSharding } from '../../src/sharding/cluster-sharding.js';
import type { EntityBehavior } from '../../src/sharding/core/entity-api.js';
import { FakeCluster } from '../support/fake-membership.js';
import { FAST_SHARDING_CONFIG } from '../support/in-process-cluster.js';
import { testAddress } from '../support/members.js';
import { ManualScheduler } from '../support/schedulers.js';
import { TestCluster, entityInShard, eventually, pinTo, run, settle, useTestClusters } from './harness.js';

const SHARDS = 10;

interface Seen {
  readonly node: string;
  readonly message: unknown;
}

describe('entity lifecycle: timers and pipes', () => {
  let cluster: TestCluster;
  useTestClusters(() => (cluster = new TestCluster()));

  it('a pipe that settles after its entity was handed off is dropped and counted, not given to the new incarnation', async () => {
    const [a, b, c] = cluster.addNodes(7001, 7002, 7003);
    let home = b.key;
    const seen: Seen[] = [];
    let release!: (value: string) => void;
    const work = new Promise<string>((resolve) => (release = resolve));
    const behavior: EntityBehavior = (ctx) => ({
      receive(message: unknown) {
        seen.push({ node: ctx.node.toString(), message });
        if (message === 'think') ctx.pipeToSelf(work, (outcome) => ({ piped: outcome.ok ? outcome.value : 'failed' }));
        if (message === 'tick-start') ctx.timers.startTimerWithFixedDelay('tick', 'tick', 100);
        return ctx.node.toString();
      },
    });
    cluster.initAll({ typeName: 'Dad', behavior, numberOfShards: SHARDS, allocationStrategy: pinTo(() => home) });
    const entityId = entityInShard(3, SHARDS);
    const ref = a.sharding.entityRefFor('Dad', entityId);
    expect(await settle(ref.ask('think'))).toBe(b.key);
    expect(await settle(ref.ask('tick-start'))).toBe(b.key);
    await run(350);
    const ticksOnB = seen.filter((s) => s.node === b.key && s.message === 'tick').length;
    expect(ticksOnB).toBeGreaterThanOrEqual(3);

    home = c.key;
    await settle(a.sharding.rebalanceNow('Dad', [3]));
    await eventually(
      () => c.sharding.localShards('Dad').includes(3) && b.sharding.localShards('Dad').length === 0,
      'shard 3 moved to c',
    );
    expect(await settle(ref.ask('hello'))).toBe(c.key);
    const ticksAtMove = seen.filter((s) => s.message === 'tick').length;

    release('a joke');
    await run(1_000);
    expect(seen.filter((s) => typeof s.message === 'object')).toEqual([]);
    expect(b.sharding.stats().types['Dad']?.region.latePipeDrops).toBe(1);
    expect(c.sharding.stats().types['Dad']?.region.latePipeDrops).toBe(0);
    // The old incarnation's timer ended with it; the new one started none.
    expect(seen.filter((s) => s.message === 'tick').length).toBe(ticksAtMove);
  });

  it("ctx.self is the entity's own reference: what it tells itself arrives through sharding", async () => {
    const [a, b] = cluster.addNodes(7001, 7002);
    const seen: Seen[] = [];
    const behavior: EntityBehavior = (ctx) => ({
      receive(message: unknown) {
        seen.push({ node: ctx.node.toString(), message });
        if (message === 'start') ctx.self.tell('to-myself');
        return { self: `${ctx.self.typeName}/${ctx.self.entityId}/${ctx.self.shardId}`, shardId: ctx.shardId };
      },
    });
    cluster.initAll({ typeName: 'Echo', behavior, numberOfShards: SHARDS, allocationStrategy: pinTo(() => b.key) });
    const ref = a.sharding.entityRefFor('Echo', 'x');
    const answer = await settle(ref.ask<{ self: string; shardId: number }>('start'));
    expect(answer).toEqual({ self: `Echo/x/${ref.shardId}`, shardId: ref.shardId });
    await eventually(() => seen.length === 2, 'the message to itself arrived');
    expect(seen).toEqual([
      { node: b.key, message: 'start' },
      { node: b.key, message: 'to-myself' },
    ]);
  });

  it('entity timers run on the scheduler ClusterSharding is given, not on the process clock', async () => {
    const scheduler = new ManualScheduler();
    const seen: unknown[] = [];
    await withOneNode(scheduler, async (sharding) => {
      sharding.init({
        typeName: 'Timed',
        numberOfShards: SHARDS,
        behavior: (ctx) => ({
          receive(message: unknown) {
            if (message === 'start') ctx.timers.startSingleTimer('k', 'fired', 500);
            else seen.push(message);
          },
        }),
      });
      await settle(sharding.entityRefFor('Timed', 'x').ask('start'));
      await run(5_000);
      expect(seen).toEqual([]);
      scheduler.advance(500);
      await run(10);
      expect(seen).toEqual(['fired']);
    });
  });

  it("an ask's deadline runs on that scheduler too: the process clock alone never times it out", async () => {
    const scheduler = new ManualScheduler();
    await withOneNode(scheduler, async (sharding) => {
      // The entity answers only once released, after the ask's deadline: idle again before the shutdown.
      let release = (): void => undefined;
      const answered = new Promise<void>((resolve) => (release = resolve));
      sharding.init({ typeName: 'Silent', numberOfShards: SHARDS, behavior: () => ({ receive: () => answered }) });
      const outcome = sharding
        .entityRefFor('Silent', 'x')
        .ask('hello', { timeoutMs: 1_000 })
        .then(
          () => 'answered',
          (error: unknown) => (error as { code?: string }).code,
        );
      await run(5_000);
      const early = await Promise.race([outcome, Promise.resolve('pending')]);
      expect(early).toBe('pending');
      scheduler.advance(1_000);
      expect(await settle(outcome)).toBe('timeout');
      release();
      await run(10);
    });
  });
});

/** One node's ClusterSharding on the in-memory network with `scheduler`, shut down after `body`. */
async function withOneNode(
  scheduler: ManualScheduler,
  body: (sharding: ClusterSharding) => Promise<void>,
): Promise<void> {
  const members = new FakeCluster();
  const address = members.add(testAddress(7301));
  const membership = members.membership(address);
  const transport = new MemoryNetwork().transport(address);
  const placements = new PlacementReplication(new PlacementStore({ node: address.toString() }), transport, membership);
  const sharding = new ClusterSharding({ transport, membership, placements, scheduler, config: FAST_SHARDING_CONFIG });
  try {
    await body(sharding);
  } finally {
    await sharding.shutdown();
    placements.close();
    await transport.close();
  }
}
