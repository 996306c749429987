// What this incarnation last wrote into each of its slots, to notice a write lost to a Yjs conflict with
// an earlier incarnation of the same node (another Yjs client writing the same slot key).
import { compareHlc } from './hlc.js';
export class OwnWrites {
    writes = new Map();
    get(typeName, shardId) {
        return this.writes.get(key(typeName, shardId));
    }
    set(typeName, shardId, write) {
        this.writes.set(key(typeName, shardId), write);
    }
    delete(typeName, shardId) {
        this.writes.delete(key(typeName, shardId));
    }
    /** Compaction: own writes now live in the base, where hlc alone decides; nothing left to protect. */
    clear() {
        this.writes.clear();
    }
    /**
     * This node's write to a slot that a remote update just replaced by an older value or removed. That
     * happens only when an earlier incarnation of this node (another Yjs client) wrote the same slot
     * concurrently, e.g. after a restart with an empty document: Yjs then picks the survivor by client id,
     * not by hlc. The write is re-asserted unless a greater slot exists anyway.
     */
    lost(typeName, shardId, own, winner) {
        const mine = this.get(typeName, shardId);
        if (mine === undefined)
            return undefined;
        if (own !== undefined && compareHlc(own.hlc, mine.hlc) >= 0)
            return undefined;
        if (winner !== undefined && compareHlc(winner.hlc, mine.hlc) > 0) {
            this.delete(typeName, shardId);
            return undefined;
        }
        return mine;
    }
}
function key(typeName, shardId) {
    return `${typeName}\u0000${shardId}`;
}
//# sourceMappingURL=own-writes.js.map