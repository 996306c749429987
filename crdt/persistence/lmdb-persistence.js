// The durable PlacementPersistence: one lmdb environment per data directory, holding a snapshot and an
// append-only log of updates, every value a checked record (persistence-record.ts). lmdb commits are
// atomic and fsync'd before they are reported (no noSync, no writemap, no overlapping sync), so an
// acknowledged append survives kill -9 and power loss, and a commit cut short is simply not there. The
// snapshot is stored compressed and each commit's appends as one group record (lmdb-packing.ts).
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { open } from 'lmdb';
import { lmdbFileProblem } from './lmdb-file-check.js';
import { lockDirectory } from './persistence-lock.js';
import { RecordProblem, claimedKind, decodeRecord, encodeRecord } from './persistence-record.js';
import { groupAppends, packGroup, packSnapshot, unpackGroup, unpackSnapshot } from './lmdb-packing.js';
import { PersistenceError, recoveryHint, resolveOptions } from './persistence.js';
import { QueuedPersistence } from './queued-persistence.js';
/** Where things are inside the data directory; exported for tests that damage them on purpose. */
export const LMDB_LAYOUT = Object.freeze({ file: 'placement.mdb', metaDb: 'meta', logDb: 'log', formatKey: 'format', snapshotKey: 'snapshot' });
/**
 * Opens (creating when needed) the placement data in `dir`, takes its lock, and checks every record
 * before resolving. Throws PersistenceError: 'locked' when another process holds the directory,
 * 'corrupt' / 'unsupported_format' when anything on disk cannot be read (never opening empty over it),
 * 'invalid_option'. Options: see PersistenceOptions.
 */
