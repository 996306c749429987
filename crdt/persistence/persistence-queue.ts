// Group commit shared by both persistence implementations: appends and snapshots queue up while one commit
// is in progress and go to disk together in the next, in call order, so durability costs one commit per
// burst of writers rather than one per write. Also keeps the counters of PersistenceStats.
import { PersistenceError, checkedCopy } from './persistence.js';

/** What one commit must make durable, all or nothing. */
export interface CommitPlan {
  /** A snapshot replacing the current one and every log record on disk. */
  readonly snapshot: { readonly bytes: Uint8Array; readonly coversBelow: number } | undefined;
  /** Log records to add (after the snapshot, when there is one), ascending sequence. */
  readonly appends: ReadonlyArray<{ readonly sequence: number; readonly bytes: Uint8Array }>;
}

export type CommitFunction = (plan: CommitPlan) => Promise<void>;

interface Pending {
  readonly kind: 'append' | 'snapshot';
  readonly bytes: Uint8Array;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

export interface QueueState {
  /** The sequence number the next log record gets. */
  readonly nextSequence: number;
  readonly logRecords: number;
  readonly logBytes: number;
  readonly snapshotBytes: number;
}

export class GroupCommitQueue {
  private pending: Pending[] = [];
  private running: Promise<void> | undefined;
  private nextSequence: number;
  private lostAppend: string | undefined;
  private closing = false;
  logRecords: number;
  logBytes: number;
  snapshotBytes: number;
  commits = 0;
  appends = 0;
  failedCommits = 0;
  lastCommitAt: number | null = null;

  constructor(
    private readonly commit: CommitFunction,
    private readonly now: () => number,
    private readonly where: string,
    initial: QueueState,
  ) {
    this.nextSequence = initial.nextSequence;
    this.logRecords = initial.logRecords;
    this.logBytes = initial.logBytes;
    this.snapshotBytes = initial.snapshotBytes;
  }

  get pendingWrites(): number {
    return this.pending.length;
  }

  get needsSnapshot(): boolean {
    return this.lostAppend !== undefined;
  }

  /** Queues a private copy of `bytes` (checked against `maxRecordBytes`) for the next commit; resolves once durable. */
  enqueue(kind: Pending['kind'], bytes: unknown, maxRecordBytes: number): Promise<void> {
    if (this.closing)
      return Promise.reject(new PersistenceError('closed', `placement persistence at ${this.where} is closed`));
    let copy: Uint8Array;
    try {
      copy = checkedCopy(bytes, kind === 'append' ? 'update' : 'snapshot', maxRecordBytes);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ kind, bytes: copy, resolve, reject });
      // setImmediate rather than a microtask: writers woken by the same I/O poll phase join this commit.
      this.running ??= new Promise<void>((done) => setImmediate(() => void this.drain().then(done)));
    });
  }

  /** Stops accepting writes and waits until everything accepted is committed or failed. */
  async close(): Promise<void> {
    this.closing = true;
    await this.running;
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0) {
      const group = this.pending;
      this.pending = [];
      await this.commitGroup(group);
    }
    this.running = undefined;
  }

  private async commitGroup(group: readonly Pending[]): Promise<void> {
    let last = -1;
    group.forEach((entry, i) => {
      if (entry.kind === 'snapshot') last = i;
    });
    // Appends before the last snapshot are in it: acknowledged with it, never written to the log.
    const covered = group.slice(0, last + 1);
    const rest = group.slice(last + 1);
    if (last < 0 && this.lostAppend !== undefined) {
      const error = new PersistenceError(
        'storage_unavailable',
        `placement persistence at ${this.where} refuses appends until a snapshot is written: ${this.lostAppend}`,
      );
      for (const entry of rest) entry.reject(error);
      return;
    }
    const snapshot = last < 0 ? undefined : (group[last] as Pending);
    const first = this.nextSequence;
    const appends = rest.map((entry, i) => ({ sequence: first + i, bytes: entry.bytes }));
    try {
      await this.commit({ snapshot: snapshot && { bytes: snapshot.bytes, coversBelow: first }, appends });
    } catch (cause) {
      this.failedCommits++;
      const reason = cause instanceof Error ? cause.message : String(cause);
      if (group.some((entry) => entry.kind === 'append')) this.lostAppend = `a commit failed (${reason})`;
      const error = new PersistenceError(
        'storage_unavailable',
        `placement persistence at ${this.where}: commit failed: ${reason}`,
        { cause },
      );
      for (const entry of group) entry.reject(error);
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
    for (const { bytes } of appends) this.logBytes += bytes.length;
    this.commits++;
    this.lastCommitAt = this.now();
    for (const entry of [...covered, ...rest]) {
      if (entry.kind === 'append') this.appends++;
      entry.resolve();
    }
  }
}
