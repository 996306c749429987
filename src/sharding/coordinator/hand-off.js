// One shard's hand-off as an object: its id (echoed by ShardStopped, so only the report of this very stop
// ends it), its phase, the regions that have not yet stopped routing to the shard, and the timer that
// bounds the whole move. Also the source of hand-off ids.
import { randomInt } from 'node:crypto';
export class HandOff {
    shardId;
    id;
    owner;
    currentPhase;
    pending;
    timer;
    ended = false;
    startedAtMs;
    constructor(shardId, id, owner, phase, pendingAcks, timeout) {
        this.shardId = shardId;
        this.id = id;
        this.owner = owner;
        this.currentPhase = phase;
        this.startedAtMs = timeout.startedAtMs ?? timeout.scheduler.now();
        // A hand-off that starts in its HandOff phase (adopted stopping shards, the down-removal margin) waits
        // for nobody's BeginHandOffAck.
        this.pending = phase === 'begin' ? new Set(pendingAcks) : new Set();
        this.timer = timeout.scheduler.setTimeout(() => {
            if (this.ended)
                return;
            this.ended = true;
            timeout.onTimeout(this);
        }, timeout.timeoutMs);
    }
    get phase() {
        return this.currentPhase;
    }
    get pendingAcks() {
        return this.pending;
    }
    /** True once every region stopped routing to the shard and the HandOff may be sent. */
    get readyToHandOff() {
        return this.currentPhase === 'begin' && this.pending.size === 0;
    }
    /** A region acknowledged BeginHandOff, or is gone. True when that changed what this hand-off waits for. */
    acknowledged(region) {
        return this.currentPhase === 'begin' && this.pending.delete(region);
    }
    enterHandOffPhase() {
        if (!this.readyToHandOff)
            throw new Error(`hand-off of shard ${this.shardId} is not ready for its HandOff phase`);
        this.currentPhase = 'handoff';
    }
    /**
     * Only the owner's answer to this hand-off's HandOff ends it. Anything else (a copy stopping elsewhere, a
     * late or duplicated report of an earlier stop, one answering a former coordinator) is no news, and acting
     * on it could allocate a shard that still runs.
     */
    isEndedBy(from, handOffId) {
        return this.currentPhase === 'handoff' && from === this.owner && handOffId === this.id;
    }
    /** What to (re-)send for the current phase. */
    messages(typeName) {
        const { shardId } = this;
        if (this.currentPhase === 'begin') {
            return [...this.pending].map((to) => ({ to, message: { type: 'BeginHandOff', typeName, shardId } }));
        }
        return [{ to: this.owner, message: { type: 'HandOff', typeName, shardId, handOffId: this.id } }];
    }
    /** Ends the hand-off's clock; idempotent. */
    cancel() {
        this.ended = true;
        this.timer.cancel();
    }
}
/**
 * Hand-off ids. A random start, so the ids of earlier coordinators (whose HandOffs a region may still answer
 * late) do not collide with this one's; wraps before leaving the safe integers.
 */
export class HandOffIds {
    nextId;
    constructor(start = randomInt(1, 2 ** 47)) {
        if (!Number.isSafeInteger(start) || start < 1)
            throw new RangeError(`hand-off ids start at a positive safe integer, got ${start}`);
        this.nextId = start;
    }
    take() {
        const id = this.nextId;
        this.nextId = id >= Number.MAX_SAFE_INTEGER ? 1 : id + 1;
        return id;
    }
}
//# sourceMappingURL=hand-off.js.map