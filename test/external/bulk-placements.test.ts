// setPlacements writes a batch of pins as one store transaction: one update on the wire, one change notice.
import { describe, expect, it } from 'vitest';
import { eventually } from '../sharding/harness.js';
import { ExternalCluster, pinsOf, useExternalClusters } from './harness.js';

let cluster: ExternalCluster;

useExternalClusters();

describe('setPlacements', () => {
  it('pins many shards with one placement update on the wire, and every node sees all of them', async () => {
    cluster = new ExternalCluster();
    const [a, b] = await cluster.started(7001, 7002);
    const local: Uint8Array[] = [];
    const notices: Array<readonly number[]> = [];
    b.sharding.placementStore.onUpdate((update, origin) => {
      if (origin === 'local') local.push(update);
    });
    b.sharding.placementStore.onChange((_, shardIds) => notices.push(shardIds));
    const shardIds = Array.from({ length: 20 }, (_, i) => i * 3);
    const written = await b.controller.setPlacements(shardIds.map((shardId) => ({ shardId, target: a.address })));
    expect(local).toHaveLength(1);
    expect(notices).toEqual([shardIds]);
    expect(written.map((record) => record.shardId)).toEqual(shardIds);
    expect(new Set(written.map((record) => `${record.hlc.wallMs}.${record.hlc.counter}`)).size).toBe(shardIds.length);
    await eventually(() => pinsOf(a).length === shardIds.length, 'every pin reached node a');
    expect(pinsOf(a)).toEqual(pinsOf(b));
  });

  it('rejects the whole batch when one entry is bad, writing nothing', async () => {
    cluster = new ExternalCluster();
    const [a] = await cluster.started(7001);
    await expect(
      a.controller.setPlacements([
        { shardId: 1, target: a.address },
        { shardId: 10_000, target: a.address },
      ]),
    ).rejects.toMatchObject({ code: 'invalid_shard' });
    expect(pinsOf(a)).toEqual([]);
  });
});
