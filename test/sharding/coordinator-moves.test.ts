// Operator reads while the coordinator moves: a read sent to the old coordinator is sent to the new one the
// moment the membership names it (not at the next retry, seconds later), and a read while the coordinator's
// node is unreachable but not yet downed fails at once with a typed error instead of timing out.
import { describe, expect, it } from 'vitest';
import { ActorTsError } from '../../src/errors.js';
import { TEST_CONFIG, TestCluster, counter, settle, useTestClusters } from './harness.js';

// The default retry interval: what a moved read used to wait out.
const config = { ...TEST_CONFIG, retryIntervalMs: 2_000, requestTimeoutMs: 10_000 };

describe('coordinator reads while the coordinator moves', () => {
  let cluster: TestCluster;
  useTestClusters(() => (cluster = new TestCluster({ config })));

  function startThree() {
    const nodes = cluster.addNodes(7001, 7002, 7003);
    cluster.initAll({ typeName: 'Counter', behavior: counter(), numberOfShards: 8 });
    return nodes;
  }

  it('answers from the new coordinator well within one retry interval of the move', async () => {
    const [a, b, c] = startThree();
    await settle(c.sharding.entityRefFor('Counter', 'x').ask({ op: 'inc' }));
    // The read reaches the old coordinator's dead process and is lost; then the membership drops that node.
    await cluster.crash(a);
    let answeredAt: number | undefined;
    const read = c.sharding.getShardLocations('Counter').then((locations) => {
      answeredAt = Date.now();
      return locations;
    });
    const movedAt = Date.now();
    cluster.members.remove(a.address);
    expect(c.sharding.coordinatorFor('Counter')?.toString()).toBe(b.key);
    const locations = await settle(read, 5_000);
    expect(locations.regions.map((region) => region.address).sort()).toEqual([b.key, c.key].sort());
    expect((answeredAt ?? Infinity) - movedAt).toBeLessThan(config.retryIntervalMs / 2);
  });

  it('fails fast with coordinator_unreachable while the coordinator node is unreachable and not yet downed', async () => {
    const [a, , c] = startThree();
    await cluster.crash(a);
    cluster.members.setReachable(a.address, false);
    const outcome = await settle(
      c.sharding.getShardLocations('Counter').catch((error: unknown) => error),
      1_000,
    );
    expect(outcome).toBeInstanceOf(ActorTsError);
    expect(outcome).toMatchObject({ code: 'coordinator_unreachable' });
  });
});
