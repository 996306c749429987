// What follows a change of slots: index them (the snapshot shows them at once), merge admitted remote
// timestamps into the clock, then prune own slots that lost and re-assert own writes an earlier
// incarnation hid, in one follow-up transaction, and finally tell the change listeners.
import type * as Y from 'yjs';
import type { Generations } from './generations.js';
import type { HybridLogicalClock, Hlc } from './hlc.js';
import type { StoreListeners } from './listeners.js';
import type { PlacementLog } from './log.js';
import type { OwnWrite, OwnWrites } from './own-writes.js';
import type { SlotChange } from './snapshot.js';
import { compareSlots, encodeSlotValue, slotKey, type SlotValue } from './slots.js';

/** What settling slot changes leaves to do once the indexes are up to date. */
export interface Settlement {
  readonly notices: Array<[string, number[]]>;
  readonly prunes: Array<{ readonly map: Y.Map<SlotValue>; readonly typeName: string; readonly shardId: number }>;
  readonly repairs: Array<{ readonly map: Y.Map<SlotValue>; readonly shardId: number; readonly write: OwnWrite }>;
}

export interface SettleContext {
  readonly node: string;
  readonly state: Generations;
  readonly clock: HybridLogicalClock;
  readonly ownWrites: OwnWrites;
  readonly listeners: StoreListeners;
  readonly log: PlacementLog;
  /** Whether sane replicas would admit a value with this hlc now (admission.ts). */
  readonly admissible: (hlc: Hlc) => boolean;
  /** The origin own follow-up writes are made under. */
  readonly localOrigin: symbol;
}

export class Settler {
  prunedSlots = 0;
  repairedSlots = 0;

  constructor(private readonly context: SettleContext) {}

  newWork(): Settlement {
    return { notices: [], prunes: [], repairs: [] };
  }

  /** Indexes changed slots of one type and decides which own slots to prune or repair. */
  settle(typeName: string, changes: readonly SlotChange[], remote: boolean, work: Settlement): void {
    const { state, node, ownWrites } = this.context;
    const map = state.mapFor(typeName);
    const index = state.indexFor(typeName);
    // Indexed before anything that calls out (clock, log): the document already holds these slots, so
    // the snapshot must show them whatever a callback does.
    const visible = index.apply(changes);
    if (remote) for (const { slot } of changes) if (slot !== undefined) this.receiveClock(slot.hlc);
    if (visible.length > 0) work.notices.push([typeName, visible]);
    for (const shardId of new Set(changes.map((change) => change.shardId))) {
      const own = index.slot(shardId, node);
      const winner = index.winner(shardId);
      let lost = remote ? ownWrites.lost(typeName, shardId, own, winner) : undefined;
      if (lost !== undefined && !this.context.admissible(lost.hlc)) {
        // Written while this node's clock was far ahead, and since deleted (a forced removal): re-asserting
        // it would bring back a value no sane replica counts.
        ownWrites.delete(typeName, shardId);
        lost = undefined;
      }
      if (lost !== undefined) work.repairs.push({ map, shardId, write: lost });
      else if (own !== undefined && winner !== undefined && compareSlots(winner, own) > 0) {
        work.prunes.push({ map, typeName, shardId });
      }
    }
  }

  finish(work: Settlement): void {
    const { state, node, ownWrites, listeners, localOrigin } = this.context;
    const { prunes, repairs, notices } = work;
    if (prunes.length > 0 || repairs.length > 0) {
      // Inside a transaction's cleanup Yjs queues this one; still before applyUpdate/set return.
      state.doc.transact(() => {
        for (const { map, typeName, shardId } of prunes) {
          ownWrites.delete(typeName, shardId);
          const key = slotKey(shardId, node);
          if (map.has(key)) {
            map.delete(key);
            this.prunedSlots++;
          }
        }
        for (const { map, shardId, write } of repairs) {
          map.set(slotKey(shardId, node), encodeSlotValue(write.target, write.hlc, write.meta, write.over));
          this.repairedSlots++;
        }
      }, localOrigin);
    }
    for (const [typeName, shardIds] of notices) listeners.emitChange(typeName, shardIds);
  }

  private receiveClock(hlc: Hlc): void {
    try {
      this.context.clock.receive(hlc);
    } catch (error) {
      // Only a broken now() gets here (the value was validated); the slot stays applied and indexed.
      this.context.log({
        level: 'warn',
        message: `clock could not merge a placement timestamp: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
  }
}
