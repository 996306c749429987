// What both PlacementPersistence implementations share: every write goes through one GroupCommitQueue and
// the queue's counters are their stats. An implementation says only how it loads, commits a plan, closes,
// and where its data lives.
import { GroupCommitQueue, type CommitPlan, type QueueState } from './persistence-queue.js';
import type { PersistedState, PlacementPersistence } from './persistence.js';
import type { PersistenceStats } from '../durability.js';

/** Sizes of what is committed: the snapshot (when there is one) and the log records after it. */
export interface CommittedSizes {
  readonly snapshot: { readonly coversBelow: number; readonly bytes: number } | undefined;
  readonly log: ReadonlyArray<{ readonly sequence: number; readonly bytes: number }>;
}

/** Where a queue over committed data starts: sequences go on after the snapshot and the last log record. */
export function queueStateOf({ snapshot, log }: CommittedSizes): QueueState {
  const last = log[log.length - 1];
  return {
    nextSequence: Math.max(snapshot?.coversBelow ?? 0, last === undefined ? 0 : last.sequence + 1),
    logRecords: log.length,
    logBytes: log.reduce((sum, { bytes }) => sum + bytes, 0),
    snapshotBytes: snapshot?.bytes ?? 0,
  };
}

export abstract class QueuedPersistence implements PlacementPersistence {
  protected readonly queue: GroupCommitQueue;

  /** `where` names the data in error messages; `now` stamps lastCommitAt. */
  protected constructor(
    where: string,
    now: () => number,
    committed: CommittedSizes,
    protected readonly maxRecordBytes: number,
  ) {
    this.queue = new GroupCommitQueue(async (plan) => this.commit(plan), now, where, queueStateOf(committed));
  }

  abstract load(): Promise<PersistedState>;

  abstract close(): Promise<void>;

  /** Stores all of the plan, or none of it and throws. */
  protected abstract commit(plan: CommitPlan): Promise<void> | void;

  /** The data directory (null in memory) and the size of its files. */
  protected abstract storage(): {
    readonly path: string | null;
    readonly bytesOnDisk: number;
    readonly fileProblem: string | null;
  };

  append(update: Uint8Array): Promise<void> {
    return this.queue.enqueue('append', update, this.maxRecordBytes);
  }

  writeSnapshot(snapshot: Uint8Array): Promise<void> {
    return this.queue.enqueue('snapshot', snapshot, this.maxRecordBytes);
  }

  stats(): PersistenceStats {
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
