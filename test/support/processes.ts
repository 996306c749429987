// Real OS processes a test starts: one spawned process with its log file and exit, waiting for an exit with a
// deadline, whether a pid is gone, a process's children, and the first matching line across their pino logs.
import type { ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

export interface ExitInfo {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** One spawned OS process with its log file. */
export class Proc {
  readonly exited: Promise<ExitInfo>;
  private exitInfo: ExitInfo | undefined;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
    readonly logFile: string,
    /** Leader of its own process group: killAll() kills the group, descendants included. */
    readonly detached = false,
  ) {
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      });
      // A process that could not be spawned never emits 'exit'; without this, killAll would wait forever.
      child.once('error', () => {
        if (child.pid !== undefined) return;
        this.exitInfo = { code: null, signal: null };
        resolve(this.exitInfo);
      });
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get hasExited(): boolean {
    return this.exitInfo !== undefined;
  }

  signal(signal: NodeJS.Signals): void {
    if (!this.hasExited) this.child.kill(signal);
  }

  logTail(lines = 40): string {
    return this.log().split('\n').slice(-lines).join('\n');
  }

  log(): string {
    try {
      return readFileSync(this.logFile, 'utf8');
    } catch {
      return '';
    }
  }
}

/** The process's exit, or an error once `ms` passed without one. */
export async function exitWithin(proc: Proc, ms: number): Promise<ExitInfo> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      proc.exited,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${proc.name} still running ${ms} ms after the signal`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** True when no process with this pid exists (a zombie counts as gone: it runs nothing and holds no port). */
export function pidGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** Pids whose parent is `parent` (Linux /proc); empty where /proc is not available. */
export function childPids(parent: number): number[] {
  const pids: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return pids;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === parent) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

/** The earliest pino `time` at or after `after` of a log line whose msg contains `text`, across these processes. */
export function firstLogAt(processes: readonly Proc[], text: string, after: number): number | undefined {
  let first: number | undefined;
  for (const proc of processes) {
    for (const line of proc.log().split('\n')) {
      if (!line.includes(text)) continue;
      try {
        const entry = JSON.parse(line) as { time?: unknown; msg?: unknown };
        if (
          typeof entry.time !== 'number' ||
          typeof entry.msg !== 'string' ||
          !entry.msg.includes(text) ||
          entry.time < after
        )
          continue;
        if (first === undefined || entry.time < first) first = entry.time;
      } catch {
        // Not a pino line.
      }
    }
  }
  return first;
}
