import { tryParsePlacementTarget } from '../placements/placement-target.js';
import { PlacementPin } from '../placements/placement-pin.js';
import { chooseHome, shardsToMove } from './allocation.js';
/**
 * Where each shard of `handedOff` lands: hand-offs in this order, each shard allocated (chooseHome, as
 * ShardHomes.freed does) when its own hand-off ends, with the earlier ones already landed. A shard without
 * a home, or already moving, is skipped (HandOffs.begin starts nothing for it). `to` is null when the
 * strategy has no home for it now.
 */
export function landings(strategy, candidates, shards, inProgress, handedOff) {
    const map = new Map([...shards].map(([key, owned]) => [key, new Set(owned)]));
    const homes = new Map();
    for (const [key, owned] of map)
        for (const shardId of owned)
            homes.set(shardId, key);
    const moves = [];
    for (const shardId of new Set(handedOff)) {
        const from = homes.get(shardId);
        if (from === undefined || inProgress.has(shardId))
            continue;
        map.get(from)?.delete(shardId);
        homes.delete(shardId);
        const to = chooseHome(strategy, shardId, candidates, map)?.region ?? null;
        if (to !== null) {
            let owned = map.get(to);
            if (owned === undefined)
                map.set(to, (owned = new Set()));
            owned.add(shardId);
            homes.set(shardId, to);
        }
        moves.push({ shardId, from, to });
    }
    return moves;
}
/** The moves of one rebalance round (what Allocator.shardsToRebalance picks, then landings); or the strategy's error. */
export function rebalanceRoundMoves(strategy, candidates, shards, inProgress) {
    let allocated = 0;
    for (const owned of shards.values())
        allocated += owned.size;
    if (candidates.length === 0 || allocated === 0)
        return { moves: [] };
    const chosen = shardsToMove(strategy, candidates, shards, inProgress);
    if ('error' in chosen)
        return { moves: [], error: chosen.error };
    return { moves: landings(strategy, candidates, shards, inProgress, chosen.shards) };
}
/**
 * The pins as they would read once `proposed` were written: each proposed pin replaces the shard's current
 * one. A proposed target that cannot be parsed (the controller validated it, so only a foreign sender) is
 * left out and reported by shard id.
 */
export function pinsWith(current, proposed) {
    const pins = new Map(current);
    const unreadable = [];
    for (const { shardId, target, mode, expiresAt } of proposed) {
        const parsed = tryParsePlacementTarget(target);
        if (parsed === undefined)
            unreadable.push(shardId);
        else
            pins.set(shardId, new PlacementPin(parsed, mode, expiresAt));
    }
    return { pins, unreadable };
}
//# sourceMappingURL=dry-run.js.map