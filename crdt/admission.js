// The timestamp rule: which remote slot values a replica lets count.
// - Out of range (wallMs > MAX_HLC_WALL_MS): refused everywhere, forever; deterministic.
// - More than maxAheadMs (default 7 days) ahead of this replica's wall clock: held, re-checked on every
//   later use of the store, admitted once the clock is within maxAheadMs; admission is never taken back.
//   Values under this replica's own node name are exempt: they are its earlier incarnation's, and its
//   clock must carry on past them (a node restarted with its clock behind still overrides them).
// Refused and held values stay in the Yjs document (later updates of the same writer depend on them, so
// dropping one would stall that writer for good) but are never a winner nor a base for a successor.
// Every replica ends up admitting the same values (all in-range ones, once its clock has passed them),
// so replicas with sane clocks converge.
import { MAX_HLC_COUNTER, MAX_HLC_WALL_MS } from './errors.js';
import { compareSlots } from './slots.js';
/** Whether `hlc` lies in the range every replica accepts; the successor of such a value never overflows. */
export function inRange(hlc) {
    return hlc.wallMs <= MAX_HLC_WALL_MS && hlc.counter <= MAX_HLC_COUNTER;
}
export class Admission {
    node;
    now;
    maxAheadMs;
    log;
    refused = new Map();
    reported = new Set();
    outOfRange = 0;
    aheadOfClock = 0;
    clockDrift = 0;
    // No held value is due before this wall-clock time: lets due() cost one now() call on the read path.
    nextDueAt = Infinity;
    constructor(node, now, maxAheadMs, log) {
        this.node = node;
        this.now = now;
        this.maxAheadMs = maxAheadMs;
        this.log = log;
    }
    /**
     * Whether a remote slot value counts now. A refused one is remembered (held ones until the clock reaches
     * them, out-of-range document ones until the slot changes or is force-removed), counted and logged once
     * per writer and reason. A broken now() admits: the clock is this replica's fault, not the writer's.
     */
    admit(typeName, slot, where) {
        const reason = this.problem(slot);
        if (reason === null)
            return true;
        if (reason === 'out_of_range')
            this.outOfRange++;
        else
            this.aheadOfClock++;
        this.report(slot, reason);
        if (reason === 'out_of_range' && where === 'base')
            return false;
        const key = refusedKey(where, typeName, slot.shardId, slot.writer);
        const current = this.refused.get(key);
        if (current === undefined || compareSlots(slot, current.slot) > 0)
            this.refused.set(key, { typeName, slot, where, reason });
        if (reason === 'ahead_of_clock')
            this.nextDueAt = Math.min(this.nextDueAt, slot.hlc.wallMs - this.maxAheadMs);
        return false;
    }
    /**
     * The clock refused to move to an admitted remote timestamp more than maxDriftMs ahead (hlc.ts): the
     * value counts, the clock stays put. Counted and logged once per writer as well.
     */
    driftRefused(remote, localWallMs) {
        this.clockDrift++;
        const once = `clock\u0000${remote.node}`;
        if (this.reported.has(once))
            return;
        this.reported.add(once);
        this.log({
            level: 'warn',
            message: `placement timestamp from node ${JSON.stringify(remote.node)} is ${remote.wallMs - localWallMs} ms ahead ` +
                `of the local clock; the clock was not moved (reported once per node)`,
            details: { node: remote.node, remoteWallMs: remote.wallMs, localWallMs },
        });
    }
    /** Whether another replica with a clock like this one's would admit a value with `hlc` now. */
    admissible(hlc) {
        return inRange(hlc) && !this.ahead(hlc.wallMs);
    }
    /** The document slot changed (new value or deleted): whatever was refused there is gone. */
    forget(typeName, shardId, writer) {
        this.refused.delete(refusedKey('document', typeName, shardId, writer));
    }
    /** Held values the clock has now reached; they are no longer remembered here. */
    due() {
        const now = this.wall();
        if (this.refused.size === 0 || now === undefined || now < this.nextDueAt)
            return [];
        const out = [];
        this.nextDueAt = Infinity;
        for (const [key, entry] of this.refused) {
            if (entry.reason !== 'ahead_of_clock')
                continue;
            const dueAt = entry.slot.hlc.wallMs - this.maxAheadMs;
            if (dueAt <= now) {
                this.refused.delete(key);
                out.push(entry);
            }
            else {
                this.nextDueAt = Math.min(this.nextDueAt, dueAt);
            }
        }
        return out;
    }
    /** Refused values of one shard (force removal deletes them); base ones are dropped here as well. */
    takeShard(typeName, shardId) {
        const out = [];
        for (const [key, entry] of this.refused) {
            if (entry.typeName !== typeName || entry.slot.shardId !== shardId)
                continue;
            out.push(entry);
            if (entry.where === 'base')
                this.refused.delete(key);
        }
        return out;
    }
    /** Compaction: the document refused values lived in is now the previous one, folded into the base. */
    moveToBase() {
        for (const [key, entry] of [...this.refused]) {
            if (entry.where !== 'document')
                continue;
            this.refused.delete(key);
            if (entry.reason === 'out_of_range')
                continue;
            const baseKey = refusedKey('base', entry.typeName, entry.slot.shardId, entry.slot.writer);
            const current = this.refused.get(baseKey);
            if (current === undefined || compareSlots(entry.slot, current.slot) > 0)
                this.refused.set(baseKey, { ...entry, where: 'base' });
            // nextDueAt already covers it: the entry's time did not change.
        }
    }
    stats() {
        let held = 0;
        for (const entry of this.refused.values())
            if (entry.reason === 'ahead_of_clock')
                held++;
        const { outOfRange, aheadOfClock, clockDrift } = this;
        return { held, quarantined: this.refused.size - held, outOfRange, aheadOfClock, clockDrift };
    }
    problem(slot) {
        if (!inRange(slot.hlc))
            return 'out_of_range';
        return slot.writer !== this.node && this.ahead(slot.hlc.wallMs) ? 'ahead_of_clock' : null;
    }
    ahead(wallMs) {
        const now = this.wall();
        return now !== undefined && wallMs - now > this.maxAheadMs;
    }
    wall() {
        try {
            const now = Math.floor(this.now());
            return Number.isSafeInteger(now) && now >= 0 ? now : undefined;
        }
        catch {
            return undefined;
        }
    }
    report(slot, reason) {
        const once = `${reason}\u0000${slot.writer}`;
        if (this.reported.has(once))
            return;
        this.reported.add(once);
        const now = this.wall() ?? 0;
        const message = reason === 'out_of_range'
            ? `placement timestamp from node ${JSON.stringify(slot.writer)} is beyond the representable range ` +
                `(wallMs ${slot.hlc.wallMs}); it never counts (reported once per node)`
            : `placement timestamp from node ${JSON.stringify(slot.writer)} is ${slot.hlc.wallMs - now} ms ahead ` +
                `of the local clock; it is held until the clock is within ${this.maxAheadMs} ms of it (reported once per node)`;
        this.log({ level: 'warn', message, details: { node: slot.writer, reason, remoteWallMs: slot.hlc.wallMs, localWallMs: now } });
    }
}
function refusedKey(where, typeName, shardId, writer) {
    return `${where}\u0000${typeName}\u0000${shardId}\u0000${writer}`;
}
//# sourceMappingURL=admission.js.map