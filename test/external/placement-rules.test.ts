// Placement rules on an in-process cluster (MemoryNetwork + FakeCluster with node attributes): selector pins
// spread over the matching nodes, require pins that leave a shard without a home until a matching node
// joins, expiry that takes effect at its moment with no node doing anything, and provenance replicated.
import { describe, expect, it } from 'vitest';
import { pinRecords } from '../../src/sharding/api/external-allocation-controller.js';
import { entityInShard, eventually, run, settle } from '../sharding/harness.js';
import { ExternalCluster, type ExtNode, recordsOf, TYPE, useExternalClusters, zonedCluster } from './harness.js';

let cluster: ExternalCluster;

useExternalClusters();

/** a (zone=a, coordinator), b and c (zone=b), warmed up. */
async function zones(): Promise<[ExtNode, ExtNode, ExtNode]> {
  const [started, nodes] = await zonedCluster();
  cluster = started;
  return nodes;
}

const slots = (node: ExtNode) => node.sharding.placementStore.stats().slots;

describe('selector pins', () => {
  it('spread the shards pinned to zone=b over the zone=b nodes', async () => {
    const [a, b, c] = await zones();
    const shards = [0, 1, 2, 3, 4, 5];
    await b.controller.setPlacements(shards.map((shardId) => ({ shardId, target: 'zone=b' })));
    await eventually(() => recordsOf(a).length === 6, 'pins reached the coordinator');
    await cluster.allocated(shards, a);
    const hosts = shards.map((s) => cluster.hostOf(s));
    expect(hosts.filter((h) => h === b.key)).toHaveLength(3);
    expect(hosts.filter((h) => h === c.key)).toHaveLength(3);
    expect(a.warnings).toEqual([]);
  });

  it('move a running shard onto a matching node when the pin is set, canonical target listed', async () => {
    const [a, , c] = await zones();
    cluster.attributes.set(c.key, { zone: 'c', rack: 'r1' });
    await cluster.allocated([9], a);
    const written = await a.controller.setPlacement(9, 'rack=r1,zone=c');
    expect(written.target).toBe('rack=r1,zone=c');
    await eventually(() => cluster.hostOf(9) === c.key, 'shard 9 on the rack=r1,zone=c node');
  });
});

describe('require pins', () => {
  it('leave a shard without a home (asks time out) until a matching node joins, then allocate it there unasked', async () => {
    const [a] = await zones();
    await a.controller.setPlacement(7, 'role=gpu', { mode: 'require', reason: 'needs a GPU', by: 'alice' });
    const ask = a.sharding
      .entityRefFor(TYPE, entityInShard(7, cluster.numberOfShards))
      .ask({ op: 'inc' }, { timeoutMs: 2_000 });
    await expect(settle(ask)).rejects.toMatchObject({ code: 'timeout' });
    expect(cluster.hostOf(7)).toBeUndefined();
    const gpu = cluster.addNode(7009, { roles: ['gpu'] });
    await eventually(() => cluster.hostOf(7) === gpu.key, 'shard 7 allocated on the gpu node');
    expect(a.warnings).toContainEqual(
      expect.objectContaining({
        details: expect.objectContaining({ shardId: 7, target: 'role=gpu', mode: 'require' }),
      }),
    );
  });

  it('hand a running shard off at once when no node matches, and it waits', async () => {
    const [a, b] = await zones();
    await cluster.allocated([3], b);
    await b.controller.setPlacement(3, 'zone=z', { mode: 'require' });
    await eventually(() => cluster.hostOf(3) === undefined, 'shard 3 stopped');
    await run(5_000);
    expect(cluster.hostOf(3)).toBeUndefined();
    // Making a node match (its attributes change) is a membership change: the shard gets its home.
    cluster.attributes.set(b.key, { zone: 'z' });
    cluster.members.setReachable(b.address, true);
    await eventually(() => cluster.hostOf(3) === b.key, 'shard 3 on the zone=z node');
    expect(a.sharding.stats().types[TYPE]?.coordinator?.handOffsCompleted).toBe(1);
  });
});

describe('expiry', () => {
  it('ends the pin at its moment: the shard it left without a home is allocated then, with no message and no tick', async () => {
    const [a, b] = await zones();
    await cluster.allocated([4], a);
    const setAt = Date.now();
    await b.controller.setPlacement(4, 'zone=z', { mode: 'require', ttlMs: 5_000 });
    await eventually(() => cluster.hostOf(4) === undefined, 'shard 4 handed off');
    await run(4_800 - (Date.now() - setAt));
    expect(cluster.hostOf(4)).toBeUndefined();
    // No message waits for shard 4 (so no region asks for it) and the rebalance tick is 1e6 ms away: only
    // the coordinator acting on the expiry can give it a home now.
    await eventually(() => cluster.hostOf(4) !== undefined, 'shard 4 allocated once its pin expired');
    expect(Date.now() - setAt).toBeGreaterThanOrEqual(5_000);
    expect(Date.now() - setAt).toBeLessThan(5_200);
    expect(recordsOf(a)).toEqual([]);
    const listed = pinRecords(a.sharding.placementStore, TYPE, { includeExpired: true });
    expect(listed).toEqual([expect.objectContaining({ shardId: 4, target: 'zone=z', mode: 'require', expired: true })]);
    expect(await a.controller.getPlacements()).toEqual(new Map());
  });
});

describe('provenance and validation', () => {
  it('stores reason, by, mode and expiry with the pin and replicates them', async () => {
    const [a, b, c] = await zones();
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const written = await b.controller.setPlacement(11, c.key, {
      mode: 'prefer',
      expiresAt,
      reason: 'canary',
      by: 'bob',
    });
    expect(written).toMatchObject({
      shardId: 11,
      target: c.key,
      mode: 'prefer',
      expiresAt,
      reason: 'canary',
      by: 'bob',
      writer: b.key,
    });
    await eventually(() => recordsOf(a).length === 1, 'replicated');
    expect(recordsOf(a)).toEqual([written]);
  });

  it.each<[string, Record<string, unknown>]>([
    ['an empty selector term', { target: 'zone=b,' }],
    ['zone=', { target: 'zone=' }],
    ['=b', { target: '=b' }],
    ['a key outside the alphabet', { target: 'zo ne=b' }],
    ['an unknown mode', { mode: 'always' }],
    ['a negative ttlMs', { ttlMs: -5 }],
    ['a non-integer ttlMs', { ttlMs: 2.5 }],
    ['both ttlMs and expiresAt', { ttlMs: 1_000, expiresAt: '2099-01-01T00:00:00Z' }],
    ['an expiresAt in the past', { expiresAt: '2000-01-01T00:00:00Z' }],
    ['an unparsable expiresAt', { expiresAt: 'next week' }],
    ['a reason over 500 characters', { reason: 'x'.repeat(501) }],
  ])('rejects %s and writes nothing, not even the valid entries beside it', async (_, bad) => {
    const [a, b] = await zones();
    const entries = [
      { shardId: 1, target: 'zone=b' },
      { shardId: 2, target: 'zone=b', ...bad },
    ];
    await expect(a.controller.setPlacements(entries as never)).rejects.toMatchObject({
      code: expect.stringMatching(/^invalid_(target|placement)$/),
    });
    await run(200);
    for (const node of [a, b]) expect(slots(node)).toBe(0);
  });
});
