// The compacted part of a store: per entity type and shard, the one slot that won when a generation's
// document was folded away. Merging two bases keeps, per shard, the slot with the greater hlc, so bases
// form a join-semilattice: replicas may merge them in any order, any number of times, and agree.
import { compareSlots } from './slots.js';
export class BaseState {
    types = new Map();
    size = 0;
    // Cached canonical encoding's digest; see wire.ts. Cleared on every change.
    digestCache;
    get(typeName, shardId) {
        return this.types.get(typeName)?.get(shardId);
    }
    /** Keeps `slot` when it is greater than what the shard holds; returns whether it was kept. */
    merge(typeName, slot) {
        let shards = this.types.get(typeName);
        const current = shards?.get(slot.shardId);
        if (current !== undefined && compareSlots(slot, current) <= 0)
            return false;
        if (shards === undefined)
            this.types.set(typeName, (shards = new Map()));
        if (current === undefined)
            this.size++;
        shards.set(slot.shardId, slot);
        this.digestCache = undefined;
        return true;
    }
    /** Number of shards over all types that hold a base slot. */
    get slotCount() {
        return this.size;
    }
    typeNames() {
        return [...this.types.keys()];
    }
    /** Entries of one type in ascending shard order: the canonical order every encoding uses. */
    slotsOf(typeName) {
        const shards = this.types.get(typeName);
        if (shards === undefined)
            return [];
        return [...shards.values()].sort((a, b) => a.shardId - b.shardId);
    }
    cachedDigest(compute) {
        this.digestCache ??= compute();
        return this.digestCache;
    }
}
//# sourceMappingURL=base.js.map