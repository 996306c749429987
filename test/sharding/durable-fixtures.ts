// The durable counter and the one-shard host the durable entity tests share (durable-shard.test.ts and the
// crash property test): a real Shard with its own group commit over a given store.
import { NodeAddress } from '../../src/cluster/address.js';
import type { EntityStore } from '../../src/entity-store/entity-store.js';
import { GroupCommit } from '../../src/entity-store/group-commit.js';
import { silentLogger } from '../../src/logging.js';
import type { EntityBehavior, EntityRef, HostOutcome } from '../../src/sharding/core/entity-api.js';
import type { SendMark } from '../../src/sharding/region/send-marks.js';
import { Shard } from '../../src/sharding/region/shard.js';

export interface Counted {
  /** Every message each incarnation ran, by the host that ran it. */
  readonly ran: Array<{ readonly host: string; readonly tag: unknown }>;
  readonly restored: unknown[];
}

/** A durable counter: `{ add, tag }` adds and answers the sum; `{ get: true }` answers it; `{ big: n }` grows its state. */
export function durableCounter(host: string, counted: Counted): EntityBehavior {
  return (ctx) => {
    counted.restored.push(ctx.restored);
    let sum = typeof ctx.restored === 'number' ? ctx.restored : 0;
    let padding = '';
    return {
      receive(message: unknown) {
        const m = message as { add?: number; tag?: unknown; big?: number };
        if (m.add !== undefined) {
          counted.ran.push({ host, tag: m.tag });
          sum += m.add;
        }
        if (m.big !== undefined) padding = 'x'.repeat(m.big);
        return sum;
      },
      snapshot: () => (padding === '' ? sum : { sum, padding }),
    };
  };
}

const noRef = (): EntityRef => {
  throw new Error('not routed in this test');
};

/** A host's durable shard 1 of type T over `store`, with its own group commit. */
export function hostShard(store: EntityStore, host: string, counted: Counted, maxSnapshotBytes = 1024): Shard {
  return new Shard('T', 1, durableCounter(host, counted), NodeAddress.parse(`s@127.0.0.1:${host}`), silentLogger(), {
    entityRef: noRef,
    durable: { commit: new GroupCommit(store), maxSnapshotBytes },
  });
}

export function deliver(shard: Shard, message: unknown, mark?: SendMark, entityId = 'e'): Promise<HostOutcome> {
  return new Promise((resolve) => shard.deliver(entityId, message, resolve, mark));
}
