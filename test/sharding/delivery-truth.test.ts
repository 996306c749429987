// What a failed ask tells its caller: a message still in this node's buffer when its ask times out is taken
// back and never applied (`delivered: false`); one that left this node reports `delivered: true`. Messages
// for a shard whose host this node sees as unreachable wait in the buffer instead of a dead connection.
import { describe, expect, it } from 'vitest';
import { DeliveryTimeoutError } from '../../src/sharding/region/pending-asks.js';
import type { EntityBehavior } from '../../src/sharding/core/entity-api.js';
import {
  TestCluster,
  counter,
  entityInShard,
  pinTo,
  run,
  settle,
  useTestClusters,
  type CounterReply,
} from './harness.js';

const SHARDS = 10;

/** Releases every `{ op: 'hang' }` still pending (so the entity can stop at the end of a test). */
const hung: Array<() => void> = [];

/** The counter, plus `{ op: 'hang' }`, which settles only when released (a message that reached its entity, unanswered). */
function hangingCounter(): EntityBehavior {
  const base = counter();
  return (ctx) => {
    const inner = base(ctx);
    return {
      receive: (message) =>
        (message as { op?: string }).op === 'hang'
          ? new Promise<void>((resolve) => hung.push(resolve))
          : inner.receive(message),
    };
  };
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return settle(
    promise.then(
      () => 'resolved',
      (error: unknown) => error,
    ),
  );
}

describe('ask failures that say what is known', () => {
  let cluster: TestCluster;
  useTestClusters(() => (cluster = new TestCluster()));

  async function entityOnB() {
    const [a, b, c] = cluster.addNodes(7001, 7002, 7003);
    cluster.initAll({
      typeName: 'Counter',
      behavior: hangingCounter(),
      numberOfShards: SHARDS,
      allocationStrategy: pinTo(() => b.address),
    });
    const entityId = entityInShard(3, SHARDS);
    const ref = a.sharding.entityRefFor('Counter', entityId);
    expect(await settle(ref.ask<CounterReply>({ op: 'inc' }))).toMatchObject({ count: 1, node: b.key });
    return { a, b, c, ref, entityId };
  }

  it('an ask that times out while its message waits in the buffer (host unreachable) is never applied', async () => {
    const { b, ref } = await entityOnB();
    cluster.members.setReachable(b.address, false);
    const error = await failure(ref.ask({ op: 'inc' }, { timeoutMs: 1_000 }));
    expect(error).toBeInstanceOf(DeliveryTimeoutError);
    expect(error).toMatchObject({ code: 'timeout', delivered: false });
    // Taken back: nothing waits in a's buffer any more.
    expect(cluster.nodes[0]?.sharding.stats().types['Counter']?.region.bufferedMessages).toBe(0);
    cluster.members.setReachable(b.address, true);
    await run(500);
    // Had the message been written to b (or flushed later), the count would be 2.
    expect(await settle(ref.ask<CounterReply>({ op: 'get' }))).toMatchObject({ count: 1, node: b.key });
  });

  it('a tell held for an unreachable host goes to its next home once the host is removed', async () => {
    const { b, c, ref } = await entityOnB();
    cluster.members.setReachable(b.address, false);
    ref.tell({ op: 'inc' });
    await run(200);
    expect(cluster.nodes[0]?.sharding.stats().types['Counter']?.region.bufferedMessages).toBe(1);
    await cluster.crashAndRemove(b);
    // pinTo falls back to the lowest address among the candidates (a); the held tell reaches that fresh entity.
    const after = await settle(ref.ask<CounterReply>({ op: 'get' }));
    expect(after.count).toBe(1);
    expect(after.node).not.toBe(b.key);
    expect([cluster.nodes[0]?.key, c.key]).toContain(after.node);
  });

  it('an ask whose message left this node reports delivered: true (outcome unknown)', async () => {
    const { ref } = await entityOnB();
    const error = await failure(ref.ask({ op: 'hang' }, { timeoutMs: 1_000 }));
    expect(error).toMatchObject({ code: 'timeout', delivered: true });
    for (const release of hung.splice(0)) release();
  });
});
