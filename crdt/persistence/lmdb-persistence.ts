// The durable PlacementPersistence: one lmdb environment per data directory, holding a snapshot and an
// append-only log of updates, every value a checked record (persistence-record.ts). lmdb commits are
// atomic and fsync'd before they are reported (no noSync, no writemap, no overlapping sync), so an
// acknowledged append survives kill -9 and power loss, and a commit cut short is simply not there. The
// snapshot is stored compressed and each commit's appends as one group record (lmdb-packing.ts).
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { open, type Database, type PutOptions, type RootDatabase } from 'lmdb';
import { FileWatch, LOST_FILES_HINT, identityOf, type WatchedFile } from './file-identity.js';
import { lmdbFileProblem } from './lmdb-file-check.js';
import { LOCK_FILE, lockDirectory, type DirectoryLock } from './persistence-lock.js';
import type { CommitPlan } from './persistence-queue.js';
import { RecordProblem, claimedKind, decodeRecord, encodeRecord } from './persistence-record.js';
import { groupAppends, packGroup, packSnapshot, unpackGroup, unpackSnapshot } from './lmdb-packing.js';
import {
  PersistenceError,
  recoveryHint,
  resolveOptions,
  type PersistedState,
  type PersistenceOptions,
  type PlacementPersistence,
} from './persistence.js';
import { QueuedPersistence } from './queued-persistence.js';

/** Where things are inside the data directory; exported for tests that damage them on purpose. */
export const LMDB_LAYOUT = Object.freeze({
  file: 'placement.mdb',
  metaDb: 'meta',
  logDb: 'log',
  formatKey: 'format',
  snapshotKey: 'snapshot',
});

type Meta = Database<Uint8Array, string>;
type Log = Database<Uint8Array, number>;

/**
 * The lmdb settings of everything this project keeps on disk (placements, durable entities): a commit is fsynced
 * before its promise resolves, and only explicit transactions exist (with event-turn batching lmdb keeps an
 * internal commit promise nobody awaits, which would surface a failed commit as an unhandled rejection).
 */
export const DURABLE_LMDB_OPTIONS = Object.freeze({
  noSync: false,
  noMetaSync: false,
  useWritemap: false,
  overlappingSync: false,
  eventTurnBatching: false,
} as const);

/**
 * Opens (creating when needed) the placement data in `dir`, takes its lock, and checks every record
 * before resolving. Throws PersistenceError: 'locked' when another process holds the directory,
 * 'corrupt' / 'unsupported_format' when anything on disk cannot be read (never opening empty over it),
 * 'invalid_option'. Options: see PersistenceOptions.
 */
export async function openLmdbPersistence(dir: string, options?: PersistenceOptions): Promise<PlacementPersistence> {
  const { maxRecordBytes, now, fileCheckIntervalMs } = resolveOptions(options);
  if (typeof dir !== 'string' || dir.length === 0)
    throw new PersistenceError('invalid_option', 'dir must be a non-empty path');
  const path = resolve(dir);
  const lock = prepare(path);
  let env: RootDatabase | undefined;
  try {
    const file = join(path, LMDB_LAYOUT.file);
    const size = existsSync(file) ? statSync(file).size : 0;
    const existed = size > 0;
    const problem = existed ? lmdbFileProblem(file, size) : null;
    if (problem !== null) throw unreadable(path, `${LMDB_LAYOUT.file} is damaged: ${problem}`, undefined);
    try {
      env = open({
        path: file,
        noSubdir: true,
        encoding: 'binary',
        maxDbs: 4,
        ...DURABLE_LMDB_OPTIONS,
      });
    } catch (cause) {
      throw unreadable(path, `lmdb cannot open ${LMDB_LAYOUT.file}: ${messageOf(cause)}`, cause);
    }
    const meta: Meta = env.openDB<Uint8Array, string>(LMDB_LAYOUT.metaDb, { encoding: 'binary' });
    const log: Log = env.openDB<Uint8Array, number>(LMDB_LAYOUT.logDb, { encoding: 'binary' });
    const initial = readAll(path, meta, log, existed, maxRecordBytes);
    if (initial.fresh) {
      await run(env, () => void meta.put(LMDB_LAYOUT.formatKey, encodeRecord('format', 0, new Uint8Array([1])))).catch(
        (cause: unknown) => {
          throw new PersistenceError(
            'storage_unavailable',
            `cannot initialise placement data in ${path}: ${messageOf(cause)}`,
            { cause },
          );
        },
      );
    }
    const watch = new FileWatch(watchedFiles(path, file), fileCheckIntervalMs);
    return new LmdbPersistence(path, env, meta, log, lock, watch, maxRecordBytes, now, initial);
  } catch (error) {
    await env?.close();
    lock.release();
    throw error;
  }
}

