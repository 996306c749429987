// How the coordinator reads the membership: the role filter and members by key (which statuses may host is the
// vocabulary's HOSTING_STATUSES). One place, so the registry, the warm-up gate and allocation agree.
import type { MemberInfo } from '../../cluster/member.js';

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
