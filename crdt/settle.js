import { compareHlc } from './hlc.js';
import { encodeSlotValue, slotKey } from './slots.js';
export class Settler {
    context;
    prunedSlots = 0;
    repairedSlots = 0;
    constructor(context) {
        this.context = context;
    }
    newWork() {
        return { notices: [], prunes: [], repairs: [] };
    }
    /** Indexes changed slots of one type and decides which own slots to prune or repair. */
    settle(typeName, changes, remote, work) {
        const { state, node, ownWrites } = this.context;
        const map = state.mapFor(typeName);
        const index = state.indexFor(typeName);
        // Indexed before anything that calls out (clock, log): the document already holds these slots, so
        // the snapshot must show them whatever a callback does.
        const visible = index.apply(changes);
        if (remote)
            for (const { slot } of changes)
                if (slot !== undefined)
                    this.receiveClock(slot.hlc);
        if (visible.length > 0)
            work.notices.push([typeName, visible]);
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
            if (lost !== undefined)
                work.repairs.push({ map, shardId, write: lost });
            else if (own !== undefined && winner !== undefined && compareHlc(winner.hlc, own.hlc) > 0) {
                work.prunes.push({ map, typeName, shardId });
            }
        }
    }
    finish(work) {
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
                    map.set(slotKey(shardId, node), encodeSlotValue(write.target, write.hlc, write.meta));
                    this.repairedSlots++;
                }
            }, localOrigin);
        }
        for (const [typeName, shardIds] of notices)
            listeners.emitChange(typeName, shardIds);
    }
    receiveClock(hlc) {
        try {
            this.context.clock.receive(hlc);
        }
        catch (error) {
            // Only a broken now() gets here (the value was validated); the slot stays applied and indexed.
            this.context.log({
                level: 'warn',
                message: `clock could not merge a placement timestamp: ${error instanceof Error ? error.message : String(error)}`,
            });
        }
    }
}
//# sourceMappingURL=settle.js.map