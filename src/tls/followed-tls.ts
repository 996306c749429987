// TLS material that follows its files: read and checked at start (a problem throws), then read again whenever one of
// the files changes (or reload() is called, on SIGHUP). A change is taken whole or not at all: a certificate replaced
// before its key, or a bad file, leaves the material in force as it was, and problems() says why until the files are
// good again. Listeners apply new material to new connections only, so established ones are never dropped.
import { unwatchFile, watchFile, type Stats } from 'node:fs';
import type { Logger } from '../logging.js';
import { loadTlsMaterial, type TlsFiles, type TlsMaterial } from './tls-files.js';

export interface FollowedTlsOptions {
  /** Called with every change that was taken (the listener swaps its secure context). */
  readonly onChange?: (material: TlsMaterial) => void;
  readonly logger?: Logger;
  /** How often the files are checked for a change, in ms. Default 1000. */
  readonly intervalMs?: number;
  /** The clock validity is judged by. Default Date.now. */
  readonly now?: () => number;
  /** What the material is for, in log lines and problems: `management HTTPS`, `cluster TLS`. */
  readonly purpose?: string;
}

export class FollowedTls {
  private material: TlsMaterial;
  private problem: string | undefined;
  private readonly paths: string[];
  private readonly changed = (now: Stats, before: Stats): void => {
    if (now.mtimeMs !== before.mtimeMs || now.size !== before.size) this.reload();
  };

  constructor(
    private readonly files: TlsFiles,
    private readonly options: FollowedTlsOptions = {},
  ) {
    this.material = loadTlsMaterial(files, this.now());
    this.paths = [files.cert, files.key, ...(files.ca === undefined ? [] : [files.ca])];
    const interval = options.intervalMs ?? 1_000;
    for (const path of this.paths) watchFile(path, { interval, persistent: false }, this.changed);
  }

  /** The material in force. */
  get current(): TlsMaterial {
    return this.material;
  }

  /** Why the files' last change is not in force; empty when it is. */
  problems(): string[] {
    return this.problem === undefined ? [] : [this.problem];
  }

  /** Reads the files again; true when the new material was taken. */
  reload(): boolean {
    const purpose = this.options.purpose ?? 'TLS';
    try {
      this.material = loadTlsMaterial(this.files, this.now());
      this.problem = undefined;
      this.options.onChange?.(this.material);
      this.options.logger?.info({ subject: this.material.subject }, `${purpose} material reloaded`);
      return true;
    } catch (error) {
      const problem = `${purpose}: the files' last change is not in force, the earlier material is: ${
        error instanceof Error ? error.message : String(error)
      }`;
      if (problem !== this.problem) this.options.logger?.warn(problem);
      this.problem = problem;
      return false;
    }
  }

  /** Stops following the files. */
  close(): void {
    // This listener only: another follower of the same file (the cluster's and the API's certificate) keeps its own.
    for (const path of this.paths) unwatchFile(path, this.changed);
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}
