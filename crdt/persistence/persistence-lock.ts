// One process per data directory: lmdb itself lets several processes open the same file, and two nodes
// writing one directory would interleave two replicas' logs. The lock is a file naming its owner (pid and
// process start time); a lock whose owner is gone (kill -9, power loss) is taken over.
import { linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { PersistenceError } from './persistence.js';

export const LOCK_FILE = 'LOCK';

interface Owner {
  readonly pid: number;
  readonly host: string;
  /** Start time of the process in clock ticks since boot (Linux /proc), to tell a reused pid apart. */
  readonly started: string | null;
}

export interface DirectoryLock {
  release(): void;
}

/** Takes the directory's lock or throws PersistenceError('locked') naming the directory and the owner. */
export function lockDirectory(dir: string): DirectoryLock {
  const path = join(dir, LOCK_FILE);
  const me: Owner = { pid: process.pid, host: hostname(), started: processStart(process.pid) };
  const text = JSON.stringify(me);
  // Written whole under a private name, then linked into place: the lock file never exists half-written,
  // and link() fails when a lock is already there.
  const temp = join(dir, `${LOCK_FILE}.${process.pid}.tmp`);
  writeFileSync(temp, text);
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        linkSync(temp, path);
        return { release: () => releaseIfMine(path, text) };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const owner = readOwner(path);
      if (owner !== undefined && isAlive(owner)) throw lockedError(dir, owner);
      takeOverStale(path, owner);
    }
    throw new PersistenceError(
      'locked',
      `data directory ${dir} is being locked by another process at the same moment; try again`,
    );
  } finally {
    unlinkSync(temp);
  }
}

/** Who holds the lock of `dir` now: a live owner (pid, host, its command line when readable), or undefined. */
export function lockHolder(
  dir: string,
): { readonly pid: number; readonly host: string; readonly command: string | null } | undefined {
  const owner = readOwner(join(dir, LOCK_FILE));
  if (owner === undefined || !isAlive(owner)) return undefined;
  return { pid: owner.pid, host: owner.host, command: owner.host === hostname() ? commandOf(owner.pid) : null };
}

function commandOf(pid: number): string | null {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .filter((arg) => arg !== '');
    return args.length === 0 ? null : args.join(' ');
  } catch {
    return null;
  }
}

function lockedError(dir: string, owner: Owner): PersistenceError {
  const who =
    owner.pid === process.pid && owner.host === hostname()
      ? 'this process (it is already open)'
      : `process ${owner.pid} on ${owner.host}`;
  return new PersistenceError(
    'locked',
    `data directory ${dir} is in use by ${who}: two nodes must not share a data directory. Stop that node, or ` +
      `give this one its own directory. If no such process runs, delete ${join(dir, LOCK_FILE)}.`,
  );
}

// Moves the stale lock aside first: of several processes taking it over at once, only one rename wins.
function takeOverStale(path: string, seen: Owner | undefined): void {
  const aside = `${path}.stale.${process.pid}`;
  try {
    renameSync(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const moved = readOwner(aside);
  if (moved !== undefined && (seen === undefined || moved.pid !== seen.pid) && isAlive(moved)) {
    // A live owner locked in between: put its lock back.
    try {
      linkSync(aside, path);
    } catch {
      // It cannot be restored only when yet another lock took its place; that one holds now.
    }
  }
  unlinkSync(aside);
}

function readOwner(path: string): Owner | undefined {
  try {
    const value: unknown = JSON.parse(readFileSync(path, 'utf8'));
    if (typeof value !== 'object' || value === null) return undefined;
    const { pid, host, started } = value as Record<string, unknown>;
    if (!Number.isSafeInteger(pid) || typeof host !== 'string') return undefined;
    return { pid: pid as number, host, started: typeof started === 'string' ? started : null };
  } catch {
    // Unreadable or gone: nobody can be shown to hold it.
    return undefined;
  }
}

function isAlive(owner: Owner): boolean {
  // A directory shared over a network file system: the owner cannot be checked from here, so it holds.
  if (owner.host !== hostname()) return true;
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const started = processStart(owner.pid);
  return owner.started === null || started === null || started === owner.started;
}

/** The process's start time from /proc (field 22 of stat), or null where there is no /proc. */
function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: fields are counted after its end.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

function releaseIfMine(path: string, text: string): void {
  try {
    if (readFileSync(path, 'utf8') === text) unlinkSync(path);
  } catch {
    // Already gone: nothing to release.
  }
}
