import { NO_CORDONS } from '../placements/cordon-view.js';
import { MAX_INSIGHT_TEXT } from '../protocol/insight-messages.js';
import { isPinAware } from '../strategies/pin-aware.js';
import { landings, pinsWith, rebalanceRoundMoves } from './dry-run.js';
import { explainShard } from './explain.js';
import { judgeRebalanceNow } from './operator-requests.js';
/** Moves listed in one answer at most (about 100 bytes each on the wire); the rest are counted in a warning. */
export const MAX_LISTED_MOVES = 50_000;
const MAX_WARNINGS = 10_000;
/** The coordinator's answerer: what it reads, bound once; each call reads the current state. */
export function coordinatorInsight(settings, state, candidates, members) {
    return (request) => {
        const { typeName, requestId } = request;
        switch (request.type) {
            case 'ExplainShard': {
                const { shardId } = request;
                if (shardId >= settings.numberOfShards)
                    return { type: 'ShardExplained', typeName, requestId, explanation: null };
                const { strategy } = settings;
                const pins = isPinAware(strategy) ? strategy.pinContext() : undefined;
                const listed = settings.listedPlacement?.(shardId, pins?.now ?? Date.now());
                const offered = candidates();
                const explanation = explainShard(shardId, {
                    state,
                    members: members(),
                    candidates: offered,
                    cordons: settings.cordons ?? NO_CORDONS,
                    pins,
                    listed,
                    fallbackReason: fallbackReason(strategy, shardId, state, offered),
                });
                return { type: 'ShardExplained', typeName, requestId, explanation: { ...explanation, message: explanation.message.slice(0, MAX_INSIGHT_TEXT) } };
            }
            case 'DryRunPlacements':
                return answer(request, (warn) => dryRunPlacements(settings, state, candidates(), request.pins, warn));
            case 'DryRunRebalance':
                return answer(request, (warn) => dryRunRebalance(settings, state, candidates(), request.shardIds, warn));
        }
    };
}
/** The strategy's own clause for why the shard is on its home; a strategy that throws here adds nothing. */
function fallbackReason(strategy, shardId, state, candidates) {
    const home = state.homeOf(shardId);
    if (home === undefined || strategy.reasonFor === undefined)
        return undefined;
    try {
        const reason = strategy.reasonFor(shardId, home, candidates, state.shardMap());
        return typeof reason === 'string' ? reason.slice(0, 200) : undefined;
    }
    catch {
        return undefined;
    }
}
function answer(request, run) {
    const warnings = [];
    const warn = (warning) => {
        if (warnings.length < MAX_WARNINGS)
            warnings.push({ ...warning, message: warning.message.slice(0, MAX_INSIGHT_TEXT) });
    };
    const moves = run(warn);
    if (moves.length > MAX_LISTED_MOVES)
        warn({ shardId: null, message: `${moves.length - MAX_LISTED_MOVES} more moves are not listed` });
    return { type: 'DryRunAnswer', typeName: request.typeName, requestId: request.requestId, moves: moves.slice(0, MAX_LISTED_MOVES), warnings };
}
/** The strategy the dry run runs: a pin-aware one over `pins` (default: its own), its warnings to `warn`. */
function silent(strategy, warn, pins) {
    if (!isPinAware(strategy))
        return strategy;
    return strategy.withPins(pins ?? strategy.pinContext().pins, (message, details) => warn(warningOf(message, details)));
}
/** What a placements write starts: the rebalance round placementsChanged triggers, with the new pins in force. */
function dryRunPlacements(settings, state, candidates, proposed, warn) {
    const { strategy, numberOfShards } = settings;
    const inRange = proposed.filter((pin) => pin.shardId < numberOfShards);
    for (const pin of proposed)
        if (pin.shardId >= numberOfShards)
            warn({ shardId: pin.shardId, message: `shard ${pin.shardId} is out of range` });
    let hypothetical = strategy;
    if (isPinAware(strategy)) {
        const { pins, unreadable } = pinsWith(strategy.pinContext().pins, inRange);
        for (const shardId of unreadable)
            warn({ shardId, message: `shard ${shardId}: the target cannot be read; the pin is left out` });
        hypothetical = silent(strategy, warn, pins);
    }
    else {
        for (const pin of inRange) {
            warn({ shardId: pin.shardId, target: pin.target, message: `shard ${pin.shardId}: this type's allocation strategy reads no pins; the pin would be stored but not honoured` });
        }
    }
    const { moves, error } = rebalanceRoundMoves(hypothetical, candidates, state.shardMap(), new Set(state.handingOff()));
    if (error !== undefined)
        warn({ shardId: null, message: `the allocation strategy's rebalance threw: ${error}; no shard would move` });
    return moves;
}
/** What RebalanceNow starts: a hand-off of each named shard with a home, each re-allocated through the strategy. */
function dryRunRebalance(settings, state, candidates, shardIds, warn) {
    const verdict = judgeRebalanceNow(shardIds, settings.numberOfShards, state);
    for (const shardId of verdict.unknown)
        warn({ shardId, message: `shard ${shardId} is out of range` });
    for (const shardId of verdict.homeless)
        warn({ shardId, message: `shard ${shardId} has no home yet: nothing to move; its first message allocates it` });
    const starting = new Set(verdict.toHandOff);
    for (const shardId of verdict.accepted)
        if (!starting.has(shardId))
            warn({ shardId, message: `shard ${shardId} is already being handed off` });
    return landings(silent(settings.strategy, warn), candidates, state.shardMap(), new Set(state.handingOff()), verdict.toHandOff);
}
function warningOf(message, details) {
    const { shardId, target } = details;
    return {
        shardId: typeof shardId === 'number' ? shardId : null,
        ...(typeof target === 'string' ? { target } : {}),
        message,
    };
}
//# sourceMappingURL=insight.js.map