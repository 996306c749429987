// The down-removal margin (Pekko's down-removal-margin): when this coordinator first saw each member down, and
// the timer that re-runs the membership check when the earliest running margin ends. A node downed by the
// others may not know it yet and keeps running its shards until gossip tells it, so for marginMs they are
// not started elsewhere.
import type { Cancellable, Scheduler } from '../../cluster/scheduler.js';
import type { MemberInfo } from '../../cluster/member.js';

export class DownRemovalMargin {
  private readonly downSince = new Map<string, number>();
  private timer: Cancellable | undefined;
  private stopped = false;

  constructor(
    private readonly marginMs: number,
    private readonly scheduler: Scheduler,
    /** Called when a margin ends (the caller re-runs its membership check). */
    private readonly onMarginEnd: () => void,
  ) {}

  /** Members this view shows down start their margin now, unless it started earlier. */
  sawDown(members: Iterable<MemberInfo>, now: number): void {
    for (const member of members) {
      const key = member.address.toString();
      if (member.status === 'down' && !this.downSince.has(key)) this.downSince.set(key, now);
    }
  }

  /**
   * A member gone from the view (or down, or removed) while its region still held shards it did not hand
   * off: downed by the others, whether this view shows it down or, the leader having removed it in the same
   * gossip round, not at all any more. Its margin starts now unless it started earlier.
   */
  sawGone(member: string, now: number): void {
    if (!this.downSince.has(member)) this.downSince.set(member, now);
  }

  /** True once a margin for the member started (running or ended, until forgotten). */
  has(member: string): boolean {
    return this.downSince.has(member);
  }

  /** True while `member` was seen down less than marginMs ago. */
  inMargin(member: string, now: number): boolean {
    const since = this.downSince.get(member);
    return since !== undefined && now < since + this.marginMs;
  }

  /** True while a member for which `matches` holds is in its margin. */
  anyInMargin(matches: (member: string) => boolean, now: number): boolean {
    for (const member of this.downSince.keys()) if (matches(member) && this.inMargin(member, now)) return true;
    return false;
  }

  /**
   * Arms the timer for the earliest margin still running, and forgets the ended margins of members for which
   * `forgettable` holds (gone from both the view and the registry: nothing refers to them any more).
   */
  schedule(now: number, forgettable: (member: string) => boolean): void {
    this.timer?.cancel();
    this.timer = undefined;
    let next = Infinity;
    for (const [member, since] of [...this.downSince]) {
      const end = since + this.marginMs;
      if (end > now) next = Math.min(next, end);
      else if (forgettable(member)) this.downSince.delete(member);
    }
    if (next === Infinity || this.stopped) return;
    this.timer = this.scheduler.setTimeout(() => {
      this.timer = undefined;
      if (!this.stopped) this.onMarginEnd();
    }, next - now);
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
  }
}
