export class RegionBuffer {
    bufferSize;
    logger;
    queues = new Map();
    total = 0;
    drops = 0;
    constructor(bufferSize, logger) {
        this.bufferSize = bufferSize;
        this.logger = logger;
    }
    /** Messages waiting now. */
    get size() {
        return this.total;
    }
    /** Messages dropped because the buffer was full, since the start. */
    get overflowDrops() {
        return this.drops;
    }
    /** Shards with messages waiting. */
    shardIds() {
        return [...this.queues.keys()];
    }
    /** Queues a message; `first` tells the region to ask for the shard's home (nobody waits for it yet). */
    add(envelope) {
        const { shardId } = envelope;
        if (this.total >= this.bufferSize) {
            this.drops++;
            // The first drop and every thousandth: a full buffer under load would otherwise flood the log.
            if (this.drops === 1 || this.drops % 1000 === 0) {
                this.logger.warn({ shardId, bufferSize: this.bufferSize, dropped: this.drops }, 'region buffer full: message dropped');
            }
            return 'dropped';
        }
        this.total++;
        const queue = this.queues.get(shardId);
        if (queue !== undefined) {
            queue.push(envelope);
            return 'queued';
        }
        this.queues.set(shardId, [envelope]);
        return 'first';
    }
    /** Removes and returns a shard's waiting messages, oldest first. */
    take(shardId) {
        const queue = this.queues.get(shardId);
        if (queue === undefined)
            return undefined;
        this.queues.delete(shardId);
        this.total -= queue.length;
        return queue;
    }
    clear() {
        this.queues.clear();
        this.total = 0;
    }
}
//# sourceMappingURL=region-buffer.js.map