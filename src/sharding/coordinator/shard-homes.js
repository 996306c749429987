import { WaitingShards } from './waiting-shards.js';
export class ShardHomes {
    options;
    waiting = new WaitingShards();
    constructor(options) {
        this.options = options;
    }
    /** Shards without a home now, waiting for a change that may give them one. */
    get waitingCount() {
        return this.waiting.size;
    }
    /** A hand-off ended with the shard stopped: it is allocated again at once and every region learns where. */
    freed(shardId) {
        const { gate, allocator, logger } = this.options;
        if (!gate.open) {
            // For the reason GetShardHome waits: a region not heard from yet may run this shard. It is allocated
            // (and announced to whoever asks) once the gate opens.
            gate.defer(shardId);
            return;
        }
        const region = allocator.allocate(shardId);
        if (region === undefined) {
            logger.info({ shardId }, 'no home for the shard after hand-off; it is allocated once a region may take it');
            this.waiting.add(shardId);
            return;
        }
        this.announce(shardId, region);
    }
    allocateAndAnnounce(shardId, requesters) {
        const { allocator, send, typeName } = this.options;
        const region = allocator.allocate(shardId);
        // No home now: the requesters keep their messages buffered (and ask again on their retry tick); the
        // shard is also allocated as soon as a change may give it a home (retryWaiting).
        if (region === undefined) {
            this.waiting.add(shardId, requesters);
            return;
        }
        for (const requester of requesters)
            send(requester, { type: 'ShardHome', typeName, shardId, region });
    }
    /**
     * Answers the GetShardHome requests that waited for the warm-up or for an unreachable member, then asks
     * again for the shards without a home (its callers are the changes that may give them one).
     */
    flushDeferred() {
        const { gate, state, send, typeName } = this.options;
        for (const [shardId, requesters] of gate.takeDeferred()) {
            if (state.isHandingOff(shardId))
                continue;
            const home = state.homeOf(shardId);
            if (home === undefined)
                this.allocateAndAnnounce(shardId, requesters);
            else
                for (const requester of requesters)
                    send(requester, { type: 'ShardHome', typeName, shardId, region: home });
        }
        this.retryWaiting();
    }
    /** Asks again for every shard without a home; each one allocated is announced to every region. */
    retryWaiting() {
        const { gate, state, allocator } = this.options;
        if (this.waiting.size === 0 || !gate.open)
            return;
        for (const [shardId, requesters] of this.waiting.take()) {
            // Allocated meanwhile (a request, a registration), or moving: nothing left to do here.
            if (state.isHandingOff(shardId) || state.homeOf(shardId) !== undefined)
                continue;
            const region = allocator.allocate(shardId);
            if (region === undefined)
                this.waiting.add(shardId, requesters);
            else
                this.announce(shardId, region);
        }
    }
    announce(shardId, region) {
        this.options.broadcast({ type: 'ShardHome', typeName: this.options.typeName, shardId, region });
    }
}
//# sourceMappingURL=shard-homes.js.map