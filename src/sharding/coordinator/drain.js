import { chooseHome } from './allocation.js';
import { AnswerCache } from './answer-cache.js';
/** How long a drained region stays excluded here while the cordon has not replicated to this node yet. */
export const DRAIN_EXCLUSION_MS = 30_000;
const REMEMBERED_ANSWERS = 64;
/**
 * The cordons this coordinator honours: the store's view, plus regions named by a drain request whose
 * cordon has not reached this node's replica yet (it is written on the node that took the request, and a
 * shard freed meanwhile must not go back to the region it is leaving). Such an exclusion ends once the
 * store shows the cordon (from then on the store decides, uncordon included) or after DRAIN_EXCLUSION_MS.
 */
export class CoordinatorCordons {
    view;
    now;
    pending = new Map();
    constructor(view, now) {
        this.view = view;
        this.now = now;
    }
    /** Excludes `address` until the store shows its cordon (or the exclusion lapses). */
    exclude(address) {
        if (!this.view.isCordoned(address))
            this.pending.set(address, this.now() + DRAIN_EXCLUSION_MS);
    }
    isCordoned(address) {
        if (this.view.isCordoned(address)) {
            this.pending.delete(address);
            return true;
        }
        const until = this.pending.get(address);
        if (until === undefined)
            return false;
        if (this.now() < until)
            return true;
        this.pending.delete(address);
        return false;
    }
    list() {
        const listed = this.view.list();
        const known = new Set(listed.map((record) => record.address));
        const pending = [...this.pending.keys()].filter((address) => !known.has(address) && this.isCordoned(address));
        return [...listed, ...pending.map((address) => ({ address }))];
    }
}
/**
 * The moves a drain of `region` starts: each of its shards in turn, with the strategy's home among
 * `candidates` given the homes chosen before it (so they spread as the hand-offs will). Pure apart from
 * what the strategy itself does (an external strategy may log a warning for a pin it cannot honour).
 */
export function planDrain(strategy, region, shardIds, candidates, shards) {
    const simulated = new Map([...shards].map(([key, owned]) => [key, new Set(owned)]));
    const moves = [];
    for (const shardId of shardIds) {
        simulated.get(region)?.delete(shardId);
        const choice = chooseHome(strategy, shardId, candidates, simulated);
        if (choice !== undefined) {
            let owned = simulated.get(choice.region);
            if (owned === undefined)
                simulated.set(choice.region, (owned = new Set()));
            owned.add(shardId);
        }
        moves.push({ shardId, from: region, to: choice?.region ?? null });
    }
    return moves;
}
export class DrainRequests {
    options;
    answers = new AnswerCache(REMEMBERED_ANSWERS);
    constructor(options) {
        this.options = options;
    }
    drain(from, requestId, region) {
        this.options.whenWarm(() => this.answer(from, requestId, region));
    }
    answer(from, requestId, region) {
        const { typeName, strategy, state, cordons, candidates, logger, send, handOff } = this.options;
        const earlier = this.answers.get(from, requestId);
        if (earlier !== undefined) {
            send(from, earlier);
            return;
        }
        cordons.exclude(region);
        const shardIds = state.shardsOf(region).sort((a, b) => a - b);
        const others = candidates();
        let answer;
        if (shardIds.length > 0 && others.length === 0) {
            logger.warn({ region, shards: shardIds.length }, 'drain refused: no other region may take the shards');
            answer = { type: 'DrainStarted', typeName, requestId, moves: [], noCapacity: true };
        }
        else {
            const moves = planDrain(strategy, region, shardIds, others, state.shardMap());
            for (const { shardId } of moves)
                handOff(shardId);
            logger.info({ region, shards: moves.length, from }, 'draining region: its shards are handed off');
            answer = { type: 'DrainStarted', typeName, requestId, moves, noCapacity: false };
        }
        this.answers.remember(from, requestId, answer);
        send(from, answer);
    }
}
//# sourceMappingURL=drain.js.map