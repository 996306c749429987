// A region's home cache: which region hosts each shard as this node last heard, and which members it sees
// as unreachable now (messages for shards homed there wait in the buffer instead of a likely dead connection),
// and, per shard whose home was a member that is gone, that former home until the shard answers again (the
// failover's `first-message` phase).
import { isGone, type MemberInfo } from '../../cluster/member.js';

export class HomeCache {
  /** `onFirstAnswer(member)`: a shard that was homed on the gone `member` answered for the first time since. */
  constructor(private readonly onFirstAnswer: (member: string) => void = () => {}) {}

  /** Shard -> region address (this node's own key for local shards). */
  private readonly homes = new Map<number, string>();
  private unreachable: ReadonlySet<string> = new Set();
  /** Shard -> the gone member it was homed on, until an answer from the shard (at most one entry per shard). */
  private readonly formerHomes = new Map<number, string>();

  get(shardId: number): string | undefined {
    return this.homes.get(shardId);
  }

  has(shardId: number): boolean {
    return this.homes.has(shardId);
  }

  set(shardId: number, region: string): void {
    this.homes.set(shardId, region);
  }

  delete(shardId: number): void {
    this.homes.delete(shardId);
  }

  /** True when `region` is a member this node sees as unreachable. */
  isUnreachable(region: string): boolean {
    return this.unreachable.has(region);
  }

  /**
   * Forgets homes on members that are gone, so the next message asks for a new home (Pekko drops the regions
   * of removed members the same way), and notes who is unreachable now.
   */
  update(members: ReadonlyMap<string, MemberInfo>, selfKey: string): void {
    for (const [shardId, home] of this.homes) {
      const member = members.get(home);
      if (home !== selfKey && (member === undefined || isGone(member.status))) {
        this.homes.delete(shardId);
        this.formerHomes.set(shardId, home);
      }
    }
    this.unreachable = new Set([...members].filter(([, m]) => !m.reachable && !isGone(m.status)).map(([key]) => key));
  }

  /** An ask or send to `shardId` was answered: the first answer since its home went is reported, once. */
  answered(shardId: number): void {
    if (this.formerHomes.size === 0) return;
    const former = this.formerHomes.get(shardId);
    if (former === undefined) return;
    this.formerHomes.delete(shardId);
    this.onFirstAnswer(former);
  }

  /** Forgets every home on this node (its shards stop). */
  forgetLocal(selfKey: string): void {
    for (const [shardId, home] of this.homes) if (home === selfKey) this.homes.delete(shardId);
  }
}

/** The members by address key. */
export function memberMap(members: Iterable<MemberInfo>): Map<string, MemberInfo> {
  const map = new Map<string, MemberInfo>();
  for (const member of members) map.set(member.address.toString(), member);
  return map;
}
