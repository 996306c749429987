// A PlacementStore whose replica survives a restart: it is rebuilt from a PlacementPersistence before it is
// used, appends every update it makes or applies, snapshots after compactions (and compacts, then snapshots,
// once its log is long, so what is on disk is the compacted state plus a short log), and tells the replicator
// when what it would send is durable. The rule after a failed commit: this replica refuses writes and
// sends nothing of its own (pushes and sync answers) until the process restarts from what is on disk, so
// a write that was rejected never reaches another node; reads keep working.
import { PlacementStore, type RemoveOptions } from '../store.js';
import type { PlacementStoreOptions } from '../store-options.js';
import type { Hlc } from '../hlc.js';
import { silentLog, type PlacementLog } from '../log.js';
import type { Placement } from '../snapshot.js';
import type { SlotMeta } from '../slot-meta.js';
import { EMPTY_STATE_VECTOR, generationOf } from '../wire.js';
import { LOST_FILES_HINT } from './file-identity.js';
import { replayBatches, type ReplayBatch } from './replay-batches.js';
import { PersistenceError, recoveryHint, type PersistedState, type PlacementPersistence } from './persistence.js';
import type { PlacementDurability, PlacementStorageHealth } from '../durability.js';

/**
 * Options of DurablePlacementStore.open: the store's own options plus where it keeps its data and when it snapshots.
 */
export interface DurablePlacementStoreOptions extends PlacementStoreOptions {
  /** Where the replica is kept: openLmdbPersistence(dir) for a real directory. The store never closes it. */
  readonly persistence: PlacementPersistence;
  /**
   * Writes a snapshot (dropping the log in the same commit) once this many records were appended since the
   * last one, so a restart replays a bounded log. Default DEFAULT_SNAPSHOT_AFTER_RECORDS. A snapshot the
   * log's length calls for is taken right after a compaction of the store, so it is the compacted state.
   */
  readonly snapshotAfterRecords?: number;
  /**
   * Also writes a snapshot once the log since the last one holds more bytes than this and than half that
   * snapshot (the compacted state). The log is stored as it is and the snapshot compressed, so this keeps
   * the data on disk, old and new snapshot included while one replaces the other, within about twice the
   * compacted state; a lower bound means more frequent compactions. Default DEFAULT_SNAPSHOT_AFTER_LOG_BYTES.
   */
  readonly snapshotAfterLogBytes?: number;
}

/** Log records after which the durable store writes a snapshot and truncates its log, bounding restart time. */
export const DEFAULT_SNAPSHOT_AFTER_RECORDS = 10_000;
/** Log bytes after which the durable store writes a snapshot, whichever of this and the record count comes first. */
export const DEFAULT_SNAPSHOT_AFTER_LOG_BYTES = 64 * 1024;

/**
 * A PlacementStore that commits every local write to a PlacementPersistence before acknowledging it, and is rebuilt
 * from it at start, so acknowledged pins survive a full-cluster restart. Open it with `DurablePlacementStore.open`.
 */
export class DurablePlacementStore extends PlacementStore implements PlacementDurability {
  override readonly durability: PlacementDurability = this;
  readonly persistence: PlacementPersistence;
  /** True when the replica was rebuilt from a snapshot or log records: it may take writes at once. */
  readonly restored: boolean;
  private readonly snapshotAfterRecords: number;
  private readonly storageLog: PlacementLog;
  private readonly snapshotAfterLogBytes: number;
  private snapshotBytes: number;
  private logBytesSinceSnapshot = 0;
  // The latest append or snapshot: commits are in order, so once it resolved everything before it is durable.
  private last: Promise<void> | undefined;
  private inFlight = 0;
  private recordsSinceSnapshot = 0;
  private snapshotGeneration: number;
  private failure: PersistenceError | undefined;
  private replaying = false;
  // A peer's update of the previous generation was folded into the base: no log record replays that.
  private foldedLate = false;

  /**
   * Loads what `options.persistence` holds, rebuilds the replica from it, and returns the store. Throws
   * PersistenceError 'corrupt' (with how to recover) when a record cannot be applied.
   */
  static async open(options: DurablePlacementStoreOptions): Promise<DurablePlacementStore> {
    const persistence = options?.persistence;
    if (
      typeof persistence?.load !== 'function' ||
      typeof persistence.append !== 'function' ||
      typeof persistence.writeSnapshot !== 'function'
    ) {
      throw new PersistenceError(
        'invalid_option',
        'persistence must be a PlacementPersistence (openLmdbPersistence or memoryPersistence)',
      );
    }
    const state = await persistence.load();
    const store = new DurablePlacementStore(options, state.snapshot !== undefined || state.log.length > 0);
    store.replay(state);
    return store;
  }

