// What `local-cluster` checks around a start: that no running process holds a node data directory it is
// about to wipe or reuse (the lock names the process), and, when a node exits during start, why: the
// node's own error, read from what this run wrote to its log file.
import type { ChildProcess } from 'node:child_process';
import { closeSync, openSync, readSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CodedError, lockHolder } from '../../crdt/index.js';

/** A start refused before anything was deleted or spawned; main() prints it as `error: <message>`. */
export class LocalClusterError extends CodedError<'local_cluster_refused'> {
  override readonly name = 'LocalClusterError';
  constructor(message: string) {
    super('local_cluster_refused', message);
  }
}

/**
 * Throws LocalClusterError naming the directory and the process when a live process holds the lock of a
 * node directory: of node-1..node-N, and with `fresh` of any directory under `dataDir` (all are deleted).
 */
export function refuseHeldDirectories(dataDir: string, nodes: number, fresh: boolean): void {
  const candidates = fresh
    ? subdirectories(dataDir)
    : Array.from({ length: nodes }, (_, i) => join(dataDir, `node-${i + 1}`));
  for (const dir of candidates) {
    const holder = lockHolder(dir);
    if (holder === undefined) continue;
    const who = `process ${holder.pid}${holder.host === '' ? '' : ` on ${holder.host}`}${holder.command === null ? '' : ` (${holder.command})`}`;
    const what = fresh ? `--fresh would delete ${dataDir}, but` : 'cannot start:';
    throw new LocalClusterError(
      `${what} the data directory ${dir} is in use by ${who}. A cluster is already running on it: stop it first ` +
        '(Ctrl-C where it runs), or give this one another --data-dir (and other ports).',
    );
  }
}

function subdirectories(dir: string): string[] {
  try {
    return readdirSync(dir)
      .map((name) => join(dir, name))
      .filter((path) => {
        try {
          return statSync(path).isDirectory();
        } catch {
          return false;
        }
      });
  } catch {
    // No data directory yet: nothing to wipe.
    return [];
  }
}

/** Bytes of a node's log this run wrote are read at most this far back: the reason is at the end. */
const TAIL_BYTES = 64 * 1024;

/** The message a start fails with when node `n` exited: how it ended, the node's own reason, its log. */
export function startFailure(
  n: number,
  address: string,
  child: ChildProcess,
  log: { readonly path: string; readonly from: number },
): string {
  const how = child.signalCode ?? `code ${String(child.exitCode)}`;
  const reason = reasonIn(tailOf(log.path, log.from));
  return `node ${n} (${address}) exited while starting (${how})${reason === undefined ? '' : `: ${reason}`}; log: ${log.path}`;
}

function tailOf(path: string, from: number): string {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const size = statSync(path).size;
    const start = Math.max(from, size - TAIL_BYTES);
    const buffer = Buffer.alloc(Math.max(0, size - start));
    readSync(fd, buffer, 0, buffer.length, start);
    return buffer.toString('utf8');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The CLI's `error: ...` line (what main() prints for a failed `node`), else the last error-level log record. */
export function reasonIn(text: string): string | undefined {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] as string;
    if (line.startsWith('error: ')) return line.slice('error: '.length);
  }
  for (let i = lines.length - 1; i >= 0; i--) {
    const record = parsed(lines[i] as string);
    if (
      record !== undefined &&
      typeof record.level === 'number' &&
      record.level >= 50 &&
      typeof record.msg === 'string'
    ) {
      return typeof record.err === 'string' ? `${record.msg}: ${record.err}` : record.msg;
    }
  }
  return undefined;
}

function parsed(line: string): { level?: unknown; msg?: unknown; err?: unknown } | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null
      ? (value as { level?: unknown; msg?: unknown; err?: unknown })
      : undefined;
  } catch {
    return undefined;
  }
}
