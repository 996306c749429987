// Group commit: every write a node stages while a transaction is in flight goes into the next one, so a node
// runs one store transaction at a time however many entities it hosts (one per event-loop turn when idle, one
// per store round trip when busy). A key staged twice keeps its latest value; both callers learn the outcome.
// A failed transaction also fails the writes staged after it for the same keys: their values were computed
// on top of a state that never became durable, so committing them would make durable what was never acked.
// An epoch check (an answer that left its entity's state as committed) joins the next transaction the same way,
// and is read by the store's `checkEpochs` with it: nothing is written for it.
import { ActorTsError } from '../errors.js';
import {
  EntityStoreError,
  type CommitResult,
  type EntityStore,
  type EntityWrite,
  type EpochCheck,
  type ShardKey,
} from './entity-store.js';

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
  /** Epoch checks that found their shard still theirs: answers whose state was unchanged, confirmed unwritten. */
  readonly checksConfirmed: number;
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

type Waiter = { resolve: (outcome: WriteOutcome) => void; reject: (error: Error) => void };

interface Staged {
  write: EntityWrite;
  readonly waiters: Waiter[];
}

interface StagedCheck {
  readonly check: EpochCheck;
  readonly waiters: Waiter[];
}

/** What one transaction carries: writes by (type, entity), epoch checks by (shard, epoch). */
interface Batch {
  readonly writes: Map<string, Staged>;
  readonly checks: Map<string, StagedCheck>;
}

