// The storage seam of the placement store: what a node keeps on its own disk so its placements survive a
// full-cluster restart. The store hands opaque bytes (its wire-encoded updates and a whole-state snapshot)
// to a PlacementPersistence; the implementations are lmdb-persistence.ts (durable) and
// memory-persistence.ts (today's behaviour: nothing survives the process).
//
// How a store uses it: at startup `load()`, apply the snapshot and then each log entry with
// `applyUpdate` (idempotent, so replaying more than needed is harmless), and only then join replication.
// Append every update it emits for its own writes and the bytes of every remote update it applied (they
// carry base merges and generation moves that no emitted update does); acknowledge a write only once its
// append resolved. After a compaction, `writeSnapshot(store.encodeDiff(EMPTY_STATE_VECTOR))`.
import { CodedError } from '../errors.js';
import type { PersistenceStats } from '../durability.js';

/** What a replica reloads at startup: apply `snapshot` (when present), then every `log` entry in order. */
export interface PersistedState {
  /** The last snapshot written, or undefined when none was. */
  readonly snapshot: Uint8Array | undefined;
  /** Every update appended since that snapshot, in append order. */
  readonly log: readonly Uint8Array[];
}

/**
 * Where a durable store keeps its snapshot and update log. Writes are acknowledged only once committed;
 * implementations are lmdb (`openLmdbPersistence`) and in-memory (`memoryPersistence`).
 */
export interface PlacementPersistence {
  /**
   * What is committed: the snapshot and the log since. Call it at startup, before writing. Throws
   * PersistenceError('corrupt' | 'unsupported_format') when a record cannot be read.
   */
  load(): Promise<PersistedState>;
  /**
   * Appends one update; resolves once it is durable (committed and fsync'd, for lmdb). Appends made
   * while a commit is in progress share the next commit. Rejects with 'storage_unavailable' when the
   * commit failed (nothing of it is visible on reopen), 'invalid_argument' for anything but a non-empty
   * Uint8Array within maxRecordBytes, 'closed' after close().
   */
  append(update: Uint8Array): Promise<void>;
  /**
   * Replaces the snapshot and drops, in the same commit, every log record appended before this call: the
   * snapshot must hold the effect of all of them (the store encodes it from its live replica). Resolves
   * once durable; appends issued before it and not yet committed are acknowledged with it.
   */
  writeSnapshot(snapshot: Uint8Array): Promise<void>;
  stats(): PersistenceStats;
  /**
   * Calls `listener` once when the data files turn out to be deleted, moved or replaced under this process
   * (see PersistenceStats.fileProblem); at once when that is already known. Returns the unsubscribe.
   */
  onFileProblem?(listener: (problem: string) => void): () => void;
  /** Commits what is pending, then releases the directory. Idempotent. */
  close(): Promise<void>;
}

/** Limits every persistence implementation applies to what it reads and writes. */
export interface PersistenceOptions {
  /** Largest accepted update or snapshot, in bytes. Default DEFAULT_MAX_RECORD_BYTES (64 MiB). */
  readonly maxRecordBytes?: number;
  /** Clock of `stats().lastCommitAt`. Default Date.now. */
  readonly now?: () => number;
  /**
   * How often (ms) a durable persistence checks in the background that its files are still the ones on
   * disk; commits check before and after regardless. 0 turns the background check off. Default 1000.
   */
  readonly fileCheckIntervalMs?: number;
}

/**
 * Largest update or snapshot a persistence accepts by default (64 MiB): a bound on what one corrupt length field can
 * make it allocate.
 */
export const DEFAULT_MAX_RECORD_BYTES = 64 * 1024 * 1024;

/** Why persistence failed; each code below says what happened and how to recover. */
export type PersistenceErrorCode =
  /** The data directory is held by another running process (or by another open instance in this one). */
  | 'locked'
  /** Data on disk cannot be read: garbage, a truncated or overwritten record, a missing format record. */
  | 'corrupt'
  /** Data written by another format version than this build reads. */
  | 'unsupported_format'
  /** A commit failed (disk full, I/O error) or the store refuses appends until a snapshot; see needsSnapshot. */
  | 'storage_unavailable'
  | 'closed'
  | 'invalid_argument'
  | 'invalid_option';

/**
 * Thrown by a persistence when its data directory cannot be used (locked, corrupt, too large); `code` says which, and
 * the message names the directory.
 */
export class PersistenceError extends CodedError<PersistenceErrorCode> {
  override readonly name = 'PersistenceError';
}

/** How to get out of unreadable data; every 'corrupt' and 'unsupported_format' message ends with it. */
export function recoveryHint(path: string): string {
  return (
    `To recover: stop this node, move ${path} aside (keep it for inspection) and start the node with an empty ` +
    'data directory; it re-syncs the placements from the other nodes of the cluster.'
  );
}

/** Validates the options shared by both implementations; throws 'invalid_option'. */
export function resolveOptions(options: PersistenceOptions | undefined): {
  maxRecordBytes: number;
  now: () => number;
  fileCheckIntervalMs: number;
} {
  if (options !== undefined && (typeof options !== 'object' || options === null)) {
    throw new PersistenceError('invalid_option', 'persistence options must be an object');
  }
  const maxRecordBytes = options?.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
  if (!Number.isSafeInteger(maxRecordBytes) || maxRecordBytes < 1) {
    throw new PersistenceError(
      'invalid_option',
      `maxRecordBytes must be a positive integer, got ${String(maxRecordBytes)}`,
    );
  }
  const now = options?.now ?? Date.now;
  if (typeof now !== 'function') throw new PersistenceError('invalid_option', 'now must be a function');
  const fileCheckIntervalMs = options?.fileCheckIntervalMs ?? 1000;
  if (!Number.isSafeInteger(fileCheckIntervalMs) || fileCheckIntervalMs < 0) {
    throw new PersistenceError(
      'invalid_option',
      `fileCheckIntervalMs must be a non-negative integer, got ${String(fileCheckIntervalMs)}`,
    );
  }
  return { maxRecordBytes, now, fileCheckIntervalMs };
}

/** A private copy of a caller's bytes after checking them; the caller may reuse its buffer at once. */
export function checkedCopy(bytes: unknown, what: string, maxRecordBytes: number): Uint8Array {
  if (!(bytes instanceof Uint8Array)) throw new PersistenceError('invalid_argument', `${what} must be a Uint8Array`);
  if (bytes.length === 0) throw new PersistenceError('invalid_argument', `${what} must not be empty`);
  if (bytes.length > maxRecordBytes) {
    throw new PersistenceError(
      'invalid_argument',
      `${what} is ${bytes.length} bytes, the limit (maxRecordBytes) is ${maxRecordBytes}`,
    );
  }
  return new Uint8Array(bytes);
}
