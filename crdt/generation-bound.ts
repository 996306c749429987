// Which generation a peer's frame may claim. A generation only grows by compaction, one at a time, so an honest
// peer is never far ahead of what this replica has seen; a forged frame claiming generation 2^53 - 1 would
// otherwise move this replica (and, relayed, every replica) to the end of the integer range, where the next
// compaction makes every frame undecodable. The rule: a frame may claim at most one beyond the highest
// generation this replica holds or has accepted from a live member (a current peer). A frame from a live
// member that claims more is not applied but raises what this replica accepts from that member by one, so a
// peer that honestly compacted several times while this replica was away is caught up with one round trip
// per generation, and a forger needs 2^53 frames to do what one frame did before. A frame from anyone else
// claiming more is rejected.
import { PlacementStoreError } from './errors.js';

export type GenerationVerdict = 'accept' | 'defer';

export class GenerationBound {
  // Per live peer, the highest generation accepted from it (or ratcheted to, one step per deferred frame).
  private readonly accepted = new Map<string, number>();
  private deferredFrames = 0;

  /** The highest generation a frame may claim now, given this replica's own. */
  ceiling(own: number): number {
    let highest = own;
    for (const generation of this.accepted.values()) if (generation > highest) highest = generation;
    return highest + 1;
  }

  /**
   * Judges a frame claiming `claimed` from `peer` (`member`: a current peer). Returns 'accept' (and records
   * the claim) or 'defer' (a member ahead by more than one: not applied, one step recorded); throws
   * `implausible_generation` for a non-member's claim beyond the ceiling.
   */
  judge(peer: string, member: boolean, claimed: number, own: number): GenerationVerdict {
    const ceiling = this.ceiling(own);
    if (claimed <= ceiling) {
      if (member) this.accepted.set(peer, Math.max(claimed, this.accepted.get(peer) ?? 0));
      return 'accept';
    }
    if (!member) {
      throw new PlacementStoreError(
        'implausible_generation',
        `frame claims generation ${claimed}, more than one beyond ${ceiling - 1}, the highest this replica has seen from a member; a node that is not a member cannot move it`,
      );
    }
    this.accepted.set(peer, Math.max(ceiling, this.accepted.get(peer) ?? 0));
    this.deferredFrames++;
    return 'defer';
  }

  /** The highest generation accepted from `peer`, or 0. */
  of(peer: string): number {
    return this.accepted.get(peer) ?? 0;
  }

  forget(peer: string): void {
    this.accepted.delete(peer);
  }

  /** Frames from members deferred because they claimed a generation too far ahead (cumulative). */
  get deferred(): number {
    return this.deferredFrames;
  }
}
