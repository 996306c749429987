// One copy of a change per peer: the writer pushes its update to every peer once, and a replica that receives
// something new relays a digest of it (which versions it now holds, a few bytes: wire.ts) to a few random peers,
// not the content. A peer whose push was lost learns from a digest that it lacks something and pulls it from the
// digest's sender with a sync step 1, so content goes only to a peer that showed it lacks it. This module keeps
// what that needs between frames: one pull at a time, and the digests that arrive meanwhile wait for its answer and
// are then judged again, so three digests of one lost push make one pull, not three answers of the same content.
import { decodeDigest, digestAfter, lackedBy, type WireDigest } from './wire-digest.js';

// Digests waiting for a pull's answer, one per peer; a flood from many senders drops the oldest (the cost is at
// most a repair left to anti-entropy).
const MAX_WAITING = 64;

export class DigestRelay {
  // The pull (sync step 1 for a digest) not answered yet, and the anti-entropy round it was sent in.
  private pulling: { readonly peer: string; readonly round: number } | undefined;
  private readonly waiting = new Map<string, Uint8Array>();
  private round = 0;

  /** The digest to relay after this replica applied `update`, or undefined when it carried no new structs. */
  digestOf(update: Uint8Array, localStateVector: Uint8Array): Uint8Array | undefined {
    return digestAfter(update, localStateVector);
  }

  /**
   * Whether to pull from `peer` now, for its digest: it shows versions this replica lacks (a later generation
   * included) and no pull is waiting for its answer; a digest that arrives while one waits is judged again once it
   * is answered. Throws `malformed_digest` for bytes that are not a digest.
   */
  shouldPull(peer: string, localStateVector: Uint8Array, digest: Uint8Array): boolean {
    if (!lacks(localStateVector, decodeDigest(digest))) return false;
    if (this.pulling === undefined) {
      this.pulling = { peer, round: this.round };
      return true;
    }
    this.waiting.delete(peer);
    if (this.waiting.size >= MAX_WAITING) this.waiting.delete(this.waiting.keys().next().value as string);
    this.waiting.set(peer, digest);
    return false;
  }

  /**
   * A sync step 2 from `peer` was handled. When it answered the pull, returns the peer to pull from next: the first
   * whose waiting digest still shows something this replica lacks.
   */
  answered(peer: string, localStateVector: () => Uint8Array): string | undefined {
    if (this.pulling?.peer !== peer) return undefined;
    this.pulling = undefined;
    return this.next(localStateVector);
  }

  forget(peer: string): void {
    this.waiting.delete(peer);
    if (this.pulling?.peer === peer) this.pulling = undefined;
  }

  /**
   * One anti-entropy round passed: a pull sent before the previous round counts as lost (an answer takes a round
   * trip, far less than a round), and the peer to pull from next is returned as by `answered`.
   */
  tick(localStateVector: () => Uint8Array): string | undefined {
    this.round++;
    if (this.pulling !== undefined && this.pulling.round < this.round - 1) this.pulling = undefined;
    return this.pulling === undefined ? this.next(localStateVector) : undefined;
  }

  private next(localStateVector: () => Uint8Array): string | undefined {
    if (this.waiting.size === 0) return undefined;
    const local = localStateVector();
    for (const [peer, digest] of this.waiting) {
      this.waiting.delete(peer);
      if (!lacks(local, decodeDigest(digest))) continue;
      this.pulling = { peer, round: this.round };
      return peer;
    }
    return undefined;
  }
}

function lacks(localStateVector: Uint8Array, digest: WireDigest): boolean {
  const lacking = lackedBy(localStateVector, digest);
  return lacking.laterGeneration || lacking.clocks.size > 0;
}
