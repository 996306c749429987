// Reading slots back out of a Yjs document: one slot by key, and every slot a transaction changed,
// grouped by entity type (before the timestamp rule decides which of them count).
import * as Y from 'yjs';
import { decodeSlotValue, parseSlotKey } from './slots.js';
export function readSlot(map, key, shardId, writer, log) {
    const raw = map.get(key);
    if (raw === undefined)
        return undefined;
    const decoded = decodeSlotValue(raw, writer);
    if (decoded === null) {
        // Unreachable through applyUpdate (validated); kept so a bad value is ignored rather than trusted.
        log({ level: 'warn', message: `ignoring malformed placement slot ${JSON.stringify(key)}` });
        return undefined;
    }
    return decoded.meta === undefined
        ? { shardId, writer, target: decoded.target, hlc: decoded.hlc }
        : { shardId, writer, target: decoded.target, hlc: decoded.hlc, meta: decoded.meta };
}
/** The slot keys `transaction` changed in top-level maps `typeNameOf` can name; other keys are skipped. */
export function changedSlots(transaction, typeNameOf, log) {
    const out = [];
    for (const [type, keys] of transaction.changed) {
        const typeName = typeNameOf(type);
        if (typeName === undefined || !(type instanceof Y.Map))
            continue;
        const map = type;
        const slots = [];
        for (const key of keys) {
            const parsed = key === null ? null : parseSlotKey(key);
            if (parsed === null || key === null)
                continue;
            slots.push({ ...parsed, slot: readSlot(map, key, parsed.shardId, parsed.writer, log) });
        }
        out.push({ typeName, slots });
    }
    return out;
}
//# sourceMappingURL=slot-reads.js.map