import { Shard } from './shard.js';
export class HostedShards {
    options;
    logger;
    shards = new Map();
    /** Stopping shards whose end a coordinator waits for: the HandOff id to report it under (the latest one). */
    stopReports = new Map();
    constructor(options, logger) {
        this.options = options;
        this.logger = logger;
    }
    /** Shards present, running or stopping. */
    get size() {
        return this.shards.size;
    }
    get(shardId) {
        return this.shards.get(shardId);
    }
    /** The shard, started now (`started`) unless it was present. */
    ensure(shardId) {
        const present = this.shards.get(shardId);
        if (present !== undefined)
            return { shard: present, started: false };
        const { typeName, behavior, self, entities } = this.options;
        const shard = new Shard(typeName, shardId, behavior, self, this.logger, entities);
        this.shards.set(shardId, shard);
        return { shard, started: true };
    }
    /** Hosted shard ids, ascending (shards being handed off are no longer counted). */
    running() {
        return this.idsWhere((shard) => !shard.isStopping);
    }
    /** Shards whose entities may still run here although no longer counted as hosted. */
    stopping() {
        return this.idsWhere((shard) => shard.isStopping);
    }
    entityCount() {
        let count = 0;
        for (const shard of this.shards.values())
            count += shard.entityCount;
        return count;
    }
    /**
     * Stops a shard for a hand-off and calls `onStopped` once it is gone. False when it is not here (nothing
     * to wait for). Also for a shard already stopping: the coordinator asking now waits for a report under
     * its own id before the shard may start elsewhere.
     */
    handOff(shardId, handOffId) {
        const shard = this.shards.get(shardId);
        if (shard === undefined)
            return false;
        this.stopReports.set(shardId, handOffId);
        if (shard.isStopping)
            return true;
        void shard.stop(this.options.handOffTimeoutMs).then(() => {
            if (this.shards.get(shardId) === shard)
                this.shards.delete(shardId);
            const reportAs = this.stopReports.get(shardId);
            this.stopReports.delete(shardId);
            this.options.onStopped(shardId, reportAs);
        });
        return true;
    }
    /** Stops every shard here without reporting (nobody is left to report to: leaving, or downed). */
    async stopAll() {
        const shards = [...this.shards];
        await Promise.all(shards.map(([, shard]) => shard.stop(this.options.handOffTimeoutMs)));
        for (const [shardId, shard] of shards) {
            if (this.shards.get(shardId) !== shard)
                continue;
            this.shards.delete(shardId);
            // A later copy of the shard must not inherit a report nobody waits for any more.
            this.stopReports.delete(shardId);
        }
    }
    /** Forgets every shard at once and waits for their entities to stop (the node shuts down). */
    async shutdown() {
        const shards = [...this.shards.values()];
        this.shards.clear();
        await Promise.all(shards.map((shard) => shard.stop(this.options.handOffTimeoutMs)));
    }
    idsWhere(test) {
        return [...this.shards].filter(([, shard]) => test(shard)).map(([id]) => id).sort((a, b) => a - b);
    }
}
//# sourceMappingURL=hosted-shards.js.map