import { hasRole } from './membership.js';
import { HOSTING_STATUSES } from '../../cluster/member.js';
export class WarmUpGate {
    options;
    warm = false;
    stopped = false;
    timer;
    /** GetShardHome requesters by never-seen shard; a shard with no requesters still waits to be allocated. */
    deferred = new Map();
    /** Operator requests that arrived during warm-up (their answers need the full map). */
    afterWarmup = [];
    /** Members last seen unreachable and unregistered. */
    awaitedUnreachable = new Set();
    constructor(options) {
        this.options = options;
    }
    get isWarm() {
        return this.warm;
    }
    /** Starts the warm-up clock; ends it at once if every expected region already registered. */
    start() {
        this.restartTimer();
        for (const key of this.unregisteredUnreachable())
            this.awaitedUnreachable.add(key);
        this.check();
    }
    stop() {
        this.stopped = true;
        this.timer?.cancel();
        this.timer = undefined;
    }
    /** Becomes warm once every expected region registered. */
    check() {
        if (this.warm || this.stopped)
            return;
        if (this.expectedRegions().every((address) => this.options.view.isRegistered(address)))
            this.becomeWarm('every region registered');
    }
    /** Runs the action now if warm, else once warm. */
    whenWarm(action) {
        if (this.warm)
            action();
        else
            this.afterWarmup.push(action);
    }
    /** True when a shard nobody reported may be given a home: warm, and no unregistered member may run it. */
    get open() {
        return this.warm && !this.stopped && !this.unknownHostsUnreachable();
    }
    /**
     * True while a member that may host shards of this type is unreachable and has not registered: it may run
     * any shard this coordinator has never heard of (the coordinator moved while it was cut off), so giving
     * such a shard a home now could run it twice. The wait ends when the member registers (it is reachable
     * again) or is downed (keep-majority downing bounds it by downAfterMs; a minority side downs itself).
     */
    unknownHostsUnreachable() {
        return this.unregisteredUnreachable().length > 0 || this.options.view.downedUnregistered();
    }
    /** Holds a home request (or, without a requester, just the allocation) of a shard until the gate opens. */
    defer(shardId, requester) {
        let waiting = this.deferred.get(shardId);
        if (waiting === undefined) {
            waiting = new Set();
            this.deferred.set(shardId, waiting);
        }
        if (requester !== undefined)
            waiting.add(requester);
    }
    isDeferred(shardId) {
        return this.deferred.has(shardId);
    }
    /** Hands out every deferred request once the gate is open (and forgets them); none while it is closed. */
    takeDeferred() {
        if (this.deferred.size === 0 || !this.open)
            return [];
        const deferred = [...this.deferred];
        this.deferred.clear();
        return deferred;
    }
    /**
     * A member that was unreachable and unregistered is reachable again: its region is about to register the
     * shards it kept running, so the coordinator waits for it once more (bounded by the warm-up time) before
     * it allocates shards it has never heard of. Returns the members to ask to register.
     */
    trackReturningMembers() {
        const unreachable = new Set(this.unregisteredUnreachable());
        const expected = new Set(this.expectedRegions());
        const returning = [...this.awaitedUnreachable].filter((key) => !unreachable.has(key) && expected.has(key) && !this.options.view.isRegistered(key));
        this.awaitedUnreachable.clear();
        for (const key of unreachable)
            this.awaitedUnreachable.add(key);
        if (returning.length === 0 || !this.warm || this.stopped)
            return [];
        this.warm = false;
        this.options.logger.info({ members: returning }, 'unregistered members reachable again: waiting for their regions');
        this.restartTimer();
        return returning;
    }
    /** Reachable members that may host shards of this type; the warm-up waits for their registrations. */
    expectedRegions() {
        return this.mayHost()
            .filter((m) => m.reachable)
            .map((m) => m.address.toString());
    }
    unregisteredUnreachable() {
        return this.mayHost()
            .filter((m) => !m.reachable && !this.options.view.isRegistered(m.address.toString()))
            .map((m) => m.address.toString());
    }
    mayHost() {
        return this.options.view.members().filter((m) => HOSTING_STATUSES.has(m.status) && hasRole(m, this.options.role));
    }
    becomeWarm(reason) {
        if (this.warm || this.stopped)
            return;
        this.warm = true;
        this.timer?.cancel();
        this.timer = undefined;
        this.options.onWarm(reason);
        for (const action of this.afterWarmup.splice(0))
            action();
    }
    restartTimer() {
        this.timer?.cancel();
        this.timer = this.options.scheduler.setTimeout(() => {
            this.timer = undefined;
            this.becomeWarm('warm-up time elapsed');
        }, this.options.warmupMs);
    }
}
//# sourceMappingURL=warm-up-gate.js.map