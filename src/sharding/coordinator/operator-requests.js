import { AnswerCache } from './answer-cache.js';
/** How many RebalanceNow answers are kept for repeated requests. */
const REMEMBERED_ANSWERS = 256;
/** Sorts the requested shard ids (each once, in request order); pure. */
export function judgeRebalanceNow(shardIds, numberOfShards, state) {
    const verdict = { accepted: [], unknown: [], homeless: [], toHandOff: [] };
    for (const shardId of new Set(shardIds)) {
        if (!Number.isInteger(shardId) || shardId < 0 || shardId >= numberOfShards)
            verdict.unknown.push(shardId);
        else if (state.isHandingOff(shardId))
            verdict.accepted.push(shardId);
        else if (state.homeOf(shardId) === undefined)
            verdict.homeless.push(shardId);
        else {
            verdict.toHandOff.push(shardId);
            verdict.accepted.push(shardId);
        }
    }
    return verdict;
}
export class OperatorRequests {
    options;
    answers = new AnswerCache(REMEMBERED_ANSWERS);
    constructor(options) {
        this.options = options;
    }
    getShardLocations(from, requestId) {
        const { whenWarm, send, typeName, state } = this.options;
        whenWarm(() => send(from, { type: 'ShardLocations', typeName, requestId, regions: state.locations(), handingOff: state.handingOff() }));
    }
    rebalanceNow(from, requestId, shardIds) {
        this.options.whenWarm(() => this.answerRebalanceNow(from, requestId, shardIds));
    }
    requestRebalance(from, requestId) {
        const { whenWarm, send, typeName, rebalanceRound } = this.options;
        whenWarm(() => {
            rebalanceRound();
            send(from, { type: 'RebalanceRequested', typeName, requestId });
        });
    }
    insight(from, request) {
        const { whenWarm, send, insight } = this.options;
        whenWarm(() => send(from, insight(request)));
    }
    answerRebalanceNow(from, requestId, shardIds) {
        const { send, typeName, numberOfShards, state, logger, handOff } = this.options;
        // A requester re-sends until answered; a repeat whose answer was lost must not move the shards again.
        const earlier = this.answers.get(from, requestId);
        if (earlier !== undefined) {
            send(from, earlier);
            return;
        }
        const { accepted, unknown, homeless, toHandOff } = judgeRebalanceNow(shardIds, numberOfShards, state);
        for (const shardId of toHandOff)
            handOff(shardId);
        logger.info({ accepted, unknown, homeless, from }, 'manual rebalance');
        const answer = { type: 'RebalanceNowResult', typeName, requestId, accepted, unknown, homeless };
        this.answers.remember(from, requestId, answer);
        send(from, answer);
    }
}
//# sourceMappingURL=operator-requests.js.map