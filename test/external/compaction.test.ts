// A node's placement store compacting in a running cluster: the others follow it to the new generation,
// every pin survives, and pins written across the switch still move their shards.
import { describe, expect, it } from 'vitest';
import { eventually, run } from '../sharding/harness.js';
import { ExternalCluster, type ExtNode, pinsOf, useExternalClusters } from './harness.js';

useExternalClusters();

describe('compaction in a running cluster', () => {
  it('keeps every pin, brings every node to the new generation, and still moves shards on new pins', async () => {
    const cluster = new ExternalCluster({});
    const nodes: [ExtNode, ExtNode, ExtNode] = [cluster.addNode(7001), cluster.addNode(7002), cluster.addNode(7003)];
    const [a, b, c] = nodes;
    const pinFor = (shardId: number, round: number): ExtNode => nodes[(shardId + round) % 3] as ExtNode;
    await run(600);
    for (let round = 0; round < 5; round++) {
      for (let shardId = 0; shardId < 6; shardId++)
        await b.controller.setPlacement(shardId, pinFor(shardId, round).address);
    }
    await eventually(
      () => nodes.every((n) => JSON.stringify(pinsOf(n)) === JSON.stringify(pinsOf(b))),
      'pins everywhere',
    );
    for (let shardId = 0; shardId < 6; shardId++) cluster.touch(a, shardId);
    await eventually(
      () => [0, 1, 2, 3, 4, 5].every((id) => cluster.hostOf(id) === pinFor(id, 4).key),
      'shards on their pins',
    );

    expect(c.sharding.placementStore.compact()).toBe(1);
    // Written on a node still on generation 0, and on the compacted one: both must land everywhere.
    await a.controller.setPlacement(0, b.address);
    await c.controller.setPlacement(1, a.address);
    await b.controller.removePlacement(2);

    await eventually(
      () => nodes.every((n) => n.sharding.placementStore.generation === 1),
      'every store on generation 1',
    );
    await eventually(
      () => nodes.every((n) => JSON.stringify(pinsOf(n)) === JSON.stringify(pinsOf(c))),
      'pins converge',
    );
    const pins = new Map(pinsOf(a));
    expect(pins.get(0)).toBe(b.key);
    expect(pins.get(1)).toBe(a.key);
    expect(pins.has(2)).toBe(false);
    expect(pins.get(3)).toBe(pinFor(3, 4).key);
    await eventually(
      () => cluster.hostOf(0) === b.key && cluster.hostOf(1) === a.key,
      'shards 0 and 1 moved to their new pins',
    );
    for (const node of nodes) expect(node.sharding.placementStore.stats().baseSlots).toBeGreaterThan(0);
  });
});
