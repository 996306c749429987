// The lmdb persistence against the shared contract, plus what only a real directory has: its path,
// bytes on disk, a lock file of a dead owner, and disk use bounded by compaction.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { open } from 'lmdb';
import { LMDB_LAYOUT, openLmdbPersistence } from '../../crdt/persistence/lmdb-persistence.js';
import { LOCK_FILE } from '../../crdt/persistence/persistence-lock.js';
import { expectCode, persistenceContract } from './contract.js';

const root = mkdtempSync(join(tmpdir(), 'placement-lmdb-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const newDir = (): string => join(root, `d${++dirs}`);

persistenceContract('lmdb', async () => {
  const dir = newDir();
  return { open: (options) => openLmdbPersistence(dir, options) };
});

describe('lmdb persistence', () => {
  it('reports its directory and its size on disk, and holds a lock file naming this process', async () => {
    const dir = newDir();
    const p = await openLmdbPersistence(dir);
    await p.append(new Uint8Array(1000).fill(1));
    expect(p.stats().path).toBe(dir);
    expect(p.stats().bytesOnDisk).toBeGreaterThan(1000);
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid });
    await p.close();
    expect(() => readFileSync(join(dir, LOCK_FILE))).toThrow();
  });

  it('takes over the lock of a process that is gone', async () => {
    const dir = newDir();
    await (await openLmdbPersistence(dir)).close();
    // pid 2^22 + 1 is above Linux's pid_max limit, so no process has it.
    writeFileSync(
      join(dir, LOCK_FILE),
      JSON.stringify({ pid: 4_194_305, host: (await import('node:os')).hostname(), started: '1' }),
    );
    const p = await openLmdbPersistence(dir);
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid });
    await p.close();
  });

  it('refuses a data directory it cannot create, naming it', async () => {
    const file = join(root, 'a-file');
    writeFileSync(file, 'not a directory');
    const error = await expectCode(openLmdbPersistence(join(file, 'data')), 'storage_unavailable');
    expect(error.message).toContain(join(file, 'data'));
  });

  it('stores a burst of appends as one group record, read back as the appends in order', async () => {
    const dir = newDir();
    const p = await openLmdbPersistence(dir);
    const updates = Array.from({ length: 50 }, (_, i) => new Uint8Array(200).fill(i + 1));
    await Promise.all(updates.map((update) => p.append(update)));
    await p.append(new Uint8Array([7]));
    await p.close();
    const env = open({
      path: join(dir, LMDB_LAYOUT.file),
      noSubdir: true,
      encoding: 'binary',
      maxDbs: 4,
      readOnly: true,
    });
    const keys = [...env.openDB<Uint8Array, number>(LMDB_LAYOUT.logDb, { encoding: 'binary' }).getKeys()];
    await env.close();
    // The burst shared a commit (one record, compressed far below its 10 kB), the lone append is its own.
    expect(keys).toEqual([0, 50]);
    const again = await openLmdbPersistence(dir);
    expect((await again.load()).log).toEqual([...updates, new Uint8Array([7])]);
    expect(again.stats().logRecordsSinceSnapshot).toBe(51);
    await again.close();
  });

  it('keeps disk use bounded: with a snapshot every 200 writes, the file stops growing', async () => {
    const dir = newDir();
    const p = await openLmdbPersistence(dir);
    const sizes: number[] = [];
    for (let round = 0; round < 12; round++) {
      await Promise.all(Array.from({ length: 200 }, (_, i) => p.append(new Uint8Array(500).fill(i % 251))));
      await p.writeSnapshot(new Uint8Array(20_000).fill(round));
      sizes.push(p.stats().bytesOnDisk);
    }
    // 12 rounds of ~100 kB of log each: without dropping the log the file would exceed 1.2 MB.
    expect(sizes[11]).toBe(sizes[5]);
    expect(sizes[11]).toBeLessThan(600_000);
    expect(p.stats().logRecordsSinceSnapshot).toBe(0);
    await p.close();
  });
});
