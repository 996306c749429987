// The timestamps of local writes: each is max(clock.tick(), successor(own slot), successor(winner)), over
// admitted values only, so a write made after seeing the current value wins on every replica whatever the
// wall clocks say, while a refused far-future value can neither win nor drag a write out of range.
import { MAX_HLC_WALL_MS, PlacementStoreError } from './errors.js';
import { inRange } from './admission.js';
import { compareHlc, successor } from './hlc.js';
/**
 * One timestamp per write, in order; a shard named twice gets increasing ones. Throws `hlc_out_of_range`
 * when a write would need a timestamp beyond MAX_HLC_WALL_MS: the caller has written nothing yet.
 */
export function stampWrites(typeName, shardIds, clock, index, ownBase) {
    const batch = new Map();
    return shardIds.map((shardId) => {
        let hlc = clock.tick();
        for (const seen of [batch.get(shardId) ?? ownBase(shardId), index.winner(shardId)?.hlc]) {
            if (seen !== undefined && compareHlc(hlc, seen) <= 0)
                hlc = successor(seen, clock.node);
        }
        if (!inRange(hlc)) {
            throw new PlacementStoreError('hlc_out_of_range', `cannot write ${typeName} shard ${shardId}: it needs timestamp wallMs ${hlc.wallMs}, beyond the limit ` +
                `${MAX_HLC_WALL_MS} (is this node's clock far in the future?); nothing was written`);
        }
        batch.set(shardId, hlc);
        return hlc;
    });
}
/** The greater of two optional timestamps. */
export function laterHlc(a, b) {
    if (a === undefined || b === undefined)
        return a ?? b;
    return compareHlc(a, b) >= 0 ? a : b;
}
//# sourceMappingURL=write-stamps.js.map