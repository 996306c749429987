// Group commit: every write a node stages while a transaction is in flight goes into the next one, so a node
// runs one store transaction at a time however many entities it hosts (one per event-loop turn when idle, one
// per store round trip when busy). A key staged twice keeps its latest value; both callers learn the outcome.
// A failed transaction also fails the writes staged after it for the same keys: their values were computed
// on top of a state that never became durable, so committing them would make durable what was never acked.
import { EntityStoreError, type EntityStore, type EntityWrite, type ShardKey } from './entity-store.js';

/** A staged write's outcome: durable, or refused because a later host claimed its shard. */
export type WriteOutcome = 'committed' | 'fenced';

/** What the node's health and metrics read of its commits. */
export interface GroupCommitStats {
  /** Transactions that committed. */
  readonly commits: number;
  /** Writes made durable by them. */
  readonly writesCommitted: number;
  /** Writes refused by a later claim of their shard. */
  readonly writesFenced: number;
  /** Transactions that failed (the store was unavailable): their writes were never acknowledged. */
  readonly failures: number;
  /** Why the latest transaction failed, when it did (cleared by the next success). */
  readonly lastError: string | undefined;
}

/** Hooks of a group commit (metrics, logs). */
export interface GroupCommitOptions {
  /** Called after each transaction with its duration and how many writes it carried. */
  readonly onTransaction?: (durationMs: number, writes: number, ok: boolean) => void;
  /** Milliseconds, for durations; default performance.now. */
  readonly now?: () => number;
}

interface Staged {
  write: EntityWrite;
  readonly waiters: Array<{ resolve: (outcome: WriteOutcome) => void; reject: (error: Error) => void }>;
}

/** One node's group commit over its entity store: one transaction at a time, every staged write in the next. */
export class GroupCommit {
  private staged = new Map<string, Staged>();
  private inFlight = false;
  private scheduled = false;
  private readonly fencedEpochs = new Map<string, number>();
  private idleWaiters: Array<() => void> = [];
  private stats_: GroupCommitStats = {
    commits: 0,
    writesCommitted: 0,
    writesFenced: 0,
    failures: 0,
    lastError: undefined,
  };

  constructor(
    readonly store: EntityStore,
    private readonly options: GroupCommitOptions = {},
  ) {}

  stats(): GroupCommitStats {
    return this.stats_;
  }

  /** Stages a write for the next transaction; settles once that transaction did. */
  write(write: EntityWrite): Promise<WriteOutcome> {
    const fencedAt = this.fencedEpochs.get(shardKeyOf(write));
    if (fencedAt !== undefined && write.epoch <= fencedAt) return Promise.resolve('fenced');
    const key = `${write.typeName}\u0000${write.entityId}`;
    return new Promise<WriteOutcome>((resolve, reject) => {
      const staged = this.staged.get(key);
      if (staged === undefined) this.staged.set(key, { write, waiters: [{ resolve, reject }] });
      else {
        staged.write = write;
        staged.waiters.push({ resolve, reject });
      }
      this.schedule();
    });
  }

  /** Resolves once nothing is staged or in flight (a shard stopping waits for its last commits). */
  settled(): Promise<void> {
    if (!this.inFlight && this.staged.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private schedule(): void {
    if (this.inFlight || this.scheduled) return;
    this.scheduled = true;
    // The rest of this turn's writes join the transaction.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.inFlight || this.staged.size === 0) return;
    const batch = this.staged;
    this.staged = new Map();
    this.inFlight = true;
    const now = this.options.now ?? (() => performance.now());
    const started = now();
    try {
      const { fenced } = await this.store.commit([...batch.values()].map((entry) => entry.write));
      this.options.onTransaction?.(now() - started, batch.size, true);
      this.settle(batch, fenced);
    } catch (cause) {
      this.options.onTransaction?.(now() - started, batch.size, false);
      this.fail(batch, cause);
    } finally {
      this.inFlight = false;
      if (this.staged.size > 0) this.schedule();
      else this.wakeIdle();
    }
  }

  private wakeIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private settle(batch: Map<string, Staged>, fenced: ReadonlyArray<ShardKey>): void {
    const fencedKeys = new Set(fenced.map(shardKeyOf));
    let committed = 0;
    let refused = 0;
    for (const { write, waiters } of batch.values()) {
      const isFenced = fencedKeys.has(shardKeyOf(write));
      if (isFenced) {
        refused++;
        const key = shardKeyOf(write);
        this.fencedEpochs.set(key, Math.max(this.fencedEpochs.get(key) ?? 0, write.epoch));
      } else committed++;
      for (const waiter of waiters) waiter.resolve(isFenced ? 'fenced' : 'committed');
    }
    const { commits, writesCommitted, writesFenced, failures } = this.stats_;
    this.stats_ = {
      commits: commits + 1,
      writesCommitted: writesCommitted + committed,
      writesFenced: writesFenced + refused,
      failures,
      lastError: undefined,
    };
  }

  private fail(batch: Map<string, Staged>, cause: unknown): void {
    const error =
      cause instanceof EntityStoreError ? cause : new EntityStoreError(`commit failed: ${String(cause)}`, { cause });
    // Writes staged meanwhile for the same keys were computed on top of the failed ones: they fail too.
    for (const key of batch.keys()) {
      const later = this.staged.get(key);
      if (later === undefined) continue;
      this.staged.delete(key);
      for (const waiter of later.waiters) waiter.reject(error);
    }
    for (const { waiters } of batch.values()) for (const waiter of waiters) waiter.reject(error);
    this.stats_ = { ...this.stats_, failures: this.stats_.failures + 1, lastError: error.message };
  }
}

function shardKeyOf(shard: ShardKey): string {
  return `${shard.shardId} ${shard.typeName}`;
}