/** The data file lmdb has open and this process's lock file, as they are now (right after taking and opening them). */
function watchedFiles(path: string, file: string): WatchedFile[] {
  const files: WatchedFile[] = [];
  for (const [role, where] of [
    ['data file', file],
    ['lock file', join(path, LOCK_FILE)],
  ] as const) {
    const identity = identityOf(where);
    if (identity === undefined)
      throw new PersistenceError('storage_unavailable', `the ${role} ${where} vanished while it was being opened`);
    files.push({ role, path: where, identity });
  }
  return files;
}

/** Creates the directory and takes its lock; an unusable directory is 'storage_unavailable'. */
function prepare(path: string): DirectoryLock {
  try {
    mkdirSync(path, { recursive: true });
    return lockDirectory(path);
  } catch (cause) {
    if (cause instanceof PersistenceError) throw cause;
    throw new PersistenceError(
      'storage_unavailable',
      `cannot use ${path} as the placement data directory: ${messageOf(cause)}`,
      { cause },
    );
  }
}

interface Contents {
  readonly fresh: boolean;
  readonly snapshot: { readonly payload: Uint8Array; readonly coversBelow: number } | undefined;
  readonly log: ReadonlyArray<{ readonly sequence: number; readonly payload: Uint8Array }>;
}

class LmdbPersistence extends QueuedPersistence {
  private closed: Promise<void> | undefined;
  /** No log record on disk has a smaller sequence. */
  private firstLogKey: number;
  private unread: Contents | undefined;

  constructor(
    private readonly path: string,
    private readonly env: RootDatabase,
    private readonly meta: Meta,
    private readonly log: Log,
    private readonly lock: DirectoryLock,
    private readonly watch: FileWatch,
    maxRecordBytes: number,
    now: () => number,
    initial: Contents,
  ) {
    const { snapshot, log: records } = initial;
    const committed = {
      snapshot:
        snapshot === undefined ? undefined : { coversBelow: snapshot.coversBelow, bytes: snapshot.payload.length },
      log: records.map(({ sequence, payload }) => ({ sequence, bytes: payload.length })),
    };
    super(path, now, committed, maxRecordBytes);
    this.firstLogKey = records[0]?.sequence ?? snapshot?.coversBelow ?? 0;
    this.unread = initial;
  }

  async load(): Promise<PersistedState> {
    if (this.closed !== undefined) throw this.closedError();
    // The first load (a store's startup, before any write) takes what open() read and checked already:
    // reading, checking and unpacking it twice is a measurable part of a restart.
    const read = this.unread;
    this.unread = undefined;
    const unchanged = read !== undefined && this.queue.commits === 0 && this.queue.pendingWrites === 0;
    const { snapshot, log } = unchanged ? read : readAll(this.path, this.meta, this.log, true, this.maxRecordBytes);
    return { snapshot: snapshot?.payload, log: log.map(({ payload }) => payload) };
  }

  protected storage(): { path: string; bytesOnDisk: number; fileProblem: string | null } {
    let bytesOnDisk = 0;
    try {
      bytesOnDisk = statSync(join(this.path, LMDB_LAYOUT.file)).size;
    } catch {
      // Removed underneath us: reported as nothing on disk (and as the file problem).
    }
    return { path: this.path, bytesOnDisk, fileProblem: this.watch.check() };
  }

  onFileProblem(listener: (problem: string) => void): () => void {
    return this.watch.onProblem(listener);
  }

  close(): Promise<void> {
    this.closed ??= (async () => {
      await this.queue.close();
      this.watch.stop();
      await this.env.close();
      this.lock.release();
    })();
    return this.closed;
  }

  private closedError(): PersistenceError {
    return new PersistenceError('closed', `placement persistence at ${this.path} is closed`);
  }

  /** One lmdb transaction: either all of the plan is on disk after it, or none. */
  protected async commit(plan: CommitPlan): Promise<void> {
    // Before: nothing is written into a file that is gone. After: a file removed during the commit
    // fails it, so the write is not acknowledged (what lmdb put into the unlinked file is lost with it).
    this.refuseLostFiles();
    const appended: Array<Promise<boolean>> = [];
    const { snapshot } = plan;
    // No reads here: a read transaction open while lmdb commits keeps the pages the previous commit
    // freed from being reused, and the file grows by a whole log at every snapshot. The log's keys are
    // known instead: every sequence from the first one not yet dropped up to the snapshot's.
    await run(this.env, () => {
      if (snapshot !== undefined) {
        void this.meta.put(
          LMDB_LAYOUT.snapshotKey,
          encodeRecord('packed-snapshot', snapshot.coversBelow, packSnapshot(snapshot.bytes)),
        );
        for (let key = this.firstLogKey; key < snapshot.coversBelow; key++) void this.log.remove(key);
      }
      // Sequences only grow, so every record goes at the end of the log: lmdb's append mode fills pages
      // instead of splitting them in half, which keeps the file near the size of the records.
      for (const group of groupAppends(plan.appends, this.maxRecordBytes)) {
        const { sequence, bytes } = group[0] as (typeof group)[0];
        const record =
          group.length === 1
            ? encodeRecord('log', sequence, bytes)
            : encodeRecord('log-group', sequence, packGroup(group.map((append) => append.bytes)));
        appended.push(putAtEnd(this.log, sequence, record));
      }
    });
    // Refused only if a sequence were not the greatest: never acknowledged as written (the queue then
    // refuses appends until a snapshot covers the hole).
    const refused = (await Promise.all(appended)).filter((written) => !written).length;
    if (refused > 0) throw new Error(`lmdb refused ${refused} log record(s) out of sequence order`);
    this.refuseLostFiles();
    if (snapshot !== undefined) this.firstLogKey = snapshot.coversBelow;
  }

