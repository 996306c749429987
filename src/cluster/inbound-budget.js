export class InboundBudget {
    total;
    shares = new Map();
    used = 0;
    constructor(total) {
        this.total = total;
    }
    /** Bytes reserved by all holders. */
    get inUse() {
        return this.used;
    }
    /** Holders with a share above zero. */
    get holders() {
        return this.shares.size;
    }
    /** Bytes `holder` holds now. */
    heldBy(holder) {
        return this.shares.get(holder)?.bytes ?? 0;
    }
    /**
     * Sets `holder`'s share to `bytes`. A share that shrinks, or grows within what is free, is granted. Beyond
     * that an untrusted holder is refused (and keeps its share: the caller ends it); a trusted one gets the room
     * of untrusted holders if that suffices, else it is refused without disconnecting anyone for nothing.
     */
    reserve(holder, bytes, trusted) {
        const current = this.heldBy(holder);
        const fits = () => this.used - this.heldBy(holder) + bytes <= this.total;
        if (bytes <= current || fits()) {
            this.set(holder, bytes, trusted);
            return { granted: true, evicted: 0 };
        }
        if (!trusted)
            return { granted: false, evicted: 0 };
        const candidates = [...this.shares]
            .filter(([other, share]) => other !== holder && !share.trusted)
            .sort((a, b) => b[1].bytes - a[1].bytes);
        const freeable = candidates.reduce((sum, [, share]) => sum + share.bytes, 0);
        if (this.used - current + bytes - freeable > this.total)
            return { granted: false, evicted: 0 };
        let evicted = 0;
        for (const [other] of candidates) {
            if (fits())
                break;
            // Dropped first: the holder's own release, re-entering from evictForBudget, then finds nothing to drop.
            this.release(other);
            evicted++;
            other.evictForBudget();
        }
        this.set(holder, bytes, trusted);
        return { granted: true, evicted };
    }
    release(holder) {
        const share = this.shares.get(holder);
        if (share === undefined)
            return;
        this.used -= share.bytes;
        this.shares.delete(holder);
    }
    set(holder, bytes, trusted) {
        this.release(holder);
        if (bytes <= 0)
            return;
        this.shares.set(holder, { bytes, trusted });
        this.used += bytes;
    }
}
//# sourceMappingURL=inbound-budget.js.map