export async function openLmdbPersistence(dir, options) {
    const { maxRecordBytes, now } = resolveOptions(options);
    if (typeof dir !== 'string' || dir.length === 0)
        throw new PersistenceError('invalid_option', 'dir must be a non-empty path');
    const path = resolve(dir);
    const lock = prepare(path);
    let env;
    try {
        const file = join(path, LMDB_LAYOUT.file);
        const size = existsSync(file) ? statSync(file).size : 0;
        const existed = size > 0;
        const problem = existed ? lmdbFileProblem(file, size) : null;
        if (problem !== null)
            throw unreadable(path, `${LMDB_LAYOUT.file} is damaged: ${problem}`, undefined);
        try {
            env = open({
                path: file,
                noSubdir: true,
                encoding: 'binary',
                maxDbs: 4,
                // Durability: the commit's fsync happens before the write promise resolves.
                noSync: false,
                noMetaSync: false,
                useWritemap: false,
                overlappingSync: false,
                // Only explicit batches form transactions: with event-turn batching lmdb keeps an internal commit
                // promise nobody awaits, which would surface a failed commit as an unhandled rejection.
                eventTurnBatching: false,
            });
        }
        catch (cause) {
            throw unreadable(path, `lmdb cannot open ${LMDB_LAYOUT.file}: ${messageOf(cause)}`, cause);
        }
        const meta = env.openDB(LMDB_LAYOUT.metaDb, { encoding: 'binary' });
        const log = env.openDB(LMDB_LAYOUT.logDb, { encoding: 'binary' });
        const initial = readAll(path, meta, log, existed, maxRecordBytes);
        if (initial.fresh) {
            await run(env, () => void meta.put(LMDB_LAYOUT.formatKey, encodeRecord('format', 0, new Uint8Array([1])))).catch((cause) => {
                throw new PersistenceError('storage_unavailable', `cannot initialise placement data in ${path}: ${messageOf(cause)}`, { cause });
            });
        }
        return new LmdbPersistence(path, env, meta, log, lock, maxRecordBytes, now, initial);
    }
    catch (error) {
        await env?.close();
        lock.release();
        throw error;
    }
}
/** Creates the directory and takes its lock; an unusable directory is 'storage_unavailable'. */
function prepare(path) {
    try {
        mkdirSync(path, { recursive: true });
        return lockDirectory(path);
    }
    catch (cause) {
        if (cause instanceof PersistenceError)
            throw cause;
        throw new PersistenceError('storage_unavailable', `cannot use ${path} as the placement data directory: ${messageOf(cause)}`, { cause });
    }
}
class LmdbPersistence extends QueuedPersistence {
    path;
    env;
    meta;
    log;
    lock;
    closed;
    /** No log record on disk has a smaller sequence. */
    firstLogKey;
    unread;
    constructor(path, env, meta, log, lock, maxRecordBytes, now, initial) {
        const { snapshot, log: records } = initial;
        const committed = {
            snapshot: snapshot === undefined ? undefined : { coversBelow: snapshot.coversBelow, bytes: snapshot.payload.length },
            log: records.map(({ sequence, payload }) => ({ sequence, bytes: payload.length })),
        };
        super(path, now, committed, maxRecordBytes);
        this.path = path;
        this.env = env;
        this.meta = meta;
        this.log = log;
        this.lock = lock;
        this.firstLogKey = records[0]?.sequence ?? snapshot?.coversBelow ?? 0;
        this.unread = initial;
    }
    async load() {
        if (this.closed !== undefined)
            throw this.closedError();
        // The first load (a store's startup, before any write) takes what open() read and checked already:
        // reading, checking and unpacking it twice is a measurable part of a restart.
        const read = this.unread;
        this.unread = undefined;
        const unchanged = read !== undefined && this.queue.commits === 0 && this.queue.pendingWrites === 0;
        const { snapshot, log } = unchanged ? read : readAll(this.path, this.meta, this.log, true, this.maxRecordBytes);
        return { snapshot: snapshot?.payload, log: log.map(({ payload }) => payload) };
    }
    storage() {
        let bytesOnDisk = 0;
        try {
            bytesOnDisk = statSync(join(this.path, LMDB_LAYOUT.file)).size;
        }
        catch {
            // Removed underneath us: reported as nothing on disk.
        }
        return { path: this.path, bytesOnDisk };
    }
    close() {
        this.closed ??= (async () => {
            await this.queue.close();
            await this.env.close();
            this.lock.release();
        })();
        return this.closed;
    }
    closedError() {
        return new PersistenceError('closed', `placement persistence at ${this.path} is closed`);
    }
    /** One lmdb transaction: either all of the plan is on disk after it, or none. */
    async commit(plan) {
        const appended = [];
        const { snapshot } = plan;
        // No reads here: a read transaction open while lmdb commits keeps the pages the previous commit
        // freed from being reused, and the file grows by a whole log at every snapshot. The log's keys are
        // known instead: every sequence from the first one not yet dropped up to the snapshot's.
        await run(this.env, () => {
            if (snapshot !== undefined) {
                void this.meta.put(LMDB_LAYOUT.snapshotKey, encodeRecord('packed-snapshot', snapshot.coversBelow, packSnapshot(snapshot.bytes)));
                for (let key = this.firstLogKey; key < snapshot.coversBelow; key++)
                    void this.log.remove(key);
            }
            // Sequences only grow, so every record goes at the end of the log: lmdb's append mode fills pages
            // instead of splitting them in half, which keeps the file near the size of the records.
            for (const group of groupAppends(plan.appends, this.maxRecordBytes)) {
                const { sequence, bytes } = group[0];
                const record = group.length === 1 ? encodeRecord('log', sequence, bytes) : encodeRecord('log-group', sequence, packGroup(group.map((append) => append.bytes)));
                appended.push(putAtEnd(this.log, sequence, record));
            }
        });
        // Refused only if a sequence were not the greatest: never acknowledged as written (the queue then
        // refuses appends until a snapshot covers the hole).
        const refused = (await Promise.all(appended)).filter((written) => !written).length;
        if (refused > 0)
            throw new Error(`lmdb refused ${refused} log record(s) out of sequence order`);
        if (snapshot !== undefined)
            this.firstLogKey = snapshot.coversBelow;
    }
}
/** lmdb-js takes put options (MDB_APPEND) on its asynchronous put too; its typings list them only for putSync. */
function putAtEnd(log, key, value) {
    const put = log.put;
    // A failed commit rejects every put of it: run() reports that failure, so here it only must not go unhandled.
    return put.call(log, key, value, { append: true }).then((written) => written, () => true);
}
/** Runs lmdb writes as one transaction and waits for its durable commit; a failed commit rejects. */
async function run(env, writes) {
    try {
        await env.batch(writes);
    }
    catch (error) {
        // lmdb rejects with a generic error whose cause is a second promise; read it rather than leave it unhandled.
        // It is settled by then (lmdb rejects it in the same callback); the next turn bounds the wait regardless.
        const detail = error.commitError;
        const cause = detail === undefined
            ? error
            : await Promise.race([detail.then(() => error, (reason) => reason), new Promise((done) => setImmediate(() => done(error)))]);
        throw new Error(messageOf(cause), { cause });
    }
}
function readAll(path, meta, log, existed, maxRecordBytes) {
    try {
        const format = meta.getBinary(LMDB_LAYOUT.formatKey);
        const snapshotRecord = meta.getBinary(LMDB_LAYOUT.snapshotKey);
        const entries = [...log.getRange({})];
        if (format === undefined) {
            // An environment cut off between its creation and its first commit holds nothing: it is new.
            if (snapshotRecord === undefined && entries.length === 0)
                return { fresh: true, snapshot: undefined, log: [] };
            throw new RecordProblem('corrupt', `the data has no format record although ${existed ? 'it holds records' : 'it is not empty'}`);
        }
        decodeRecord('format', format, 0);
        let snapshot;
        if (snapshotRecord !== undefined) {
            // Snapshots are written packed; a plain one (the first version of this format) still reads.
            const packed = claimedKind(snapshotRecord) === 'packed-snapshot';
            const { sequence, payload } = decodeRecord(packed ? 'packed-snapshot' : 'snapshot', snapshotRecord);
            snapshot = { payload: packed ? unpackSnapshot(payload, maxRecordBytes) : payload, coversBelow: sequence };
        }
        const records = [];
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
    }
    catch (cause) {
        if (cause instanceof RecordProblem) {
            throw new PersistenceError(cause.kind, `placement data in ${path} cannot be read: ${cause.message}. ${recoveryHint(path)}`, { cause });
        }
        throw unreadable(path, `lmdb failed to read it: ${messageOf(cause)}`, cause);
    }
}
function unreadable(path, reason, cause) {
    return new PersistenceError('corrupt', `placement data in ${path} cannot be read: ${reason}. ${recoveryHint(path)}`, { cause });
}
function messageOf(value) {
    return value instanceof Error ? value.message : String(value);
}
//# sourceMappingURL=lmdb-persistence.js.map