/** True when the type has no role or the member was started with it. */
export function hasRole(member, role) {
    return role === undefined || (member.roles ?? []).includes(role);
}
/** The members by address key. */
export function memberMap(members) {
    const map = new Map();
    for (const member of members)
        map.set(member.address.toString(), member);
    return map;
}
//# sourceMappingURL=membership.js.map