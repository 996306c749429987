// Operator requests to a type's coordinator (shard locations, rebalance now, a rebalance round, explain, dry runs), from any
// node: each is re-sent every retry interval to wherever the coordinator runs by then, until its answer
// arrives or the request times out. Answers are matched by request id, type name and answer type.
import { ActorTsError } from '../../errors.js';
/** The requests and the answer type each one waits for. */
const ANSWER_TYPE = {
    GetShardLocations: 'ShardLocations',
    RebalanceNow: 'RebalanceNowResult',
    RequestRebalance: 'RebalanceRequested',
    ExplainShard: 'ShardExplained',
    DryRunPlacements: 'DryRunAnswer',
    DryRunRebalance: 'DryRunAnswer',
    DrainRegion: 'DrainStarted',
};
export class CoordinatorClient {
    options;
    pending = new Map();
    nextId = 1;
    constructor(options) {
        this.options = options;
    }
    /**
     * Sends `body` to the coordinator `coordinator()` names at each attempt (none while it names nobody) and
     * resolves with the answer; rejects with `timeout` after `requestTimeoutMs`.
     */
    request(body, coordinator) {
        const requestId = this.nextId++;
        const request = { ...body, requestId };
        const sendIt = () => {
            const to = coordinator();
            if (to !== undefined)
                this.options.send(to, request);
        };
        return new Promise((resolve, reject) => {
            const timeoutMs = this.options.requestTimeoutMs;
            const timer = setTimeout(() => {
                if (!this.forget(requestId))
                    return;
                const where = coordinator() ?? 'no coordinator (no Up member)';
                reject(new ActorTsError('timeout', `${request.type} for "${request.typeName}" got no answer from ${where} within ${timeoutMs} ms`));
            }, timeoutMs);
            const retry = setInterval(sendIt, this.options.retryIntervalMs);
            this.pending.set(requestId, {
                typeName: request.typeName,
                answerType: ANSWER_TYPE[request.type],
                resolve: resolve,
                reject,
                timer,
                retry,
            });
            sendIt();
        });
    }
    /** Settles the request this answers; an answer nobody waits for (late, duplicated, mismatched) is ignored. */
    onAnswer(answer) {
        const pending = this.pending.get(answer.requestId);
        if (pending === undefined || pending.answerType !== answer.type || pending.typeName !== answer.typeName)
            return;
        this.forget(answer.requestId);
        pending.resolve(answer);
    }
    /** Rejects every waiting request with `error` (the node is shutting down). */
    failAll(error) {
        const requests = [...this.pending.keys()];
        for (const requestId of requests) {
            const pending = this.pending.get(requestId);
            this.forget(requestId);
            pending?.reject(error);
        }
    }
    forget(requestId) {
        const pending = this.pending.get(requestId);
        if (pending === undefined)
            return false;
        this.pending.delete(requestId);
        clearTimeout(pending.timer);
        clearInterval(pending.retry);
        return true;
    }
}
//# sourceMappingURL=coordinator-client.js.map