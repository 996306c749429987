// Issue 25: a data directory deleted, moved or replaced under a running node. lmdb keeps committing into
// the unlinked file, so without a check every write after `rm -rf` was acknowledged and lost at restart.
import { copyFileSync, mkdtempSync, renameSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DurablePlacementStore } from '../../crdt/persistence/durable-store.js';
import { LMDB_LAYOUT, openLmdbPersistence } from '../../crdt/persistence/lmdb-persistence.js';
import { LOCK_FILE } from '../../crdt/persistence/persistence-lock.js';
import { poll } from '../support/poll.js';
import { expectCode } from './contract.js';

const root = mkdtempSync(join(tmpdir(), 'placement-lost-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const newDir = (): string => join(root, `d${++dirs}`);
const bytes = (n: number): Uint8Array => new Uint8Array(64).fill(n);

describe('files deleted or replaced under an open lmdb persistence', () => {
  it('refuses the next append after rm -rf of the directory, says why and how to recover, and keeps refusing', async () => {
    const dir = newDir();
    const p = await openLmdbPersistence(dir, { fileCheckIntervalMs: 0 });
    await p.append(bytes(1));
    rmSync(dir, { recursive: true, force: true });
    const error = await expectCode(p.append(bytes(2)), 'storage_unavailable');
    expect(error.message).toContain(`${join(dir, LMDB_LAYOUT.file)} was deleted or moved`);
    expect(error.message).toContain('To recover: restart this node');
    expect(p.stats().fileProblem).toContain('was deleted or moved');
    await expectCode(p.writeSnapshot(bytes(3)), 'storage_unavailable');
    await expectCode(p.append(bytes(4)), 'storage_unavailable');
    expect(p.stats().appends).toBe(1);
    await p.close();
  });

  it('refuses when the data file was replaced by another file at the same path', async () => {
    const dir = newDir();
    const p = await openLmdbPersistence(dir, { fileCheckIntervalMs: 0 });
    await p.append(bytes(1));
    const file = join(dir, LMDB_LAYOUT.file);
    copyFileSync(file, `${file}.copy`);
    renameSync(`${file}.copy`, file);
    const error = await expectCode(p.append(bytes(2)), 'storage_unavailable');
    expect(error.message).toContain('was replaced by another file');
    await p.close();
  });

  it('refuses when the directory was moved away (its lock and file follow it, the path names nothing)', async () => {
    const dir = newDir();
    const p = await openLmdbPersistence(dir, { fileCheckIntervalMs: 0 });
    renameSync(dir, `${dir}-moved`);
    await expectCode(p.append(bytes(1)), 'storage_unavailable');
    await p.close();
  });

  it('refuses when only its lock file was deleted: another node could now take the directory', async () => {
    const dir = newDir();
    const p = await openLmdbPersistence(dir, { fileCheckIntervalMs: 0 });
    unlinkSync(join(dir, LOCK_FILE));
    const error = await expectCode(p.append(bytes(1)), 'storage_unavailable');
    expect(error.message).toContain(`lock file ${join(dir, LOCK_FILE)}`);
    await p.close();
  });

  it('a durable store notices between writes: its health names the problem and the next write throws storage_unavailable', async () => {
    const dir = newDir();
    const persistence = await openLmdbPersistence(dir, { fileCheckIntervalMs: 10 });
    const store = await DurablePlacementStore.open({ node: 'n1', persistence });
    store.set('T', 1, 'a');
    await store.flush();
    expect(store.storageHealth().failure).toBeNull();
    rmSync(dir, { recursive: true, force: true });
    const failure = await poll(
      'the store to notice its deleted directory',
      () => store.storageHealth().failure ?? undefined,
      { timeoutMs: 5000, intervalMs: 10 },
    );
    expect(failure).toContain('was deleted or moved');
    expect(failure).toContain('refuses placement writes');
    expect(() => store.set('T', 2, 'b')).toThrow(expect.objectContaining({ code: 'storage_unavailable' }));
    await expectCode(store.flush(), 'storage_unavailable');
    await persistence.close();
  });

  it('files left alone: a long run of commits and checks finds no problem', async () => {
    const dir = newDir();
    const p = await openLmdbPersistence(dir, { fileCheckIntervalMs: 0 });
    for (let i = 1; i <= 20; i++) await p.append(bytes(i));
    await p.writeSnapshot(bytes(99));
    expect(p.stats().fileProblem).toBeNull();
    await p.close();
  });
});
