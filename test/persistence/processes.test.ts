// The persistence across real processes (child.mjs runs the compiled code in dist/): a directory held by
// a running node is refused to another; kill -9 at random moments of a write loses no acknowledged
// append and leaves nothing half-written; a full disk fails the append with a typed error and reopens clean.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openLmdbPersistence } from '../../crdt/persistence/lmdb-persistence.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CHILD = join(ROOT, 'test', 'persistence', 'child.mjs');
const SOURCES = [
  'persistence',
  'persistence-queue',
  'persistence-record',
  'persistence-lock',
  'lmdb-persistence',
  'lmdb-file-check',
];

/** Fails up front, saying why, when dist/ is missing or older than the sources the children would run. */
function requireFreshBuild(): void {
  for (const name of SOURCES) {
    const source = statSync(join(ROOT, 'crdt', 'persistence', `${name}.ts`)).mtimeMs;
    let built: number;
    try {
      built = statSync(join(ROOT, 'dist', 'crdt', 'persistence', `${name}.js`)).mtimeMs;
    } catch {
      throw new Error(
        `dist/crdt/persistence/${name}.js is missing: run \`npm run build\` before the multi-process persistence tests`,
      );
    }
    if (built < source)
      throw new Error(
        `dist/crdt/persistence/${name}.js is older than crdt/persistence/${name}.ts: run \`npm run build\` first`,
      );
  }
}

const root = mkdtempSync(join(tmpdir(), 'placement-procs-'));
let dirs = 0;
const newDir = (): string => join(root, `d${++dirs}`);
const children = new Set<ChildProcess>();

beforeAll(requireFreshBuild);
afterEach(() => {
  for (const child of children) child.kill('SIGKILL');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Child {
  readonly process: ChildProcess;
  /** Resolves with the first stdout line matching `pattern`; rejects when the process exits first. */
  line(pattern: RegExp): Promise<string>;
  readonly lines: string[];
  readonly exited: Promise<number | null>;
}

function start(args: readonly string[], shell?: string): Child {
  const child =
    shell === undefined
      ? spawn(process.execPath, [CHILD, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] })
      : spawn('bash', ['-c', `${shell}; exec "$0" "$@"`, process.execPath, CHILD, ...args], {
          cwd: ROOT,
          stdio: ['ignore', 'pipe', 'ignore'],
        });
  children.add(child);
  const lines: string[] = [];
  const waiting: Array<{ pattern: RegExp; resolve: (line: string) => void; reject: (error: Error) => void }> = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    for (const w of [...waiting]) {
      if (w.pattern.test(line)) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve(line);
      }
    }
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      children.delete(child);
      // Lines still buffered in readline arrive before 'close'; give them their turn.
      setImmediate(() => {
        for (const w of waiting.splice(0))
          w.reject(new Error(`child ${args.join(' ')} exited (${code}) before printing ${w.pattern}`));
        resolve(code);
      });
    }),
  );
  return {
    process: child,
    lines,
    exited,
    line: (pattern) => {
      const seen = lines.find((l) => pattern.test(l));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => waiting.push({ pattern, resolve, reject }));
    },
  };
}

async function kill9(child: Child): Promise<void> {
  child.process.kill('SIGKILL');
  await child.exited;
}

/** Record n as child.mjs writes it; throws when the bytes are not exactly that. */
function numberOf(bytes: Uint8Array): number {
  const n = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getFloat64(0);
  for (let i = 8; i < bytes.length; i++)
    if (bytes[i] !== ((n + i) & 255)) throw new Error(`record ${n} has a wrong byte at ${i}`);
  return n;
}

/** Reopens `dir` and returns K such that exactly records 0..K-1 are there, in order, intact. */
async function recovered(dir: string): Promise<number> {
  const p = await openLmdbPersistence(dir);
  try {
    const { snapshot, log } = await p.load();
    const covered = snapshot === undefined ? 0 : numberOf(snapshot);
    log.forEach((bytes, i) => expect(numberOf(bytes)).toBe(covered + i));
    return covered + log.length;
  } finally {
    await p.close();
  }
}

