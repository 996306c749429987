// Group commit shared by both persistence implementations: appends and snapshots queue up while one commit
// is in progress and go to disk together in the next, in call order, so durability costs one commit per
// burst of writers rather than one per write. Also keeps the counters of PersistenceStats.
import { PersistenceError, checkedCopy } from './persistence.js';
export class GroupCommitQueue {
    commit;
    now;
    where;
    pending = [];
    running;
    nextSequence;
    lostAppend;
    closing = false;
    logRecords;
    logBytes;
    snapshotBytes;
    commits = 0;
    appends = 0;
    failedCommits = 0;
    lastCommitAt = null;
    constructor(commit, now, where, initial) {
        this.commit = commit;
        this.now = now;
        this.where = where;
        this.nextSequence = initial.nextSequence;
        this.logRecords = initial.logRecords;
        this.logBytes = initial.logBytes;
        this.snapshotBytes = initial.snapshotBytes;
    }
    get pendingWrites() {
        return this.pending.length;
    }
    get needsSnapshot() {
        return this.lostAppend !== undefined;
    }
    /** Queues a private copy of `bytes` (checked against `maxRecordBytes`) for the next commit; resolves once durable. */
    enqueue(kind, bytes, maxRecordBytes) {
        if (this.closing)
            return Promise.reject(new PersistenceError('closed', `placement persistence at ${this.where} is closed`));
        let copy;
        try {
            copy = checkedCopy(bytes, kind === 'append' ? 'update' : 'snapshot', maxRecordBytes);
        }
        catch (error) {
            return Promise.reject(error);
        }
        return new Promise((resolve, reject) => {
            this.pending.push({ kind, bytes: copy, resolve, reject });
            // setImmediate rather than a microtask: writers woken by the same I/O poll phase join this commit.
            this.running ??= new Promise((done) => setImmediate(() => void this.drain().then(done)));
        });
    }
    /** Stops accepting writes and waits until everything accepted is committed or failed. */
    async close() {
        this.closing = true;
        await this.running;
    }
    async drain() {
        while (this.pending.length > 0) {
            const group = this.pending;
            this.pending = [];
            await this.commitGroup(group);
        }
        this.running = undefined;
    }
    async commitGroup(group) {
        let last = -1;
        group.forEach((entry, i) => {
            if (entry.kind === 'snapshot')
                last = i;
        });
        // Appends before the last snapshot are in it: acknowledged with it, never written to the log.
        const covered = group.slice(0, last + 1);
        const rest = group.slice(last + 1);
        if (last < 0 && this.lostAppend !== undefined) {
            const error = new PersistenceError('storage_unavailable', `placement persistence at ${this.where} refuses appends until a snapshot is written: ${this.lostAppend}`);
            for (const entry of rest)
                entry.reject(error);
            return;
        }
        const snapshot = last < 0 ? undefined : group[last];
        const first = this.nextSequence;
        const appends = rest.map((entry, i) => ({ sequence: first + i, bytes: entry.bytes }));
        try {
            await this.commit({ snapshot: snapshot && { bytes: snapshot.bytes, coversBelow: first }, appends });
        }
        catch (cause) {
            this.failedCommits++;
            const reason = cause instanceof Error ? cause.message : String(cause);
            if (group.some((entry) => entry.kind === 'append'))
                this.lostAppend = `a commit failed (${reason})`;
            const error = new PersistenceError('storage_unavailable', `placement persistence at ${this.where}: commit failed: ${reason}`, { cause });
            for (const entry of group)
                entry.reject(error);
            return;
        }
        this.nextSequence = first + appends.length;
        if (snapshot !== undefined) {
            this.lostAppend = undefined;
            this.snapshotBytes = snapshot.bytes.length;
            this.logRecords = 0;
            this.logBytes = 0;
        }
        this.logRecords += appends.length;
        for (const { bytes } of appends)
            this.logBytes += bytes.length;
        this.commits++;
        this.lastCommitAt = this.now();
        for (const entry of [...covered, ...rest]) {
            if (entry.kind === 'append')
                this.appends++;
            entry.resolve();
        }
    }
}
//# sourceMappingURL=persistence-queue.js.map