  private refuseLostFiles(): void {
    const problem = this.watch.check();
    if (problem !== null) throw new Error(`${problem}; ${LOST_FILES_HINT}`);
  }
}

/** lmdb-js takes put options (MDB_APPEND) on its asynchronous put too; its typings list them only for putSync. */
function putAtEnd(log: Log, key: number, value: Uint8Array): Promise<boolean> {
  const put = log.put as unknown as (
    this: Log,
    key: number,
    value: Uint8Array,
    options: PutOptions,
  ) => Promise<boolean>;
  // A failed commit rejects every put of it: run() reports that failure, so here it only must not go unhandled.
  return put.call(log, key, value, { append: true }).then(
    (written) => written,
    () => true,
  );
}

/** Runs lmdb writes as one transaction and waits for its durable commit; a failed commit rejects. */
async function run(env: RootDatabase, writes: () => void): Promise<void> {
  try {
    await env.batch(writes);
  } catch (error) {
    // lmdb rejects with a generic error whose cause is a second promise; read it rather than leave it unhandled.
    // It is settled by then (lmdb rejects it in the same callback); the next turn bounds the wait regardless.
    const detail = (error as { commitError?: Promise<unknown> }).commitError;
    const cause: unknown =
      detail === undefined
        ? error
        : await Promise.race([
            detail.then(
              () => error,
              (reason: unknown) => reason,
            ),
            new Promise<unknown>((done) => setImmediate(() => done(error))),
          ]);
    throw new Error(messageOf(cause), { cause });
  }
}

function readAll(path: string, meta: Meta, log: Log, existed: boolean, maxRecordBytes: number): Contents {
  try {
    const format = meta.getBinary(LMDB_LAYOUT.formatKey);
    const snapshotRecord = meta.getBinary(LMDB_LAYOUT.snapshotKey);
    const entries = [...log.getRange({})];
    if (format === undefined) {
      // An environment cut off between its creation and its first commit holds nothing: it is new.
      if (snapshotRecord === undefined && entries.length === 0) return { fresh: true, snapshot: undefined, log: [] };
      throw new RecordProblem(
        'corrupt',
        `the data has no format record although ${existed ? 'it holds records' : 'it is not empty'}`,
      );
    }
    decodeRecord('format', format, 0);
    let snapshot: Contents['snapshot'];
    if (snapshotRecord !== undefined) {
      // Snapshots are written packed; a plain one (the first version of this format) still reads.
      const packed = claimedKind(snapshotRecord) === 'packed-snapshot';
      const { sequence, payload } = decodeRecord(packed ? 'packed-snapshot' : 'snapshot', snapshotRecord);
      snapshot = { payload: packed ? unpackSnapshot(payload, maxRecordBytes) : payload, coversBelow: sequence };
    }
    const records: Array<{ sequence: number; payload: Uint8Array }> = [];
    for (const { key, value } of entries) {
      if (typeof key !== 'number')
        throw new RecordProblem('corrupt', `the log holds a record under a foreign key ${String(key)}`);
      const previous = records[records.length - 1];
      if (previous !== undefined && key <= previous.sequence)
        throw new RecordProblem('corrupt', `log record ${key} overlaps the group before it`);
      if (claimedKind(value) !== 'log-group') {
        records.push(decodeRecord('log', value, key));
        continue;
      }
      const group = unpackGroup(decodeRecord('log-group', value, key).payload, maxRecordBytes);
      group.forEach((payload, i) => records.push({ sequence: key + i, payload }));
    }
    if (snapshot !== undefined && records.some(({ sequence }) => sequence < snapshot.coversBelow)) {
      throw new RecordProblem('corrupt', 'the log holds records its snapshot already covers');
    }
    return { fresh: false, snapshot, log: records };
  } catch (cause) {
    if (cause instanceof RecordProblem) {
      throw new PersistenceError(
        cause.code,
        `placement data in ${path} cannot be read: ${cause.message}. ${recoveryHint(path)}`,
        { cause },
      );
    }
    throw unreadable(path, `lmdb failed to read it: ${messageOf(cause)}`, cause);
  }
}

function unreadable(path: string, reason: string, cause: unknown): PersistenceError {
  return new PersistenceError('corrupt', `placement data in ${path} cannot be read: ${reason}. ${recoveryHint(path)}`, {
    cause,
  });
}

function messageOf(value: unknown): string {
  return value instanceof Error ? value.message : String(value);
}
