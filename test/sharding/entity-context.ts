// An EntityContext for calling a behavior directly, outside any shard: a node address, timers on the given
// scheduler, a self reference that records what is told to it, and pipes through a real mailbox-less Entity.
import { NodeAddress } from '../../src/cluster/address.js';
import type { Scheduler } from '../../src/cluster/scheduler.js';
import { Entity } from '../../src/sharding/region/entity.js';
import type { EntityContext } from '../../src/sharding/core/entity-api.js';

export function testEntityContext(
  overrides: { entityId?: string; shardId?: number; typeName?: string; node?: string; scheduler?: Scheduler } = {},
): { ctx: EntityContext; told: unknown[] } {
  const entityId = overrides.entityId ?? 'e';
  const shardId = overrides.shardId ?? 1;
  const typeName = overrides.typeName ?? 'Counter';
  const told: unknown[] = [];
  const entity = new Entity(
    entityId,
    undefined,
    () => undefined,
    overrides.scheduler ? { scheduler: overrides.scheduler } : {},
  );
  const ctx: EntityContext = {
    entityId,
    shardId,
    typeName,
    node: NodeAddress.parse(overrides.node ?? 's@127.0.0.1:1'),
    self: {
      typeName,
      entityId,
      shardId,
      tell: (message) => void told.push(message),
      ask: () => Promise.reject(new Error('this test context answers no asks')),
      send: () => Promise.reject(new Error('this test context takes no sends')),
    },
    timers: entity.timers,
    pipeToSelf: (work, toMessage) => entity.pipeToSelf(work, toMessage),
    // Outside a shard nothing stops the entity; the call only ends its timers, as passivation would.
    passivate: () => void entity.retire(),
  };
  return { ctx, told };
}