/** One node's group commit over its entity store: one transaction at a time, every staged write in the next. */
export class GroupCommit {
  private staged: Batch = emptyBatch();
  private inFlight = false;
  private scheduled = false;
  private readonly fencedEpochs = new Map<string, number>();
  private idleWaiters: Array<() => void> = [];
  private stats_: GroupCommitStats = {
    commits: 0,
    writesCommitted: 0,
    writesFenced: 0,
    checksConfirmed: 0,
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

  /** Whether the store checks an epoch without a write (`EntityStore.checkEpochs`): `check` needs it. */
  get checksEpochs(): boolean {
    return this.store.checkEpochs !== undefined;
  }

  /** Stages a write for the next transaction; settles once that transaction did. */
  write(write: EntityWrite): Promise<WriteOutcome> {
    if (this.knownFenced(write)) return Promise.resolve('fenced');
    const key = `${write.typeName}\u0000${write.entityId}`;
    return new Promise<WriteOutcome>((resolve, reject) => {
      const staged = this.staged.writes.get(key);
      if (staged === undefined) this.staged.writes.set(key, { write, waiters: [{ resolve, reject }] });
      else {
        staged.write = write;
        staged.waiters.push({ resolve, reject });
      }
      this.schedule();
    });
  }

  /**
   * Stages a check that the shard's epoch is still `check.epoch`, read by the next transaction (so after this
   * call): 'committed' when it is, 'fenced' when a later claim exists. Writes nothing; needs `checksEpochs`.
   */
  check(check: EpochCheck): Promise<WriteOutcome> {
    if (!this.checksEpochs) {
      const why = `the entity store in ${this.store.where} cannot check an epoch alone (no checkEpochs)`;
      return Promise.reject(new ActorTsError('invalid_argument', why));
    }
    if (this.knownFenced(check)) return Promise.resolve('fenced');
    const key = `${shardKeyOf(check)} ${check.epoch}`;
    return new Promise<WriteOutcome>((resolve, reject) => {
      const staged = this.staged.checks.get(key);
      if (staged === undefined) this.staged.checks.set(key, { check, waiters: [{ resolve, reject }] });
      else staged.waiters.push({ resolve, reject });
      this.schedule();
    });
  }

  /** Resolves once nothing is staged or in flight (a shard stopping waits for its last commits). */
  settled(): Promise<void> {
    if (!this.inFlight && isEmpty(this.staged)) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private knownFenced(check: EpochCheck): boolean {
    const fencedAt = this.fencedEpochs.get(shardKeyOf(check));
    return fencedAt !== undefined && check.epoch <= fencedAt;
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
    if (this.inFlight || isEmpty(this.staged)) return;
    const batch = this.staged;
    this.staged = emptyBatch();
    this.inFlight = true;
    const now = this.options.now ?? (() => performance.now());
    const started = now();
    // The checks are read beside the writes and settle on their own: a committed write stays acknowledged
    // whatever became of a check, and a check's failure fails no write.
    const [written, checked] = await Promise.allSettled([this.commitWrites(batch), this.readEpochs(batch)]);
    const size = batch.writes.size;
    if (size > 0) this.options.onTransaction?.(now() - started, size, written.status === 'fulfilled');
    const counts = { ...this.stats_, lastError: undefined as string | undefined };
    if (written.status === 'fulfilled') this.settleWrites(batch, written.value.fenced, counts);
    else counts.lastError = this.failWrites(batch, written.reason);
    if (checked.status === 'fulfilled') this.settleChecks(batch, checked.value.fenced, counts);
    else counts.lastError = failAll(batch.checks, storeError(checked.reason, 'epoch check'));
    if (counts.lastError !== undefined) counts.failures++;
    this.stats_ = counts;
    this.inFlight = false;
    if (!isEmpty(this.staged)) this.schedule();
    else this.wakeIdle();
  }

  private async commitWrites(batch: Batch): Promise<CommitResult> {
    if (batch.writes.size === 0) return { fenced: [] };
    return this.store.commit([...batch.writes.values()].map((entry) => entry.write));
  }

  private async readEpochs(batch: Batch): Promise<CommitResult> {
    if (batch.checks.size === 0 || this.store.checkEpochs === undefined) return { fenced: [] };
    return this.store.checkEpochs([...batch.checks.values()].map((entry) => entry.check));
  }

  private wakeIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private settleWrites(batch: Batch, fenced: ReadonlyArray<ShardKey>, counts: Mutable<GroupCommitStats>): void {
    const fencedKeys = keysOf(fenced);
    for (const { write, waiters } of batch.writes.values()) {
      const result = this.outcome(write, fencedKeys);
      if (result === 'committed') counts.writesCommitted++;
      else counts.writesFenced++;
      for (const waiter of waiters) waiter.resolve(result);
    }
    if (batch.writes.size > 0) counts.commits++;
  }

  private settleChecks(batch: Batch, fenced: ReadonlyArray<ShardKey>, counts: Mutable<GroupCommitStats>): void {
    const fencedKeys = keysOf(fenced);
    for (const { check, waiters } of batch.checks.values()) {
      const result = this.outcome(check, fencedKeys);
      if (result === 'committed') counts.checksConfirmed++;
      for (const waiter of waiters) waiter.resolve(result);
    }
  }

  /** 'fenced' when the store named the shard, remembered: later writes under that epoch are fenced at once. */
  private outcome(check: EpochCheck, fencedKeys: ReadonlySet<string> | undefined): WriteOutcome {
    if (fencedKeys === undefined) return 'committed';
    const key = shardKeyOf(check);
    if (!fencedKeys.has(key)) return 'committed';
    this.fencedEpochs.set(key, Math.max(this.fencedEpochs.get(key) ?? 0, check.epoch));
    return 'fenced';
  }

  /** Fails the batch's writes, and those staged meanwhile for the same keys; the error's message. */
  private failWrites(batch: Batch, cause: unknown): string {
    const error = storeError(cause, 'commit');
    // Writes staged meanwhile for the same keys were computed on top of the failed ones: they fail too.
    for (const key of batch.writes.keys()) {
      const later = this.staged.writes.get(key);
      if (later === undefined) continue;
      this.staged.writes.delete(key);
      for (const waiter of later.waiters) waiter.reject(error);
    }
    return failAll(batch.writes, error);
  }
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function storeError(cause: unknown, what: 'commit' | 'epoch check'): EntityStoreError {
  return cause instanceof EntityStoreError
    ? cause
    : new EntityStoreError(`${what} failed: ${String(cause)}`, { cause });
}

/** Rejects every waiter of `staged` with `error`; its message. */
function failAll(staged: Map<string, { readonly waiters: Waiter[] }>, error: EntityStoreError): string {
  for (const { waiters } of staged.values()) for (const waiter of waiters) waiter.reject(error);
  return error.message;
}

function emptyBatch(): Batch {
  return { writes: new Map(), checks: new Map() };
}

function isEmpty(batch: Batch): boolean {
  return batch.writes.size === 0 && batch.checks.size === 0;
}

/** The fenced shards' keys, looked up once per entry; undefined when none was (the common case: no key built). */
function keysOf(fenced: ReadonlyArray<ShardKey>): ReadonlySet<string> | undefined {
  return fenced.length === 0 ? undefined : new Set(fenced.map(shardKeyOf));
}

function shardKeyOf(shard: ShardKey): string {
  return `${shard.shardId} ${shard.typeName}`;
}
