// The shardIdFunction option of an entity type: checked at init (a typed error, nothing registered), and the
// function entityRefFor routes by, so a type declared with 'actor-ts' puts every id in actor-ts's shard.
import { describe, expect, it } from 'vitest';
import { ActorTsError } from '../../src/errors.js';
import { shardIdFor, type ShardIdFunction } from '../../src/sharding/shard-id.js';
import { TestCluster, counter, useTestClusters } from '../sharding/harness.js';

describe('ShardedTypeOptions.shardIdFunction', () => {
  let cluster: TestCluster;
  useTestClusters(() => (cluster = new TestCluster()));

  it("routes by actor-ts's shard ids when asked, by the default otherwise", () => {
    const [a] = cluster.addNodes(7001);
    a!.sharding.init({ typeName: 'Compat', behavior: counter(), numberOfShards: 1000, shardIdFunction: 'actor-ts' });
    a!.sharding.init({ typeName: 'Plain', behavior: counter(), numberOfShards: 1000 });
    // 817 is the shard actor-ts itself computes for "alice" out of 1000 (see shard-id.test.ts).
    expect(a!.sharding.entityRefFor('Compat', 'alice').shardId).toBe(817);
    expect(a!.sharding.entityRefFor('Plain', 'alice').shardId).toBe(shardIdFor('alice', 1000, 'fnv1a-utf8'));
    expect(a!.sharding.entityRefFor('Plain', 'alice').shardId).not.toBe(817);
  });

  it.each(['actor_ts', 'FNV1A', '', 7])('rejects shardIdFunction %j at init with invalid_argument, registering nothing', (bad) => {
    const [a] = cluster.addNodes(7001);
    const init = () => a!.sharding.init({ typeName: 'Bad', behavior: counter(), shardIdFunction: bad as unknown as ShardIdFunction });
    expect(init).toThrow(ActorTsError);
    expect(init).toThrow(expect.objectContaining({ code: 'invalid_argument', message: expect.stringMatching(/shardIdFunction must be one of 'fnv1a-utf8', 'actor-ts'/) }));
    expect(a!.sharding.entityTypes().has('Bad')).toBe(false);
  });
});