describe('lmdb persistence across processes', () => {
  it('refuses a directory held by another running process, naming the directory and the holder', async () => {
    const dir = newDir();
    const held = await openLmdbPersistence(dir);
    const other = start(['try-open', dir]);
    const answer = JSON.parse(await other.line(/^\{/)) as { ok: boolean; name: string; code: string; message: string };
    expect(answer).toMatchObject({ ok: false, name: 'PersistenceError', code: 'locked' });
    expect(answer.message).toContain(dir);
    expect(answer.message).toContain(`process ${process.pid}`);
    await held.close();
    expect(JSON.parse(await start(['try-open', dir]).line(/^\{/))).toEqual({ ok: true });

    // The other way round, and a holder killed with -9 leaves a lock the next opener takes over.
    const holder = start(['hold', dir]);
    await holder.line(/^open$/);
    const refused = await openLmdbPersistence(dir).then(
      () => undefined,
      (error: unknown) => error as { code: string; message: string },
    );
    expect(refused?.code).toBe('locked');
    expect(refused?.message).toContain(`process ${holder.process.pid}`);
    await kill9(holder);
    await (await openLmdbPersistence(dir)).close();
  });

  it('kill -9 at random moments: every acknowledged append survives, nothing half-written appears (60 kills)', async () => {
    const dir = newDir();
    let expected = 0;
    let acknowledged = 0;
    for (let round = 0; round < 60; round++) {
      const writer = start(['writer', dir]);
      if (round % 5 === 4) {
        // Now and then while it is still opening (creating the environment, reading, taking the lock).
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 150));
      } else {
        const ready = Number((await writer.line(/^ready /)).slice(6));
        expect(ready).toBe(expected);
        await writer.line(new RegExp(`^ack ${ready + Math.floor(Math.random() * 400)}$`));
      }
      await kill9(writer);
      const acks = writer.lines.filter((l) => l.startsWith('ack ')).map((l) => Number(l.slice(4)));
      const highest = Math.max(-1, ...acks);
      acknowledged += acks.length;
      const k = await recovered(dir);
      expect(k).toBeGreaterThan(highest);
      expect(k).toBeGreaterThanOrEqual(expected);
      expected = k;
    }
    expect(acknowledged).toBeGreaterThan(1000);
    // Sixty node processes started and killed one after another: a guard against a hang, not a time asserted (on
    // a loaded two-core machine the sixty rounds took more than the suite's 30 s).
  }, 120_000);

  it('a full disk fails the append with storage_unavailable, refuses appends until a snapshot, and reopens clean', async () => {
    const dir = newDir();
    // bash's file size limit in 1 kB blocks: 2 MB. SIGXFSZ ignored, so writes past it fail with EFBIG.
    const filler = start(['fill', dir], "trap '' XFSZ; ulimit -f 2048");
    const summary = JSON.parse(await filler.line(/^\{/)) as {
      failed: { name: string; code: string; message: string };
      after: { code: string; message: string };
      needsSnapshot: boolean;
    };
    // Neither close() nor the exit status is asserted: lmdb-js 3.5.6 damages its native heap when a commit
    // fails, and glibc aborts the process in close() or at exit in about one run of four (seen with EFBIG).
    // What this persistence promises holds either way: the typed rejections above and the data below.
    await filler.exited;
    expect(summary.failed).toMatchObject({ name: 'PersistenceError', code: 'storage_unavailable' });
    expect(summary.failed.message).toContain(dir);
    expect(summary.failed.message).toMatch(/File too large/);
    expect(summary.after.code).toBe('storage_unavailable');
    expect(summary.after.message).toMatch(/until a snapshot is written/);
    expect(summary.needsSnapshot).toBe(true);
    const acks = filler.lines.filter((l) => l.startsWith('ack ')).length;
    expect(acks).toBeGreaterThan(100);
    // Without the limit: exactly the acknowledged records, nothing of the failed commit.
    expect(await recovered(dir)).toBe(acks);
  });
});
