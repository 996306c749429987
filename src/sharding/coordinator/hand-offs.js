import { HandOff, HandOffIds } from './hand-off.js';
export class HandOffs {
    options;
    ids;
    counts = { started: 0, completed: 0, timedOut: 0 };
    constructor(options) {
        this.options = options;
        this.ids = options.ids ?? new HandOffIds();
    }
    get counters() {
        return { ...this.counts };
    }
    /** Moves a shard off its home: every region stops routing to it, then the home stops it. */
    begin(shardId) {
        const { state } = this.options;
        const owner = state.homeOf(shardId);
        if (owner === undefined || state.isHandingOff(shardId))
            return;
        this.track(shardId, owner, 'begin', state.registered());
    }
    /**
     * Waits for `owner` to stop a shard it may still run (a former coordinator's hand-off, or a member in its
     * down-removal margin): the shard is not allocatable until the owner says it stopped or is removed.
     */
    awaitStop(shardId, owner) {
        if (this.options.state.isHandingOff(shardId))
            return;
        this.track(shardId, owner, 'handoff', []);
    }
    /** BeginHandOffAck. */
    acknowledged(from, shardId) {
        const handOff = this.options.state.handOff(shardId);
        if (handOff === undefined)
            return;
        handOff.acknowledged(from);
        this.advance(handOff);
    }
    /** ShardStopped: ends the hand-off only if it answers this very hand-off's HandOff (see HandOff.isEndedBy). */
    stopped(from, shardId, handOffId) {
        const handOff = this.options.state.handOff(shardId);
        if (handOff?.isEndedBy(from, handOffId))
            this.complete(handOff);
    }
    /** A region was removed: hand-offs from it are complete (its entities are gone), others stop waiting for it. */
    regionGone(region) {
        for (const handOff of this.options.state.handOffList()) {
            if (handOff.owner === region)
                this.complete(handOff);
            else if (handOff.acknowledged(region))
                this.advance(handOff);
        }
    }
    /**
     * Stops a copy of a shard homed elsewhere, with a HandOff of its own: an id no hand-off waits for, so its
     * ShardStopped changes nothing here.
     */
    stopCopy(region, shardId) {
        this.options.send(region, { type: 'HandOff', typeName: this.options.typeName, shardId, handOffId: this.ids.take() });
    }
    /** The retry tick: each hand-off's messages for its current phase again. */
    resend() {
        for (const handOff of this.options.state.handOffList())
            this.sendFor(handOff);
    }
    /** The coordinator stops: every hand-off is dropped with its timer. */
    stop() {
        this.options.state.handOffsAbandoned();
    }
    track(shardId, owner, phase, pendingAcks) {
        const { state, scheduler, timeoutMs, logger } = this.options;
        const handOff = new HandOff(shardId, this.ids.take(), owner, phase, pendingAcks, {
            scheduler,
            startedAtMs: scheduler.now(),
            timeoutMs,
            onTimeout: (timedOut) => this.timeOut(timedOut),
        });
        state.handOffStarted(handOff);
        this.counts.started++;
        logger.debug({ shardId, owner, phase }, 'hand-off started');
        this.sendFor(handOff);
    }
    /** Moves to the HandOff phase once every region stopped routing to the shard. */
    advance(handOff) {
        if (!handOff.readyToHandOff)
            return;
        handOff.enterHandOffPhase();
        if (this.options.state.isRegion(handOff.owner))
            this.sendFor(handOff);
        else
            this.complete(handOff);
    }
    complete(handOff) {
        const { state, logger, onFreed } = this.options;
        if (state.handOff(handOff.shardId) !== handOff)
            return;
        state.handOffCompleted(handOff);
        this.counts.completed++;
        this.options.onCompleted?.((this.options.scheduler.now() - handOff.startedAtMs) / 1000);
        logger.debug({ shardId: handOff.shardId, from: handOff.owner }, 'hand-off complete');
        onFreed(handOff.shardId);
    }
    /** The shard stays, and the regions that forgot its home learn it again. */
    timeOut(handOff) {
        const { state, logger, timeoutMs, typeName, send } = this.options;
        if (state.handOff(handOff.shardId) !== handOff)
            return;
        const { shardId, owner } = handOff;
        this.counts.timedOut++;
        logger.warn({ shardId, owner, timeoutMs }, 'hand-off timed out; shard stays');
        const region = state.handOffTimedOut(handOff);
        if (region === undefined)
            return;
        for (const to of state.registered())
            send(to, { type: 'ShardHome', typeName, shardId, region });
    }
    sendFor(handOff) {
        for (const { to, message } of handOff.messages(this.options.typeName))
            this.options.send(to, message);
    }
}
//# sourceMappingURL=hand-offs.js.map