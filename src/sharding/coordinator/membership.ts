// How the coordinator reads the membership: which statuses may still host shards (gone for good is the
// cluster's own `isGone`), and the role filter. One place, so the registry, the warm-up gate and allocation agree.
import type { MemberInfo, MemberStatus } from '../../cluster/member.js';

/** Members whose regions may still host shards a new coordinator must hear about before allocating. */
export const MAY_HOST: ReadonlySet<MemberStatus> = new Set<MemberStatus>(['up', 'leaving', 'exiting']);

/** True when the type has no role or the member was started with it. */
export function hasRole(member: MemberInfo, role: string | undefined): boolean {
  return role === undefined || (member.roles ?? []).includes(role);
}

/** The members by address key. */
export function memberMap(members: ReadonlyArray<MemberInfo>): Map<string, MemberInfo> {
  const map = new Map<string, MemberInfo>();
  for (const member of members) map.set(member.address.toString(), member);
  return map;
}
