// The ground truth behind "no send lost, none processed twice" in the issue 23 tests: every increment the demo
// Counter of a node process applied, as test/e2e/hooks/record-processing.mjs has the process write it, and the
// tally of a run's sends against it (lost, processed twice, on one host incarnation or across a crash).
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './harness.js';

const HOOK = pathToFileURL(join(ROOT, 'test', 'e2e', 'hooks', 'record-processing.mjs')).href;

/** One increment applied by an entity: on which process (one host incarnation), with which tag, giving which value. */
export interface Processing {
  readonly pid: number;
  readonly entityId: string;
  /** The send's tag; '' for an increment sent without one (an ask). */
  readonly tag: string;
  readonly value: number;
  readonly at: number;
}

/** One reliable increment a test sent, and how its HTTP call ended. */
export interface SendRecord {
  readonly tag: string;
  readonly entityId: string;
  readonly via: string;
  readonly sentAt: number;
  doneAt?: number;
  /** 200 once the node answered `processed`; 0 for a network failure. */
  status?: number;
  error?: string;
}

/** The directory node processes write their processing logs to, and the node options that make them. */
export class ProcessingLog {
  readonly dir: string;

  constructor(parentDir: string) {
    this.dir = join(parentDir, 'processed');
    mkdirSync(this.dir, { recursive: true });
  }

  /** Options for the `node` executable that load the recorder into a node process. */
  get nodeArgs(): string[] {
    return ['--import', `${HOOK}?dir=${encodeURIComponent(this.dir)}`];
  }

  read(): Processing[] {
    const processings: Processing[] = [];
    for (const file of readdirSync(this.dir)) {
      const pid = Number(file.replace(/\.log$/, ''));
      for (const line of readFileSync(join(this.dir, file), 'utf8').split('\n')) {
        const [entityId, tag, value, at] = line.split('\t');
        if (entityId === undefined || tag === undefined || value === undefined || at === undefined) continue;
        processings.push({ pid, entityId, tag, value: Number(value), at: Number(at) });
      }
    }
    return processings.sort((a, b) => a.at - b.at);
  }
}

export interface Tally {
  readonly sent: number;
  readonly resolved: number;
  /** Sends whose call did not end in `processed`, described. */
  readonly failed: readonly string[];
  /** Tags of sends answered `processed` that no entity ever applied. */
  readonly lost: readonly string[];
  /** Sends applied more than once in all (at-least-once after a crash). */
  readonly processedTwice: number;
  /** Tags applied more than once by one process: duplicates its host should have suppressed. */
  readonly twiceOnOneHost: readonly string[];
  /** When the last of these sends was applied (epoch ms); 0 when none was. */
  readonly lastProcessedAt: number;
}

/** Counts `sends` against what the node processes applied. */
export function tally(sends: readonly SendRecord[], processings: readonly Processing[]): Tally {
  const byTag = new Map<string, Processing[]>();
  for (const processing of processings) {
    if (processing.tag === '') continue;
    const list = byTag.get(processing.tag) ?? [];
    list.push(processing);
    byTag.set(processing.tag, list);
  }
  let processedTwice = 0;
  let lastProcessedAt = 0;
  const lost: string[] = [];
  const twiceOnOneHost: string[] = [];
  for (const send of sends) {
    const applied = byTag.get(send.tag) ?? [];
    if (send.status === 200 && applied.length === 0) lost.push(send.tag);
    if (applied.length > 1) processedTwice++;
    if (new Set(applied.map((p) => p.pid)).size < applied.length) twiceOnOneHost.push(send.tag);
    for (const p of applied) lastProcessedAt = Math.max(lastProcessedAt, p.at);
  }
  const failed = sends
    .filter((send) => send.status !== 200)
    .map((send) => `${send.tag} (${send.entityId} via ${send.via}): ${send.status ?? 'pending'} ${send.error ?? ''}`);
  return {
    sent: sends.length,
    resolved: sends.length - failed.length,
    failed,
    lost,
    processedTwice,
    twiceOnOneHost,
    lastProcessedAt,
  };
}

/**
 * Entities whose applied values are not exactly 1, 2, ..., n: a value that restarts (state lost in a move) or
 * repeats shows here, with the values seen. Compared as a set, not in log order: two processes' clocks may
 * give the old host's last increment and the new host's first the same millisecond.
 */
export function valueBreaks(processings: readonly Processing[], entities: readonly string[]): string[] {
  const breaks: string[] = [];
  for (const entityId of entities) {
    const values = processings.filter((p) => p.entityId === entityId).map((p) => p.value);
    const sorted = [...values].sort((a, b) => a - b);
    if (sorted.some((value, i) => value !== i + 1)) breaks.push(`${entityId}: ${values.join(',')}`);
  }
  return breaks;
}
