// Notices when the files a node commits to are no longer the files on disk: lmdb keeps writing into an open
// descriptor after `rm -rf` of its directory, a `mv`, or a wipe by another tool, and its commits then
// succeed into a file nobody will ever read again. The watch compares the identity (device and inode) of
// the open data file and of this process's lock file with what their paths name now; any difference is a
// problem that stops acknowledgements for good (a restart starts from what is at the path).
import { statSync } from 'node:fs';

/** Device and inode of a file: what stays the same for one file however it is renamed or rewritten. */
export interface FileIdentity {
  readonly dev: number;
  readonly ino: number;
}

export interface WatchedFile {
  /** What the file is, for messages: 'data file', 'lock file'. */
  readonly role: string;
  readonly path: string;
  readonly identity: FileIdentity;
}

/** The identity of the file at `path` now, or undefined when nothing is there. */
export function identityOf(path: string): FileIdentity | undefined {
  try {
    const { dev, ino } = statSync(path);
    return { dev, ino };
  } catch {
    return undefined;
  }
}

/** What is wrong with `files` on disk now, or null when every path still names the file that was opened. */
export function fileProblem(files: readonly WatchedFile[]): string | null {
  for (const { role, path, identity } of files) {
    const now = identityOf(path);
    if (now === undefined) return `the ${role} ${path} was deleted or moved while this node had it open`;
    if (now.dev !== identity.dev || now.ino !== identity.ino)
      return `the ${role} ${path} was replaced by another file while this node had it open`;
  }
  return null;
}

/** How to get out of a data directory deleted or replaced under a running node. */
export const LOST_FILES_HINT =
  'writes are no longer committed to disk. To recover: restart this node; it starts from what is at its data ' +
  'directory now (re-syncing the placements from the other nodes), and the lock keeps other nodes off it';

/** The default period of the background check (commits check on their own, before and after). */
export const DEFAULT_FILE_CHECK_INTERVAL_MS = 1000;

/**
 * Checks `files` every `intervalMs` (and whenever `check()` is called) and reports the first problem once to
 * every listener. The timer does not keep the process alive.
 */
export class FileWatch {
  private problem: string | null = null;
  private readonly listeners = new Set<(problem: string) => void>();
  private readonly timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly files: readonly WatchedFile[],
    intervalMs: number,
  ) {
    if (intervalMs > 0) {
      this.timer = setInterval(() => this.check(), intervalMs);
      this.timer.unref();
    }
  }

  /** The problem found so far (it stays once found), checking the files again while there is none. */
  check(): string | null {
    if (this.problem !== null) return this.problem;
    const found = fileProblem(this.files);
    if (found === null) return null;
    this.problem = found;
    clearInterval(this.timer);
    for (const listener of this.listeners) {
      try {
        listener(found);
      } catch {
        // A failing listener must not keep the others from hearing of it.
      }
    }
    return found;
  }

  get current(): string | null {
    return this.problem;
  }

  onProblem(listener: (problem: string) => void): () => void {
    if (this.problem !== null) listener(this.problem);
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  stop(): void {
    clearInterval(this.timer);
    this.listeners.clear();
  }
}
