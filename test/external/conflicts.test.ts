// Conflicting operator writes: concurrent pins for one shard from two controllers converge on every node to
// the greatest HLC and the shard lives there; a node whose wall clock is an hour behind still wins with a
// write made after it saw the current value (per-key dominance), and loses a genuinely concurrent race.
import { describe, expect, it } from 'vitest';
import { compareHlc } from '../../crdt/index.js';
import { eventually, run } from '../sharding/harness.js';
import { ExternalCluster, type ExtNode, pinsOf, recordsOf, useExternalClusters } from './harness.js';

let cluster: ExternalCluster;
const HOUR = 3_600_000;

useExternalClusters();

function sameEverywhere(nodes: ReadonlyArray<ExtNode>): boolean {
  const first = JSON.stringify(pinsOf(nodes[0] as ExtNode));
  return nodes.every((n) => JSON.stringify(pinsOf(n)) === first);
}

describe('conflicting placements', () => {
  it('resolves two controllers writing the same shard at the same moment to the greatest HLC everywhere', async () => {
    cluster = new ExternalCluster({ delayMs: 1 });
    const [a, b, c] = await cluster.started(7001, 7002, 7003);
    cluster.touch(c, 9);
    await eventually(() => cluster.hostOf(9) !== undefined, 'shard 9 allocated');

    for (let round = 0; round < 5; round++) {
      // Same fake instant, neither write has seen the other: a true conflict.
      const [[fromB], [fromC]] = await Promise.all([
        b.controller.setPlacements([{ shardId: 9, target: round % 2 === 0 ? a.key : c.key }]),
        c.controller.setPlacements([{ shardId: 9, target: b.key }]),
      ]);
      if (fromB === undefined || fromC === undefined) throw new Error('no write record');
      expect(fromB.hlc.wallMs).toBe(fromC.hlc.wallMs);
      const winner = compareHlc(fromB.hlc, fromC.hlc) > 0 ? fromB : fromC;
      await eventually(() => sameEverywhere(cluster.nodes), `round ${round}: replicas agree`, 1_000);
      for (const node of cluster.nodes) {
        expect(pinsOf(node)).toEqual([[9, winner.target.toString()]]);
        expect(recordsOf(node)[0]?.writer).toBe(winner.writer);
      }
      await eventually(
        () => cluster.hostOf(9) === winner.target.toString(),
        `round ${round}: shard 9 on the winner`,
        2_000,
      );
      await run(100);
    }
  });

  it('lets a node whose clock is an hour behind win with a write made after it saw the current value', async () => {
    cluster = new ExternalCluster({ delayMs: 1 });
    const a = cluster.addNode(7001);
    const b = cluster.addNode(7002);
    const slow = cluster.addNode(7003, {}, { now: () => Date.now() - HOUR });
    await run(600);
    const [current] = await a.controller.setPlacements([{ shardId: 4, target: b.key }]);
    await eventually(() => pinsOf(slow).length === 1, 'the slow node saw the current value');
    cluster.touch(a, 4);
    await eventually(() => cluster.hostOf(4) === b.key, 'shard 4 on b');

    const [override] = await slow.controller.setPlacements([{ shardId: 4, target: a.key }]);
    if (current === undefined || override === undefined) throw new Error('no write record');
    // Its own clock reads an hour earlier, yet the write is stamped just past the value it overrides.
    expect(override.hlc.wallMs).toBeGreaterThanOrEqual(current.hlc.wallMs);
    expect(compareHlc(override.hlc, current.hlc)).toBeGreaterThan(0);
    await eventually(() => sameEverywhere(cluster.nodes) && pinsOf(a)[0]?.[1] === a.key, 'override everywhere', 1_000);
    await eventually(() => cluster.hostOf(4) === a.key, 'shard 4 moved to a', 2_000);
  });

  it('lets the later wall clock win a truly concurrent race with the slow node (LWW, not first-come)', async () => {
    cluster = new ExternalCluster({ delayMs: 1 });
    const a = cluster.addNode(7001);
    cluster.addNode(7002);
    const slow = cluster.addNode(7003, {}, { now: () => Date.now() - HOUR });
    await run(600);
    cluster.net.isolate(slow.address);
    const [fromSlow] = await slow.controller.setPlacements([{ shardId: 5, target: slow.key }]);
    await run(10);
    const [fromA] = await a.controller.setPlacements([{ shardId: 5, target: a.key }]);
    cluster.net.heal();
    if (fromSlow === undefined || fromA === undefined) throw new Error('no write record');
    expect(compareHlc(fromA.hlc, fromSlow.hlc)).toBeGreaterThan(0);
    await eventually(() => sameEverywhere(cluster.nodes) && pinsOf(slow)[0]?.[1] === a.key, 'a wins everywhere', 5_000);
  });
});
