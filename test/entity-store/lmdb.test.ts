// The lmdb entity store (issue 36's embedded default): the store contract on a real lmdb directory, and a
// claim fencing a writer in another node process on the same directory (lmdb's write lock is shared between
// processes: the claim and the writer's commits are serialised, and each commit reads the latest epoch).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openLmdbEntityStore } from '../../src/entity-store/lmdb-entity-store.js';
import { checkFenceUnderLoad, entityStoreContract, runWriter } from './contract.js';

const root = mkdtempSync(join(tmpdir(), 'actor-ts-entity-lmdb-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'child.mjs');

describe('lmdb entity store', () => {
  entityStoreContract(async () => openLmdbEntityStore(join(root, 'contract')), 'lmdb');

  it('a claim fences a writer on another handle of the directory: no commit of it lands after the claim', async () => {
    const dir = join(root, 'handles');
    const writer = runWriter(openLmdbEntityStore(dir), 'fence');
    await checkFenceUnderLoad(openLmdbEntityStore(dir), writer, 'fence', 20);
  });

  it('a claim fences a writer in another process on the same directory', async () => {
    const dir = join(root, 'processes');
    const child = spawn(process.execPath, [CHILD, dir, 'other'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let committed = 0;
    const fenced = new Promise<number>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`the writer process exited (${code}) before it was fenced`)));
      createInterface({ input: child.stdout }).on('line', (line) => {
        const [word, n] = line.split(' ');
        if (word === 'ok') committed = Number(n);
        if (word === 'fenced') resolve(Number(n));
      });
    });
    try {
      await checkFenceUnderLoad(openLmdbEntityStore(dir), { committed: () => committed, fenced }, 'other', 20);
    } finally {
      child.kill('SIGKILL');
    }
    expect(committed).toBeGreaterThanOrEqual(20);
  });
});
