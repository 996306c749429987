import { isExpired, ruleOf } from './placement-options.js';
/** Every placement of a type in `store`, by ascending shard id; expired ones only with includeExpired. */
export function pinRecords(store, typeName, options = {}) {
    const now = options.now ?? Date.now();
    const includeExpired = options.includeExpired === true;
    const records = [];
    for (const [shardId, placement] of store.snapshot(typeName).placements) {
        const expired = isExpired(ruleOf(placement), now);
        if (expired && !includeExpired)
            continue;
        const record = pinRecordOf(shardId, placement);
        records.push(includeExpired ? { ...record, expired } : record);
    }
    return records.sort((a, b) => a.shardId - b.shardId);
}
/** One shard's placement as a listing without expired pins shows it, or undefined. */
export function listedPlacement(store, typeName, shardId, now) {
    const placement = store.snapshot(typeName).placements.get(shardId);
    if (placement === undefined || isExpired(ruleOf(placement), now))
        return undefined;
    return pinRecordOf(shardId, placement);
}
export function pinRecordOf(shardId, placement) {
    const { mode, expiresAt, reason, by } = ruleOf(placement);
    return {
        shardId,
        target: placement.target,
        mode,
        expiresAt: expiresAt === null ? null : new Date(expiresAt).toISOString(),
        reason,
        by,
        writer: placement.writer,
        hlc: placement.hlc,
    };
}
//# sourceMappingURL=placement-record.js.map