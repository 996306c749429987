// Cordon and drain on in-process clusters (fake time): a cordon written on one node reaches every node and
// keeps new shards off the cordoned one while it keeps what it hosts; a coordinator that moved still honours
// it (a prefer pin to the cordoned node falls back with a warning, a require pin waits); a drain empties a
// node while messages keep flowing, and no message to a shard that was elsewhere is lost.
import { describe, expect, it } from 'vitest';
import { CordonOperations } from '../../src/node/cordon-operations.js';
import { askLater, eventually, run, settle, type CounterReply } from '../sharding/harness.js';
import { ExternalCluster, TYPE, useExternalClusters, type ExtNode } from './harness.js';
import { entityInShard } from '../sharding/harness.js';

useExternalClusters();

function ops(node: ExtNode): CordonOperations {
  return new CordonOperations(() => node.membership.members(), node.sharding);
}

function shardsOn(cluster: ExternalCluster, node: ExtNode): number[] {
  return [...cluster.hosted()]
    .flatMap(([shardId, hosts]) => (hosts.includes(node.key) ? [shardId] : []))
    .sort((x, y) => x - y);
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);

describe('cordon', () => {
  it('converges to every node, keeps new shards off the node and leaves its shards where they are; uncordon undoes it', async () => {
    const cluster = new ExternalCluster();
    const [a, b, c] = [cluster.addNode(7001), cluster.addNode(7002), cluster.addNode(7003)];
    await run(600);
    await cluster.allocated(range(0, 30), a);
    const onB = shardsOn(cluster, b);
    expect(onB.length).toBeGreaterThan(0);

    await settle(ops(c).cordon(b.key, { by: 'ops', reason: 'kernel' }));
    await eventually(
      () => [a, b, c].every((n) => n.sharding.cordons.isCordoned(b.key)),
      'the cordon reached every node',
      2_000,
    );
    for (const n of [a, b, c])
      expect(n.sharding.cordons.list()).toMatchObject([{ address: b.key, by: 'ops', reason: 'kernel' }]);

    await cluster.allocated(range(30, 60), a);
    await settle(a.sharding.requestRebalance(TYPE));
    await run(500);
    expect(shardsOn(cluster, b)).toEqual(onB);

    await settle(ops(a).uncordon(b.key));
    await eventually(
      () => [a, b, c].every((n) => !n.sharding.cordons.isCordoned(b.key)),
      'the uncordon reached every node',
      2_000,
    );
    // b is the least loaded now: new shards go there again.
    await cluster.allocated(range(60, 70), a);
    expect(range(60, 70).some((shardId) => cluster.hostOf(shardId) === b.key)).toBe(true);
  });

  it('is honoured by a coordinator that moved: prefer pins to the node fall back, require pins wait until uncordon', async () => {
    const cluster = new ExternalCluster();
    const [a, b, c] = [cluster.addNode(7001), cluster.addNode(7002), cluster.addNode(7003)];
    await run(600);
    expect(cluster.coordinatorKey()).toBe(a.key);
    await settle(ops(b).cordon(c.key, { reason: 'maintenance' }));
    await eventually(
      () => [a, b, c].every((n) => n.sharding.cordons.isCordoned(c.key)),
      'the cordon reached every node',
      2_000,
    );

    await settle(cluster.members.leave(a.address));
    await cluster.stopNode(a);
    await eventually(() => b.sharding.stats().types[TYPE]?.coordinator?.warm === true, 'b took over the coordinator');
    await settle(b.controller.setPlacement(5, c.address));
    await settle(b.controller.setPlacement(6, c.address, { mode: 'require' }));

    await cluster.allocated([...range(10, 40), 5], b);
    for (const shardId of [...range(10, 40), 5]) expect(cluster.hostOf(shardId)).not.toBe(c.key);
    expect(b.warnings.some((w) => w.details.shardId === 5 && w.details.target === c.key)).toBe(true);
    cluster.touch(b, 6);
    await run(1_000);
    expect(cluster.hostOf(6)).toBeUndefined();
    expect(b.sharding.stats().types[TYPE]?.coordinator?.waitingShards).toBeGreaterThanOrEqual(1);

    await settle(ops(b).uncordon(c.key));
    await eventually(() => cluster.hostOf(6) === c.key, 'the waiting require-pinned shard found its home on c', 5_000);
    await eventually(() => cluster.hostOf(5) === c.key, 'the prefer-pinned shard moved to c', 5_000);
  });
});

describe('drain', () => {
  it('empties a node while messages keep flowing; no message to a shard elsewhere is lost', async () => {
    const cluster = new ExternalCluster();
    const [a, b, c] = [cluster.addNode(7001), cluster.addNode(7002), cluster.addNode(7003)];
    await run(600);
    const shards = range(0, 30);
    await cluster.allocated(shards, a);
    const onB = new Set(shardsOn(cluster, b));
    expect(onB.size).toBeGreaterThan(0);
    const entity = (shardId: number): string => entityInShard(shardId, cluster.numberOfShards);
    const asks: Array<{ shardId: number; answer: () => CounterReply | undefined }> = [];
    const askAll = (): void => {
      for (const shardId of shards) asks.push({ shardId, ...askLater(shardId % 2 === 0 ? a : c, entity(shardId)) });
    };
    askAll();
    await run(50);
    const events = cluster.events.length;

    const drained = settle(ops(c).drain(b.key, { by: 'ops', reason: 'retire' }));
    // Messages keep coming while the shards move.
    for (let round = 0; round < 5; round++) {
      askAll();
      await run(20);
    }
    const outcome = await drained;
    expect(outcome.moves[TYPE]?.map((move) => move.shardId).sort((x, y) => x - y)).toEqual(
      [...onB].sort((x, y) => x - y),
    );
    for (const move of outcome.moves[TYPE] ?? []) {
      expect(move.from).toBe(b.key);
      expect([a.key, c.key]).toContain(move.to);
    }
    await eventually(() => shardsOn(cluster, b).length === 0, 'b hosts no shard', 10_000);
    askAll();
    await eventually(() => asks.every((ask) => ask.answer() !== undefined), 'every ask answered', 20_000);
    for (const shardId of shards) expect(cluster.hostOf(shardId)).toBeDefined();
    expect(shardsOn(cluster, b)).toEqual([]);

    // Shards that were not on b kept their entities: each counted every ask (after the one `allocated` sent),
    // from the same node.
    for (const shardId of shards.filter((s) => !onB.has(s))) {
      const replies = asks.filter((ask) => ask.shardId === shardId).map((ask) => ask.answer() as CounterReply);
      expect(replies.map((r) => r.count).sort((x, y) => x - y)).toEqual(replies.map((_, i) => i + 2));
      expect(new Set(replies.map((r) => r.node)).size).toBe(1);
    }
    const stops = cluster.events.slice(events).filter((e) => e.kind === 'stop');
    expect(stops.every((e) => e.node === b.key)).toBe(true);
    expect(b.sharding.cordons.isCordoned(b.key)).toBe(true);
  });
});
