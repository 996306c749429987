// Test plan 10 and the membership paths: placements live in every node's replica, so they survive the
// coordinator moving (graceful leave or crash), reach nodes that join later, and may name a node that has
// not joined yet; a change is re-evaluated at once rather than at the rebalance tick.
import { describe, expect, it } from 'vitest';
import { eventually, run, settle } from '../sharding/harness.js';
import {
  addressOf,
  ExternalCluster,
  type ExtNode,
  NO_ANTI_ENTROPY,
  pinsOf,
  TYPE,
  useExternalClusters,
} from './harness.js';

let cluster: ExternalCluster;

useExternalClusters();

describe('10. placements survive a coordinator move', () => {
  it('keeps honouring pins written on the old coordinator after it leaves gracefully', async () => {
    cluster = new ExternalCluster();
    const [a, b, c] = await cluster.started(7001, 7002, 7003);
    // Written on the coordinator itself: the case phase 1 of the request lost.
    for (const shardId of [1, 2, 3]) await a.controller.setPlacement(shardId, c.address);
    await a.controller.setPlacement(4, b.address);
    await cluster.allocated([1, 2, 3, 4], b);
    expect(cluster.hostOf(1)).toBe(c.key);

    // Graceful leave: a's region hands its shards off (none here) before a is removed.
    await settle(cluster.members.leave(a.address));
    await cluster.stopNode(a);
    await eventually(() => b.sharding.stats().types[TYPE]?.coordinator?.warm === true, 'b took over the coordinator');
    expect(cluster.coordinatorKey()).toBe(b.key);
    expect(pinsOf(b)).toEqual([
      [1, c.key],
      [2, c.key],
      [3, c.key],
      [4, b.key],
    ]);

    // Old pins still decide: untouched shards stay, a never-allocated pinned shard goes to its target.
    await settle4(b);
    for (const shardId of [1, 2, 3]) expect(cluster.hostOf(shardId)).toBe(c.key);
    expect(cluster.hostOf(4)).toBe(b.key);
    await b.controller.setPlacement(5, c.address);
    await cluster.allocated([5], b);
    expect(cluster.hostOf(5)).toBe(c.key);
    // And a changed pin moves promptly under the new coordinator.
    await c.controller.setPlacement(1, b.address);
    await eventually(() => cluster.hostOf(1) === b.key, 'shard 1 re-pinned to b', 2_000);
  });

  it('keeps honouring pins after the coordinator crashes and is removed', async () => {
    cluster = new ExternalCluster();
    const [a, b, c] = await cluster.started(7001, 7002, 7003);
    await a.controller.setPlacement(7, b.address);
    await a.controller.setPlacement(8, c.address);
    await run(50);
    await cluster.stopNode(a);
    cluster.members.remove(a.address);
    await eventually(() => b.sharding.stats().types[TYPE]?.coordinator?.warm === true, 'b took over the coordinator');
    await cluster.allocated([7, 8], c);
    expect(cluster.hostOf(7)).toBe(b.key);
    expect(cluster.hostOf(8)).toBe(c.key);
    expect(b.warnings).toEqual([]);
  });
});

describe('joining nodes', () => {
  it('gives a node that joins later the full placement state (anti-entropy off: the join-time sync)', async () => {
    cluster = new ExternalCluster({ antiEntropyIntervalMs: NO_ANTI_ENTROPY, numberOfShards: 1000 });
    const [a, b] = await cluster.started(7001, 7002);
    await a.controller.setPlacements(
      Array.from({ length: 300 }, (_, i) => ({ shardId: i * 3, target: i % 2 === 0 ? a.key : b.key })),
    );
    await run(50);
    // Written on b after it saw a's pins, so these win: one overwrite and one tombstone in the state.
    await b.controller.setPlacements([{ shardId: 0, target: b.key }]);
    expect(await b.controller.removePlacement(3)).toBe(true);
    await run(50);
    const expected = pinsOf(a);
    expect(expected).toHaveLength(299);
    expect(pinsOf(b)).toEqual(expected);

    const d = cluster.addNode(7004);
    await eventually(() => pinsOf(d).length === expected.length, 'd pulled the state', 1_000);
    expect(pinsOf(d)).toEqual(expected);
  });

  it('accepts a pin to a node that has not joined, and honours it when the node joins', async () => {
    cluster = new ExternalCluster();
    const [a, b] = await cluster.started(7001, 7002);
    const later = addressOf(7005);
    await b.controller.setPlacement(6, later);
    await cluster.allocated([6], a);
    const interim = cluster.hostOf(6);
    expect([a.key, b.key]).toContain(interim);
    expect(a.warnings.map((w) => w.details)).toEqual([
      expect.objectContaining({ shardId: 6, target: later.toString(), reason: 'not a candidate' }),
    ]);

    // The node starts (its region registers while it is joining), then becomes Up, as a real join runs.
    cluster.members.add(later, { status: 'joining' });
    const e = cluster.startNode(later);
    expect(pinsOf(e)).toEqual([]);
    await run(300);
    expect(pinsOf(e)).toEqual([[6, later.toString()]]);
    expect(cluster.hostOf(6)).toBe(interim);
    cluster.members.setStatus(later, 'up');
    await eventually(() => cluster.hostOf(6) === later.toString(), 'shard 6 moved to the newcomer', 2_000);
  });

  it('honours a pin to a node whose sharding starts only after it is Up, without waiting for the rebalance tick', async () => {
    // The membership change came before the region existed, so it is the region's registration that
    // must trigger the re-evaluation.
    cluster = new ExternalCluster({ config: { rebalanceIntervalMs: 10_000 } });
    const [a] = await cluster.started(7001);
    const later = addressOf(7006);
    await a.controller.setPlacement(2, later);
    await cluster.allocated([2], a);
    expect(cluster.hostOf(2)).toBe(a.key);
    cluster.members.add(later);
    await run(200);
    cluster.startNode(later);
    await eventually(() => cluster.hostOf(2) === later.toString(), 'shard 2 moved to the late starter', 2_000);
  });
});

/** Lets the new coordinator run a rebalance round and any moves it starts. */
async function settle4(coordinator: ExtNode): Promise<void> {
  await coordinator.sharding.requestRebalance(TYPE).catch(() => undefined);
  await run(1_000);
}
