// The asks this node is waiting on: each has an id that travels in `replyTo`, a timeout, and settles once
// (by the entity's answer, a local failure, its timeout, or the node's shutdown).
import { ActorTsError } from '../../errors.js';
export class PendingAsks {
    pending = new Map();
    nextId = 1;
    timedOutCount = 0;
    /** Asks that ended by their timeout, since the start. */
    get timedOut() {
        return this.timedOutCount;
    }
    /** Asks still waiting. */
    get size() {
        return this.pending.size;
    }
    /**
     * Opens an ask: its id (for `replyTo`) and the answer, which rejects with `timeout` and the text of
     * `describeTimeout` after `timeoutMs` unless settled first.
     */
    open(timeoutMs, describeTimeout) {
        const id = this.nextId++;
        const answer = new Promise((resolve, reject) => {
            const timer = setTimeout(() => {
                if (!this.pending.delete(id))
                    return;
                this.timedOutCount++;
                reject(new ActorTsError('timeout', describeTimeout()));
            }, timeoutMs);
            this.pending.set(id, { resolve: resolve, reject, timer });
        });
        return { id, answer };
    }
    /** Settles an ask; false when it is no longer waiting (answered, timed out, or never opened here). */
    settle(id, outcome, failure = 'entity_failed') {
        const ask = this.pending.get(id);
        if (ask === undefined)
            return false;
        this.pending.delete(id);
        clearTimeout(ask.timer);
        if (outcome.ok)
            ask.resolve(outcome.value);
        else
            ask.reject(new ActorTsError(failure, outcome.error));
        return true;
    }
    /** Rejects every waiting ask with `error` (the node is shutting down). */
    failAll(error) {
        const asks = [...this.pending.values()];
        this.pending.clear();
        for (const ask of asks) {
            clearTimeout(ask.timer);
            ask.reject(error);
        }
    }
}
//# sourceMappingURL=pending-asks.js.map