  private readonly commitListeners = new Set<(seconds: number) => void>();

  private constructor(options: DurablePlacementStoreOptions, restored: boolean) {
    const { persistence, snapshotAfterRecords, snapshotAfterLogBytes, ...storeOptions } = options;
    super(storeOptions);
    this.persistence = persistence;
    this.restored = restored;
    this.storageLog = storeOptions.log ?? silentLog;
    this.snapshotAfterRecords = positive(
      'snapshotAfterRecords',
      snapshotAfterRecords ?? DEFAULT_SNAPSHOT_AFTER_RECORDS,
    );
    this.snapshotAfterLogBytes = positive(
      'snapshotAfterLogBytes',
      snapshotAfterLogBytes ?? DEFAULT_SNAPSHOT_AFTER_LOG_BYTES,
    );
    this.snapshotBytes = persistence.stats().snapshotBytes;
    this.snapshotGeneration = this.generation;
    // Registered before any replicator's listener: an update's append is issued before anyone sees it.
    this.onUpdate((update, origin) => {
      if (origin === 'local') this.persist(update);
    });
    // Files deleted or replaced under a running node: noticed between writes too, so health says so and
    // the next write is refused rather than committed into a file nobody reads again.
    persistence.onFileProblem?.((problem) => this.fail(new Error(`${problem}; ${LOST_FILES_HINT}`)));
  }

  /** Why storage failed, or undefined while it works. */
  get storageFailure(): PersistenceError | undefined {
    return this.failure;
  }

  override set(typeName: string, shardId: number, target: string, meta?: SlotMeta): Placement {
    return this.writing(() => super.set(typeName, shardId, target, meta));
  }

  override setMany(typeName: string, entries: Parameters<PlacementStore['setMany']>[1]): Placement[] {
    return this.writing(() => super.setMany(typeName, entries));
  }

  override remove(typeName: string, shardId: number, options?: RemoveOptions): Hlc {
    return this.writing(() => super.remove(typeName, shardId, options));
  }

  protected override get ownData(): boolean {
    return this.replaying;
  }

  /** Applies a peer's update and appends its bytes (they carry base merges and generation moves). */
  override applyUpdate(update: Uint8Array): void {
    super.applyUpdate(update);
    // Its writer holds it durably: with storage failed it is still applied (fresh reads), not stored.
    if (!this.replaying && this.failure === undefined) {
      this.persist(update);
      // Replayed after a snapshot of this generation, such a record would be stale; a snapshot holds its effect.
      if ((generationOf(update) ?? this.generation) < this.generation) this.foldedLate = true;
    }
    this.maybeSnapshot();
  }

  override compact(): number {
    const generation = super.compact();
    this.maybeSnapshot();
    return generation;
  }

