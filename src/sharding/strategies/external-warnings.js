/**
 * Dedupe policy: a warning about shard S is emitted when S's (target, reason) differs from the last one
 * reported for S; it is not repeated while that situation lasts. The record is dropped when the pin is
 * honoured, moved, changed, expired or removed, so the same problem coming back later is reported again.
 * Memory is bounded by the number of pinned shards with a live problem.
 */
export class WarningLog {
    sink;
    reported = new Map();
    constructor(sink) {
        this.sink = sink;
    }
    report(shardId, target, reason, message, extra) {
        const situation = `${target}\u0000${reason}`;
        if (this.reported.get(shardId) === situation)
            return;
        this.reported.set(shardId, situation);
        this.emit(message, { shardId, target, reason, ...extra });
    }
    forget(shardId) {
        this.reported.delete(shardId);
    }
    /** Drops records whose pin is gone, expired or now names another target. */
    prune(targetOf) {
        for (const [shardId, situation] of this.reported) {
            const target = targetOf(shardId);
            if (target === undefined || !situation.startsWith(`${target}\u0000`))
                this.reported.delete(shardId);
        }
    }
    emit(message, details) {
        if (this.sink === undefined)
            return;
        try {
            this.sink(message, details);
        }
        catch {
            // A failing logger must not turn a placement decision into an exception.
        }
    }
}
//# sourceMappingURL=external-warnings.js.map