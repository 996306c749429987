// Hybrid logical clock (Kulkarni et al., 2014): timestamps ordered by wallMs, then counter, then node.
// A timestamp stays a (number, number, string) tuple: 48 + 16 bits do not fit a JS number exactly.
import { MAX_HLC_COUNTER, MAX_NODE_LENGTH, PlacementStoreError, describe, nameProblem } from './errors.js';

/**
 * A hybrid-logical-clock timestamp, ordered by `wallMs`, then `counter`, then `node` (see `compareHlc`): the version
 * every placement write carries, so conflicting writes resolve the same way on every replica.
 */
export interface Hlc {
  readonly wallMs: number;
  readonly counter: number;
  readonly node: string;
}

/** Options of a HybridLogicalClock. */
export interface HybridLogicalClockOptions {
  /** Wall clock in milliseconds; Date.now by default. Fractions are floored. */
  readonly now?: () => number;
  /**
   * A remote timestamp further ahead of the local wall clock than this does not move the clock. The store
   * goes further and does not let such a value count until the clock reaches it (admission.ts).
   */
  readonly maxDriftMs?: number;
  /** Told about every remote timestamp refused for drift (the clock itself stays put). */
  readonly onDrift?: (remote: Hlc, localWallMs: number) => void;
}

/**
 * How far ahead of the local wall clock a remote timestamp may be and still move the clock (60 s); further ahead it
 * is counted and logged instead.
 */
export const DEFAULT_MAX_DRIFT_MS = 60_000;

/** Total order: wallMs, then counter, then node (by UTF-16 code units, the same on every replica). */
export function compareHlc(a: Hlc, b: Hlc): number {
  if (a.wallMs !== b.wallMs) return a.wallMs < b.wallMs ? -1 : 1;
  if (a.counter !== b.counter) return a.counter < b.counter ? -1 : 1;
  if (a.node === b.node) return 0;
  return a.node < b.node ? -1 : 1;
}

/** The smallest timestamp of `node` that is greater than `hlc`: one counter step, carrying into wallMs. */
export function successor(hlc: Hlc, node: string): Hlc {
  return hlc.counter >= MAX_HLC_COUNTER ? freeze(hlc.wallMs + 1, 0, node) : freeze(hlc.wallMs, hlc.counter + 1, node);
}

/** Why `value` is not a well-formed timestamp, or null when it is. */
export function hlcProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null) return `expected an object, got ${describe(value)}`;
  const { wallMs, counter, node } = value as Record<string, unknown>;
  if (typeof wallMs !== 'number' || !Number.isSafeInteger(wallMs) || wallMs < 0) {
    return `wallMs must be a non-negative safe integer, got ${describe(wallMs)}`;
  }
  if (typeof counter !== 'number' || !Number.isInteger(counter) || counter < 0 || counter > MAX_HLC_COUNTER) {
    return `counter must be an integer in 0..${MAX_HLC_COUNTER}, got ${describe(counter)}`;
  }
  const nodeProblem = nameProblem(node, MAX_NODE_LENGTH);
  return nodeProblem === null ? null : `node ${nodeProblem}`;
}

/**
 * A hybrid logical clock for one node: timestamps that never go backwards, follow the wall clock when it is ahead,
 * and absorb (bounded) remote timestamps, so a write made after seeing another orders after it.
 */
export class HybridLogicalClock {
  readonly node: string;
  private readonly now: () => number;
  private readonly maxDriftMs: number;
  private readonly onDrift: ((remote: Hlc, localWallMs: number) => void) | undefined;
  private wallMs = 0;
  private counter = 0;

  constructor(node: string, options: HybridLogicalClockOptions = {}) {
    const problem = nameProblem(node, MAX_NODE_LENGTH);
    if (problem !== null) throw new PlacementStoreError('invalid_option', `clock node name ${problem}`);
    const maxDriftMs = options.maxDriftMs ?? DEFAULT_MAX_DRIFT_MS;
    if (!Number.isFinite(maxDriftMs) || maxDriftMs < 0) {
      throw new PlacementStoreError(
        'invalid_option',
        `maxDriftMs must be a finite number >= 0, got ${describe(maxDriftMs)}`,
      );
    }
    this.node = node;
    this.now = options.now ?? Date.now;
    this.maxDriftMs = maxDriftMs;
    this.onDrift = options.onDrift;
  }

  /** Timestamp of a local event: never smaller than any timestamp this clock produced or accepted before. */
  tick(): Hlc {
    const pt = this.wall();
    if (pt > this.wallMs) {
      this.wallMs = pt;
      this.counter = 0;
    } else {
      this.bump(this.counter + 1);
    }
    return freeze(this.wallMs, this.counter, this.node);
  }

  /**
   * Merges a remote timestamp and returns the timestamp of the receive event. A remote wallMs more than
   * maxDriftMs ahead of the local wall clock is refused (reported through onDrift) and the event is
   * stamped as a plain local tick, so one node with a wrong clock cannot drag every other node along.
   */
  receive(remote: Hlc): Hlc {
    const problem = hlcProblem(remote);
    if (problem !== null) throw new PlacementStoreError('invalid_hlc', `remote timestamp rejected: ${problem}`);
    const pt = this.wall();
    if (remote.wallMs - pt > this.maxDriftMs) {
      this.onDrift?.(remote, pt);
      return this.tick();
    }
    const l = Math.max(this.wallMs, remote.wallMs, pt);
    let c: number;
    if (l === this.wallMs && l === remote.wallMs) c = Math.max(this.counter, remote.counter) + 1;
    else if (l === this.wallMs) c = this.counter + 1;
    else if (l === remote.wallMs) c = remote.counter + 1;
    else c = 0;
    this.wallMs = l;
    this.bump(c);
    return freeze(this.wallMs, this.counter, this.node);
  }

  private wall(): number {
    const pt = Math.floor(this.now());
    if (!Number.isSafeInteger(pt) || pt < 0) {
      throw new PlacementStoreError(
        'invalid_option',
        `now() must return a non-negative safe integer, got ${describe(pt)}`,
      );
    }
    return pt;
  }

  private bump(counter: number): void {
    if (counter > MAX_HLC_COUNTER) {
      this.wallMs += 1;
      this.counter = 0;
    } else {
      this.counter = counter;
    }
  }
}

function freeze(wallMs: number, counter: number, node: string): Hlc {
  return Object.freeze({ wallMs, counter, node });
}
