// Unreadable data is refused, never opened as empty: a garbage file, a record overwritten on disk, a
// truncated record, a snapshot of an unknown format version. Each error names the directory and says
// how to recover; the lock is released so the operator can retry.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { afterAll, describe, expect, it } from 'vitest';
import { LMDB_LAYOUT, openLmdbPersistence } from '../../crdt/persistence/lmdb-persistence.js';
import { LOCK_FILE } from '../../crdt/persistence/persistence-lock.js';
import { RECORD_FORMAT_VERSION, encodeRecord } from '../../crdt/persistence/persistence-record.js';
import { expectCode } from './contract.js';

const root = mkdtempSync(join(tmpdir(), 'placement-corrupt-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const newDir = (): string => join(root, `d${++dirs}`);

/** Writes straight into the environment, bypassing every check, as a bug or a foreign tool would. */
async function tamper(
  dir: string,
  write: (meta: { put(k: string, v: Uint8Array): unknown }, log: { put(k: number, v: Uint8Array): unknown }) => void,
): Promise<void> {
  const env = open({
    path: join(dir, LMDB_LAYOUT.file),
    noSubdir: true,
    encoding: 'binary',
    maxDbs: 4,
    eventTurnBatching: false,
  });
  const meta = env.openDB<Uint8Array, string>(LMDB_LAYOUT.metaDb, { encoding: 'binary' });
  const log = env.openDB<Uint8Array, number>(LMDB_LAYOUT.logDb, { encoding: 'binary' });
  await env.batch(() => write(meta, log));
  await env.close();
}

async function expectRefused(dir: string, code: 'corrupt' | 'unsupported_format', what: RegExp): Promise<void> {
  const error = await expectCode(openLmdbPersistence(dir), code);
  expect(error.message).toContain(dir);
  expect(error.message).toMatch(what);
  expect(error.message).toMatch(/empty data directory/);
  expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
}

async function withData(dir: string): Promise<void> {
  const p = await openLmdbPersistence(dir);
  await p.writeSnapshot(new Uint8Array([1, 2, 3]));
  await p.append(new TextEncoder().encode('needle-0123456789-needle'));
  await p.close();
}

describe('lmdb persistence refuses unreadable data', () => {
  it('a data file full of garbage', async () => {
    const dir = newDir();
    mkdirSync(dir);
    writeFileSync(join(dir, LMDB_LAYOUT.file), randomBytes(64 * 1024));
    await expectRefused(dir, 'corrupt', /placement.mdb is damaged: meta page 0 does not carry lmdb.s signature/);
    const zeros = newDir();
    mkdirSync(zeros);
    writeFileSync(join(zeros, LMDB_LAYOUT.file), new Uint8Array(64 * 1024));
    await expectRefused(zeros, 'corrupt', /meta page 0 does not carry/);
    const short = newDir();
    mkdirSync(short);
    writeFileSync(join(short, LMDB_LAYOUT.file), randomBytes(40));
    await expectRefused(short, 'corrupt', /40 bytes long, shorter than an lmdb meta page/);
  });

  it('a data file cut down to its meta pages', async () => {
    const dir = newDir();
    await withData(dir);
    const file = join(dir, LMDB_LAYOUT.file);
    writeFileSync(file, readFileSync(file).subarray(0, 5000));
    await expectRefused(dir, 'corrupt', /shorter than lmdb's two meta pages/);
  });

  it('an empty data file (cut off at creation, before any commit) opens as new', async () => {
    const dir = newDir();
    mkdirSync(dir);
    writeFileSync(join(dir, LMDB_LAYOUT.file), new Uint8Array(0));
    const p = await openLmdbPersistence(dir);
    expect(await p.load()).toEqual({ snapshot: undefined, log: [] });
    await p.close();
  });

  it('a record overwritten in the file (caught by its checksum)', async () => {
    const dir = newDir();
    await withData(dir);
    const file = join(dir, LMDB_LAYOUT.file);
    const content = readFileSync(file);
    const at = content.indexOf('needle-0123456789-needle');
    expect(at).toBeGreaterThan(0);
    content.writeUInt8((content.readUInt8(at + 10) ^ 0xff) & 0xff, at + 10);
    writeFileSync(file, content);
    await expectRefused(dir, 'corrupt', /log record fails its checksum/);
  });

  it('a truncated log record', async () => {
    const dir = newDir();
    await withData(dir);
    await tamper(dir, (_meta, log) => log.put(7, encodeRecord('log', 7, new Uint8Array([1, 2, 3, 4])).subarray(0, 16)));
    await expectRefused(dir, 'corrupt', /log record fails its checksum/);
    const shorter = newDir();
    await withData(shorter);
    await tamper(shorter, (_meta, log) => log.put(7, new Uint8Array([RECORD_FORMAT_VERSION, 1, 0])));
    await expectRefused(shorter, 'corrupt', /log record is truncated: 3 bytes/);
  });

  it('a snapshot written by an unknown format version', async () => {
    const dir = newDir();
    await withData(dir);
    const record = encodeRecord('snapshot', 0, new Uint8Array([1]));
    record[0] = 99;
    await tamper(dir, (meta) => meta.put(LMDB_LAYOUT.snapshotKey, record));
    await expectRefused(dir, 'unsupported_format', /format version 99; this build reads version 1/);
  });

  it('a log record stored under another sequence number', async () => {
    const dir = newDir();
    await withData(dir);
    await tamper(dir, (_meta, log) => log.put(5, encodeRecord('log', 6, new Uint8Array([1]))));
    await expectRefused(dir, 'corrupt', /log record 5 carries sequence number 6/);
  });

  it('a snapshot or a log group whose compressed payload is damaged', async () => {
    const snapshot = newDir();
    await withData(snapshot);
    await tamper(snapshot, (meta) =>
      meta.put(LMDB_LAYOUT.snapshotKey, encodeRecord('packed-snapshot', 0, new Uint8Array(64).fill(0xff))),
    );
    await expectRefused(snapshot, 'corrupt', /snapshot record does not decompress/);
    const group = newDir();
    await withData(group);
    await tamper(group, (_meta, log) => log.put(7, encodeRecord('log-group', 7, new Uint8Array(64).fill(0xff))));
    await expectRefused(group, 'corrupt', /log group record does not decompress/);
  });

  it('a log record stored inside the span of the group before it', async () => {
    const dir = newDir();
    const p = await openLmdbPersistence(dir);
    // One burst, one commit: records 0-2 are one group under key 0.
    await Promise.all([1, 2, 3].map((n) => p.append(new Uint8Array([n]))));
    await p.close();
    await tamper(dir, (_meta, log) => log.put(1, encodeRecord('log', 1, new Uint8Array([9]))));
    await expectRefused(dir, 'corrupt', /log record 1 overlaps the group before it/);
  });

  it('records without the format record', async () => {
    const dir = newDir();
    mkdirSync(dir);
    await tamper(dir, (_meta, log) => log.put(0, encodeRecord('log', 0, new Uint8Array([1]))));
    await expectRefused(dir, 'corrupt', /no format record/);
  });

  it('refusing changes nothing: the damaged data is still there for inspection', async () => {
    const dir = newDir();
    await withData(dir);
    await tamper(dir, (_meta, log) => log.put(9, new Uint8Array([1, 1, 1])));
    const before = readFileSync(join(dir, LMDB_LAYOUT.file));
    await expectCode(openLmdbPersistence(dir), 'corrupt');
    await expectCode(openLmdbPersistence(dir), 'corrupt');
    expect(readFileSync(join(dir, LMDB_LAYOUT.file)).equals(before)).toBe(true);
  });
});
