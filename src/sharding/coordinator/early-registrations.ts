// Registrations that reached the coordinator before the membership it sees listed their node: a node that just
// came Up registers at once, and the coordinator's node may learn of the join a gossip round later. Ignoring
// such a registration left the new node without a coordinator (and every message it routed waiting) until its
// next retry, up to a retry interval later; remembering who tried lets the coordinator ask them to register
// again the moment they are members.
import { isGone, type MemberInfo } from '../../cluster/member.js';

/** Most addresses remembered; a flood of registrations from non-members cannot grow this without bound. */
export const MAX_EARLY_REGISTRATIONS = 256;

export class EarlyRegistrations {
  private readonly waiting = new Set<string>();

  /** A registration from `from`, not a live member yet, was ignored. */
  note(from: string): void {
    if (this.waiting.has(from) || this.waiting.size >= MAX_EARLY_REGISTRATIONS) return;
    this.waiting.add(from);
  }

  /** The noted addresses that are live members now, forgotten here: each is to be asked to register. */
  admitted(members: ReadonlyMap<string, MemberInfo>): string[] {
    const admitted = [...this.waiting].filter((address) => {
      const member = members.get(address);
      return member !== undefined && !isGone(member.status);
    });
    for (const address of admitted) this.waiting.delete(address);
    return admitted;
  }

  get size(): number {
    return this.waiting.size;
  }
}
