// What this node saw of members that left the view: each member that reached Up and then was removed (or
// pruned into a tombstone) while this node held its record, with its Up number, its downing's decision time
// and when this node saw it go. The view (MembershipCore.members) drops removed records, and gossip prunes
// them into tombstones that keep neither; a new coordinator needs them to tell an older member it saw leave,
// whose down-removal margin it can date, from one it knows nothing of (docs/design.md, "Confirmed deaths").
// Local knowledge only, never gossiped: a node that never held a record has no departure for it.
import type { DepartedMember } from '../member.js';
import type { GossipState, MemberRecord } from './gossip.js';

/** Departures kept at most; past it the oldest goes (a forgotten one is treated as never seen: the safe side). */
export const DEPARTURES_LIMIT = 4_096;

export class Departures {
  /** By member key (address#incarnation); insertion order is age. */
  private readonly byKey = new Map<string, DepartedMember>();

  constructor(
    /** Departures older than this are forgotten (the tombstones' lifetime: nothing older is in any gossip). */
    private readonly keepMs: number,
    private readonly limit = DEPARTURES_LIMIT,
  ) {}

  /**
   * Records the members that reached Up and are removed in `after` or gone from it (pruned into tombstones),
   * unless already recorded. Their time is now: a record first seen already removed, or pruned, departed no
   * later than that, so a margin dated from it is never shorter than the real one.
   */
  observe(before: GossipState, after: GossipState, now: number): void {
    if (before.members === after.members) return;
    for (const [key, record] of after.members) if (record.status === 'removed') this.add(key, record, now);
    for (const [key, record] of before.members) if (!after.members.has(key)) this.add(key, record, now);
    this.forget(now);
  }

  /** Every departure remembered, oldest first. */
  list(): ReadonlyArray<DepartedMember> {
    return [...this.byKey.values()];
  }

  private add(key: string, record: MemberRecord, now: number): void {
    // One that never reached Up had no Up number to miss. A record gone from the view was pruned (a tombstone):
    // whatever status this node last held for it, it departed no later than now.
    if (this.byKey.has(key) || record.upNumber <= 0) return;
    const downed = record.downedAtMs === undefined ? {} : { downedAtMs: record.downedAtMs };
    this.byKey.set(key, { address: record.address, upNumber: record.upNumber, removedAtMs: now, ...downed });
  }

  private forget(now: number): void {
    for (const [key, departed] of this.byKey) {
      if (this.byKey.size <= this.limit && departed.removedAtMs >= now - this.keepMs) break;
      this.byKey.delete(key);
    }
  }
}
