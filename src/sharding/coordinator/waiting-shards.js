// Shards the strategy gave no home ("no home now": a hard placement rule no candidate satisfies, or no
// candidate at all), with the regions that asked for them. The coordinator asks again when something that
// could change the answer happens (membership, registrations, placements, a pin expiring), never on a
// timer of its own, so an unsatisfiable rule costs nothing while nothing changes.
export class WaitingShards {
    waiting = new Map();
    /** Remembers the shard (and who asked, if anyone). */
    add(shardId, requesters = []) {
        let set = this.waiting.get(shardId);
        if (set === undefined)
            this.waiting.set(shardId, (set = new Set()));
        for (const requester of requesters)
            set.add(requester);
    }
    get size() {
        return this.waiting.size;
    }
    /** Hands out every waiting shard and forgets them; the caller adds back those still without a home. */
    take() {
        const all = [...this.waiting];
        this.waiting.clear();
        return all;
    }
}
//# sourceMappingURL=waiting-shards.js.map