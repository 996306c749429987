// Entity references and the asks made through them: a reference routes through its type's region; an ask
// waits in PendingAsks for the answer, which comes back here (this node's asks) or goes over the wire.
import { ActorTsError } from '../../errors.js';
import { MAX_ERROR_LENGTH } from '../protocol/messages.js';
import { shardIdFor } from '../shard-id.js';
import { PendingAsks } from './pending-asks.js';
export class EntityRefs {
    options;
    asks = new PendingAsks();
    constructor(options) {
        this.options = options;
    }
    get timedOut() {
        return this.asks.timedOut;
    }
    /** A reference to `entityId` (already checked by the caller). */
    refFor(type, entityId) {
        const { typeName } = type;
        const shardId = shardIdFor(entityId, type.numberOfShards, type.shardIdFunction);
        return {
            typeName,
            entityId,
            shardId,
            tell: (message) => {
                this.options.requireRunning();
                type.region.deliver({ shardId, entityId, payload: message, hops: 0 });
            },
            ask: (message, options = {}) => this.ask(type, shardId, entityId, message, options),
        };
    }
    /** Delivers an entity's answer to the asking node. */
    reply(replyTo, outcome) {
        const { selfKey, send } = this.options;
        if (replyTo.node === selfKey) {
            this.asks.settle(replyTo.askId, outcome);
            return;
        }
        const failure = (error) => ({ type: 'EntityReply', askId: replyTo.askId, ok: false, error: error.slice(0, MAX_ERROR_LENGTH) });
        if (outcome.ok) {
            const sent = send(replyTo.node, { type: 'EntityReply', askId: replyTo.askId, ok: true, value: outcome.value });
            // An answer the wire cannot carry still owes the asker an answer, rather than a timeout.
            if (!sent)
                send(replyTo.node, failure('the entity answered with a value that cannot be serialised'));
        }
        else {
            send(replyTo.node, failure(outcome.error));
        }
    }
    /** An answer that arrived from another node for one of this node's asks. */
    settle(askId, outcome) {
        this.asks.settle(askId, outcome);
    }
    failAll(error) {
        this.asks.failAll(error);
    }
    ask(type, shardId, entityId, message, options) {
        try {
            this.options.requireRunning();
        }
        catch (error) {
            return Promise.reject(error);
        }
        const timeoutMs = options.timeoutMs ?? this.options.askTimeoutMs;
        if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 2_147_483_647) {
            return Promise.reject(new ActorTsError('invalid_argument', `ask timeoutMs must be an integer in 1..2147483647, got ${String(timeoutMs)}`));
        }
        const { typeName } = type;
        const { id, answer } = this.asks.open(timeoutMs, () => `ask to ${typeName}/${entityId} timed out after ${timeoutMs} ms`);
        const result = type.region.deliver({ shardId, entityId, payload: message, hops: 0, replyTo: { node: this.options.selfKey, askId: id } });
        if (result === 'dropped') {
            const error = `message to ${typeName}/${entityId} dropped: region buffer full (bufferSize ${this.options.bufferSize})`;
            this.asks.settle(id, { ok: false, error }, 'buffer_overflow');
        }
        return answer;
    }
}
//# sourceMappingURL=entity-refs.js.map