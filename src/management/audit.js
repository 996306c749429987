export const AUDIT_CAPACITY = 1_000;
export class AuditLog {
    logger;
    capacity;
    now;
    ring = [];
    next = 0;
    constructor(logger, capacity = AUDIT_CAPACITY, now = Date.now) {
        this.logger = logger;
        this.capacity = capacity;
        this.now = now;
        if (!Number.isSafeInteger(capacity) || capacity < 1)
            throw new RangeError(`audit capacity must be a positive integer, got ${capacity}`);
    }
    /** Records an accepted write; call it once, after the write was applied. */
    record(input) {
        const entry = {
            action: input.action,
            typeName: input.typeName,
            shardIds: [...(input.shardIds ?? [])].sort((a, b) => a - b),
            target: input.target,
            by: input.by ?? null,
            reason: input.reason ?? null,
            hlc: input.hlc,
            at: new Date(this.now()).toISOString(),
        };
        if (this.ring.length < this.capacity)
            this.ring.push(entry);
        else
            this.ring[this.next] = entry;
        this.next = (this.next + 1) % this.capacity;
        this.logger?.info({ audit: true, ...entry }, `audit: ${entry.action}`);
        return entry;
    }
    /** The kept entries, newest first. */
    entries() {
        const oldestFirst = this.ring.length < this.capacity ? this.ring : [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
        return [...oldestFirst].reverse();
    }
}
/** The distinct targets of a bulk write, as the audit line names them. */
export function targetsText(targets) {
    const distinct = [...new Set(targets)];
    return distinct.length === 0 ? null : distinct.join(', ');
}
/** The one author (or reason) of a bulk write's entries, or the distinct ones joined when they differ. */
export function commonText(values) {
    const distinct = [...new Set([...values].filter((value) => typeof value === 'string'))];
    return distinct.length === 0 ? null : distinct.join(', ');
}
//# sourceMappingURL=audit.js.map