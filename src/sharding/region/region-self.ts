// This node as its region sees it in the membership: whether it hosts the type or only routes (its roles,
// fixed the first time it appears), and whether it has stopped being a member after it had joined.
import { isGone, type MemberInfo } from '../../cluster/member.js';

export type RegionMode = 'unknown' | 'host' | 'proxy';

export class RegionSelf {
  private mode: RegionMode = 'unknown';
  /** Whether this node has appeared in the membership yet (before joining, its absence means nothing). */
  private seen = false;

  constructor(private readonly role: string | undefined) {}

  /** The mode once known (cheap: asked for every message). */
  get known(): RegionMode {
    return this.mode;
  }

  /** Roles never change, so the mode is fixed the first time this node (`me`) appears. */
  resolve(me: MemberInfo | undefined): RegionMode {
    if (this.mode !== 'unknown' || me === undefined) return this.mode;
    this.mode = this.role === undefined || (me.roles ?? []).includes(this.role) ? 'host' : 'proxy';
    return this.mode;
  }

  /** True when this node, seen as a member before, is now removed or gone (`me`: its entry now). */
  gone(me: MemberInfo | undefined): boolean {
    if (me !== undefined) this.seen = true;
    return this.seen && (me === undefined || isGone(me.status));
  }
}
