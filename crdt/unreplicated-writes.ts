// How long this replica's own writes have waited to reach every peer: each local update is remembered with
// the replica's state vector right after it and when it happened, and forgotten once every peer's latest
// state vector covers that vector. The age of the oldest remembered one is the replication lag an operator
// alerts on. A peer's vector arrives with its anti-entropy step 1, so the figure lags by about that period.
import { lacksUpdatesOf } from './wire.js';

/** At most this many writes are remembered; beyond it the newest entry is updated instead (its age is kept). */
const MAX_ENTRIES = 256;

export class UnreplicatedWrites {
  private entries: Array<{ readonly at: number; vector: Uint8Array }> = [];

  constructor(private readonly now: () => number) {}

  /** A local write happened; `vector` is the replica's state vector after it. */
  note(vector: Uint8Array): void {
    const last = this.entries[this.entries.length - 1];
    if (this.entries.length >= MAX_ENTRIES && last !== undefined) {
      // The oldest entries decide the age; a newer write only needs to be covered too.
      last.vector = vector;
      return;
    }
    this.entries.push({ at: this.now(), vector });
  }

  /**
   * The age (ms) of the oldest local write some peer's latest vector does not cover, or null when every
   * peer has them all (or there is no peer). A peer that sent no vector yet has none of them.
   */
  oldestAgeMs(peerVectors: ReadonlyArray<Uint8Array | undefined>): number | null {
    if (peerVectors.length === 0) {
      this.entries = [];
      return null;
    }
    const covered = (vector: Uint8Array): boolean =>
      peerVectors.every((peer) => peer !== undefined && lacksUpdatesOf(peer, vector) === false);
    // Vectors only grow: once an entry is covered, every older one is too.
    let firstUncovered = this.entries.length;
    for (let i = this.entries.length - 1; i >= 0; i--) {
      if (covered((this.entries[i] as { vector: Uint8Array }).vector)) break;
      firstUncovered = i;
    }
    this.entries = this.entries.slice(firstUncovered);
    const oldest = this.entries[0];
    return oldest === undefined ? null : Math.max(0, this.now() - oldest.at);
  }
}
