// What both PlacementPersistence implementations share: every write goes through one GroupCommitQueue and
// the queue's counters are their stats. An implementation says only how it loads, commits a plan, closes,
// and where its data lives.
import { GroupCommitQueue } from './persistence-queue.js';
/** Where a queue over committed data starts: sequences go on after the snapshot and the last log record. */
export function queueStateOf({ snapshot, log }) {
    const last = log[log.length - 1];
    return {
        nextSequence: Math.max(snapshot?.coversBelow ?? 0, last === undefined ? 0 : last.sequence + 1),
        logRecords: log.length,
        logBytes: log.reduce((sum, { bytes }) => sum + bytes, 0),
        snapshotBytes: snapshot?.bytes ?? 0,
    };
}
export class QueuedPersistence {
    maxRecordBytes;
    queue;
    /** `where` names the data in error messages; `now` stamps lastCommitAt. */
    constructor(where, now, committed, maxRecordBytes) {
        this.maxRecordBytes = maxRecordBytes;
        this.queue = new GroupCommitQueue(async (plan) => this.commit(plan), now, where, queueStateOf(committed));
    }
    append(update) {
        return this.queue.enqueue('append', update, this.maxRecordBytes);
    }
    writeSnapshot(snapshot) {
        return this.queue.enqueue('snapshot', snapshot, this.maxRecordBytes);
    }
    stats() {
        const q = this.queue;
        return {
            ...this.storage(),
            lastCommitAt: q.lastCommitAt,
            logRecordsSinceSnapshot: q.logRecords,
            logBytesSinceSnapshot: q.logBytes,
            snapshotBytes: q.snapshotBytes,
            commits: q.commits,
            appends: q.appends,
            failedCommits: q.failedCommits,
            pendingWrites: q.pendingWrites,
            needsSnapshot: q.needsSnapshot,
        };
    }
}
//# sourceMappingURL=queued-persistence.js.map