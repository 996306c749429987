// The durability seam of the placement store: whether what a replica holds reaches a disk, and how a caller
// waits for it. An in-memory store has none (`store.durability` is undefined); a DurablePlacementStore
// (persistence/durable-store.ts) exposes one. Everything above the store (the replicator, the node's health,
// metrics, writes that acknowledge only once committed) reads this interface, never the class.

/** Counters and facts of a replica's storage, as its persistence reports them. */
export interface PersistenceStats {
  /** The data directory, or null for the in-memory implementation. */
  readonly path: string | null;
  /** Size of the data files (lmdb never shrinks its file; freed pages are reused). 0 in memory. */
  readonly bytesOnDisk: number;
  /** When the last successful commit finished (`now()` of the options), or null before the first. */
  readonly lastCommitAt: number | null;
  readonly logRecordsSinceSnapshot: number;
  readonly logBytesSinceSnapshot: number;
  /** Size of the current snapshot's payload, 0 when there is none. */
  readonly snapshotBytes: number;
  /** Successful commits; concurrent appends share one (group commit), so this grows slower than `appends`. */
  readonly commits: number;
  /** Appends acknowledged (resolved) since open. */
  readonly appends: number;
  readonly failedCommits: number;
  /** Appends and snapshots accepted but not yet committed. */
  readonly pendingWrites: number;
  /**
   * True after a failed commit lost an append: further appends are refused (the log would have a hole)
   * until a snapshot commits, which covers everything before it.
   */
  readonly needsSnapshot: boolean;
  /**
   * Why the files this persistence commits to are no longer the files on disk (deleted, moved or replaced
   * while open), or null. Once set, every commit is refused: it would land in a file nobody reads again.
   */
  readonly fileProblem: string | null;
}

/** What a node's health reports of its placement storage. */
export interface PlacementStorageHealth extends PersistenceStats {
  /** The replica was rebuilt from data already on disk (not an empty directory). */
  readonly restored: boolean;
  /** Why this replica stopped taking writes and sending its placements, or null while storage works. */
  readonly failure: string | null;
}

/** A replica's storage as the layers above it use it. */
export interface PlacementDurability {
  /** True when the replica was rebuilt from a snapshot or log records: it may take writes at once. */
  readonly restored: boolean;
  /** The failure that stopped this replica's writes and sends, or undefined while storage works. */
  readonly storageFailure: Error | undefined;
  /**
   * Resolves once every update this replica emitted so far is durable (group commit: concurrent callers
   * share one commit). Rejects with PersistenceError 'storage_unavailable' when storage failed.
   */
  flush(): Promise<void>;
  /** Runs `send` once everything emitted so far is durable; never, once storage failed. */
  afterCommit(send: () => void): void;
  /** As afterCommit, for a send that encodes the replica when it runs: waits until nothing is uncommitted. */
  whenIdle(send: () => void): void;
  storageHealth(): PlacementStorageHealth;
  /** Calls `listener` with the seconds each successful append or snapshot took to commit (metrics). */
  onCommitted(listener: (seconds: number) => void): () => void;
}