  /**
   * Resolves once every update this replica emitted so far is durable (group commit: concurrent callers
   * share one commit). Rejects with PersistenceError 'storage_unavailable' when storage failed.
   */
  flush(): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return (this.last ?? Promise.resolve()).then(() => {
      if (this.failure !== undefined) throw this.failure;
    });
  }

  /** Runs `send` once everything emitted so far is durable; never, once storage failed. */
  afterCommit(send: () => void): void {
    if (this.failure !== undefined) return;
    const last = this.last;
    if (this.inFlight === 0 || last === undefined) return send();
    last.then(
      () => this.failure === undefined && send(),
      () => undefined,
    );
  }

  /** As afterCommit, for a send that encodes the replica when it runs: waits until nothing is uncommitted. */
  whenIdle(send: () => void): void {
    if (this.failure !== undefined) return;
    const last = this.last;
    if (this.inFlight === 0 || last === undefined) return send();
    last.then(
      () => this.whenIdle(send),
      () => undefined,
    );
  }

  storageHealth(): PlacementStorageHealth {
    return { ...this.persistence.stats(), restored: this.restored, failure: this.failure?.message ?? null };
  }

  private writing<T>(write: () => T): T {
    if (this.failure !== undefined) throw this.failure;
    const result = write();
    this.maybeSnapshot();
    return result;
  }

  private persist(update: Uint8Array): void {
    this.recordsSinceSnapshot++;
    this.logBytesSinceSnapshot += update.length;
    this.track(this.failure === undefined ? this.persistence.append(update) : Promise.reject(this.failure));
  }

  /**
   * After a compaction (ours or one a peer's update moved us to), a late update folded into the base, or
   * once the log is long: a snapshot. A long log is first compacted away: the document's history (every
   * overwritten item stays a Yjs struct) is what makes a snapshot large and slow to load, and the base
   * holds only each shard's winner. So the disk holds the compacted state plus a log no longer than it
   * (or snapshotAfterLogBytes), and a restart decodes a base and replays that much.
   */
  private maybeSnapshot(): void {
    if (this.replaying || this.failure !== undefined) return;
    // Not from inside a change listener: the write that called back may still be settling (the store's rule).
    const logIsLong =
      !this.notifying &&
      (this.recordsSinceSnapshot >= this.snapshotAfterRecords ||
        this.logBytesSinceSnapshot > Math.max(this.snapshotAfterLogBytes, this.snapshotBytes / 2));
    if (this.generation === this.snapshotGeneration && !logIsLong && !this.foldedLate) return;
    if (logIsLong && this.stats().documentItems > 0) super.compact();
    const snapshot = this.encodeDiff(EMPTY_STATE_VECTOR);
    this.foldedLate = false;
    this.snapshotGeneration = this.generation;
    this.recordsSinceSnapshot = 0;
    this.logBytesSinceSnapshot = 0;
    this.snapshotBytes = snapshot.length;
    this.track(this.persistence.writeSnapshot(snapshot));
  }

  /** Calls `listener` with the seconds each successful append or snapshot took to commit (metrics). */
  onCommitted(listener: (seconds: number) => void): () => void {
    this.commitListeners.add(listener);
    return () => this.commitListeners.delete(listener);
  }

  private track(write: Promise<void>): void {
    this.inFlight++;
    const started = performance.now();
    const done = write.then(
      () => {
        this.inFlight--;
        const seconds = (performance.now() - started) / 1000;
        for (const listener of this.commitListeners) listener(seconds);
      },
      (error: unknown) => {
        this.inFlight--;
        this.fail(error);
        throw this.failure;
      },
    );
    // Every caller of flush() gets the rejection; this copy only keeps it from being reported as unhandled.
    done.catch(() => undefined);
    this.last = done;
  }

  private fail(error: unknown): void {
    if (this.failure !== undefined) return;
    const reason = error instanceof Error ? error.message : String(error);
    this.failure = new PersistenceError(
      'storage_unavailable',
      `placement storage failed (${reason}): this node refuses placement writes and stops sending its placements ` +
        'until it is restarted; reads still work and other nodes take writes',
      { cause: error },
    );
    try {
      this.storageLog({ level: 'warn', message: this.failure.message, details: { error } });
    } catch {
      // A failing log sink must not stop the failure from being recorded.
    }
  }

  private replay(state: PersistedState): void {
    const where = this.persistence.stats().path ?? 'the placement data';
    const records = [...(state.snapshot === undefined ? [] : [state.snapshot]), ...state.log];
    const applyRecord = (i: number): void => {
      try {
        this.applyUpdate(records[i] as Uint8Array);
      } catch (cause) {
        const which =
          state.snapshot !== undefined && i === 0
            ? 'the snapshot'
            : `log record ${state.snapshot === undefined ? i + 1 : i}`;
        const reason = cause instanceof Error ? cause.message : String(cause);
        throw new PersistenceError(
          'corrupt',
          `${which} in ${where} cannot be applied: ${reason}. ${recoveryHint(where)}`,
          { cause },
        );
      }
    };
    this.replaying = true;
    try {
      // The snapshot is one update already: only the log's records are merged.
      const skip = state.snapshot === undefined ? 0 : 1;
      if (skip === 1) applyRecord(0);
      let batches: ReplayBatch[];
      try {
        batches = replayBatches(state.log, state.snapshot).map(({ bytes, first, last }) => ({
          bytes,
          first: first + skip,
          last: last + skip,
        }));
      } catch {
        batches = state.log.map((bytes, i) => ({ bytes, first: i + skip, last: i + skip }));
      }
      for (const { bytes, first, last } of batches) {
        if (first === last) {
          applyRecord(first);
          continue;
        }
        try {
          this.applyUpdate(bytes);
        } catch {
          // A merged batch that does not apply is replayed record by record, so the error names the record
          // (a rejected update changes nothing, so the retry starts from a clean state).
          for (let i = first; i <= last; i++) applyRecord(i);
        }
      }
    } finally {
      this.replaying = false;
    }
    this.snapshotGeneration = this.generation;
    this.recordsSinceSnapshot = state.log.length;
    this.logBytesSinceSnapshot = state.log.reduce((sum, record) => sum + record.length, 0);
    // A long log (or a compaction during the replay) is folded now, so the next restart replays little.
    this.maybeSnapshot();
  }
}

function positive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new PersistenceError('invalid_option', `${name} must be a positive integer, got ${String(value)}`);
  return value;
}

/** Resolves once `store`'s writes so far are durable: at once for an in-memory PlacementStore. */
export function whenDurable(store: PlacementStore): Promise<void> {
  return store.durability?.flush() ?? Promise.resolve();
}
