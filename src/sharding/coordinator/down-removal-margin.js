export class DownRemovalMargin {
    marginMs;
    scheduler;
    onMarginEnd;
    downSince = new Map();
    timer;
    stopped = false;
    constructor(marginMs, scheduler, 
    /** Called when a margin ends (the caller re-runs its membership check). */
    onMarginEnd) {
        this.marginMs = marginMs;
        this.scheduler = scheduler;
        this.onMarginEnd = onMarginEnd;
    }
    /**
     * Members this view shows down start their margin when their downing was decided (or now, without a
     * decision time), unless it started earlier.
     */
    sawDown(members, now) {
        for (const member of members) {
            if (member.status !== 'down')
                continue;
            this.started(member.address.toString(), Math.min(now, member.downedAtMs ?? now));
        }
    }
    /**
     * A member gone from the view (or down, or removed) while its region still held shards it did not hand
     * off: downed by the others, whether this view shows it down or, the leader having removed it in the same
     * gossip round, not at all any more. Its margin starts now unless it started earlier.
     */
    sawGone(member, now) {
        this.started(member, now);
    }
    /** The earliest start known for a member's margin wins (a later view may carry the decision time). */
    started(member, since) {
        const known = this.downSince.get(member);
        if (known === undefined || since < known)
            this.downSince.set(member, since);
    }
    /** True once a margin for the member started (running or ended, until forgotten). */
    has(member) {
        return this.downSince.has(member);
    }
    /** True while `member` was seen down less than marginMs ago. */
    inMargin(member, now) {
        const since = this.downSince.get(member);
        return since !== undefined && now < since + this.marginMs;
    }
    /** True while a member for which `matches` holds is in its margin. */
    anyInMargin(matches, now) {
        for (const member of this.downSince.keys())
            if (matches(member) && this.inMargin(member, now))
                return true;
        return false;
    }
    /**
     * Arms the timer for the earliest margin still running, and forgets the ended margins of members for which
     * `forgettable` holds (gone from both the view and the registry: nothing refers to them any more).
     */
    schedule(now, forgettable) {
        this.timer?.cancel();
        this.timer = undefined;
        let next = Infinity;
        for (const [member, since] of [...this.downSince]) {
            const end = since + this.marginMs;
            if (end > now)
                next = Math.min(next, end);
            else if (forgettable(member))
                this.downSince.delete(member);
        }
        if (next === Infinity || this.stopped)
            return;
        this.timer = this.scheduler.setTimeout(() => {
            this.timer = undefined;
            if (!this.stopped)
                this.onMarginEnd();
        }, next - now);
    }
    stop() {
        this.stopped = true;
        this.timer?.cancel();
        this.timer = undefined;
    }
}
/** The margin's key for older members that left the view without a record this coordinator can date. */
export const UNTRACED_OLDER_MEMBERS = '(older members no longer in the view)';
/**
 * True when members that reached Up before `self` are missing from the view. Up numbers are handed out in
 * join order, so a gap below this node's own means an older member left; if its record is gone (removed, or
 * pruned into a tombstone), this coordinator cannot tell a graceful leave from a downing nor date it, and it
 * may have been the previous coordinator's node, hosting shards nobody registered. The caller runs a full
 * margin from its own start for it: the downing, if there was one, was decided no later than that.
 */
export function olderMembersUntraced(members, self) {
    const own = members.find((m) => m.address.toString() === self);
    if (own === undefined || own.upNumber <= 1)
        return false;
    const seen = new Set(members.map((m) => m.upNumber));
    for (let n = 1; n < own.upNumber; n++)
        if (!seen.has(n))
            return true;
    return false;
}
//# sourceMappingURL=down-removal-margin.js.map