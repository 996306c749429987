// The set-up the failover tests share: a 30-shard counter type, entity "y" whose shard a test can pin and move,
// a counter that can be made slow (so a hand-off drains for a while), and a replay of who hosted an entity.
import type { EntityBehavior } from '../../src/sharding/core/entity-api.js';
import { shardIdFor } from '../../src/sharding/core/shard-id.js';
import { counter, entityInShard, pinTo, settle } from './harness.js';
import type { CounterReply, EntityEvent, TestCluster, TestNode } from './harness.js';

export const SHARDS = 30;
export const yShard = shardIdFor('y', SHARDS);

/** An entity id that lives in `shardId` of the failover tests' type. */
export function entityOfShard(shardId: number): string {
  return entityInShard(shardId, SHARDS);
}

/** Asks entities e0..e{count-1} once each via `via`; where each answered from. */
export async function touchAll(via: TestNode, count: number): Promise<Map<string, string>> {
  const homes = new Map<string, string>();
  for (let i = 0; i < count; i++) {
    const reply = await settle(via.sharding.entityRefFor('Counter', `e${i}`).ask<CounterReply>({ op: 'inc' }));
    homes.set(`e${i}`, reply.node);
  }
  return homes;
}

/** A counter whose `{ op: 'slow' }` takes `slowMs` of fake time, so a shard hosting it drains slowly on hand-off. */
export function slowCounter(events: EntityEvent[], slowMs: number): EntityBehavior {
  const inner = counter(events);
  return (ctx) => {
    const entity = inner(ctx);
    return {
      async receive(message: unknown): Promise<unknown> {
        if ((message as { op?: unknown } | null)?.op === 'slow')
          await new Promise((resolve) => setTimeout(resolve, slowMs));
        return entity.receive(message);
      },
      stop: () => entity.stop?.(),
    };
  };
}

/**
 * The most nodes on which the entity was alive (started and not yet stopped) at the same time, replayed from
 * the event log: unlike sampling `localShards`, this also sees entities of a shard that is still stopping.
 */
export function maxConcurrentHosts(events: ReadonlyArray<EntityEvent>, entityId: string): number {
  const live = new Set<string>();
  let max = 0;
  for (const event of events) {
    if (event.entityId !== entityId) continue;
    if (event.kind === 'start') live.add(event.node);
    if (event.kind === 'stop') live.delete(event.node);
    max = Math.max(max, live.size);
  }
  return max;
}

/**
 * Three nodes (a, the oldest, runs the coordinator) with the shard of "y" on `home` (c unless given; `moveY`
 * changes it for later allocations), other shards on the lowest address, and "y" counted once via a.
 */
export async function startWithY(cluster: TestCluster, options: { behavior?: EntityBehavior; home?: 'b' | 'c' } = {}) {
  const [a, b, c] = cluster.addNodes(7001, 7002, 7003);
  let target = options.home === 'b' ? b : c;
  const allocationStrategy = pinTo(() => target.address, yShard);
  cluster.initAll({
    typeName: 'Counter',
    behavior: options.behavior ?? counter(),
    numberOfShards: SHARDS,
    allocationStrategy,
  });
  const first = await settle(a.sharding.entityRefFor('Counter', 'y').ask<CounterReply>({ op: 'inc' }));
  return { a, b, c, first, moveY: (to: TestNode) => void (target = to) };
}
