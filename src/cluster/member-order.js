/** Total order of addresses: system, then host, then port numerically. */
export function compareAddresses(a, b) {
    if (a.system !== b.system)
        return a.system < b.system ? -1 : 1;
    if (a.host !== b.host)
        return a.host < b.host ? -1 : 1;
    return a.port - b.port;
}
/** Oldest first: members without an upNumber (0, not yet up) sort after all that have one. */
export function compareByAge(a, b) {
    const ua = a.upNumber > 0 ? a.upNumber : Number.MAX_SAFE_INTEGER;
    const ub = b.upNumber > 0 ? b.upNumber : Number.MAX_SAFE_INTEGER;
    return ua !== ub ? ua - ub : compareAddresses(a.address, b.address);
}
/** The oldest member with status Up (optionally with a role): where cluster singletons such as the coordinator live. */
export function oldestUpMember(members, role) {
    let oldest;
    for (const member of members) {
        if (member.status !== 'up')
            continue;
        if (role !== undefined && !(member.roles ?? []).includes(role))
            continue;
        if (!oldest || compareByAge(member, oldest) < 0)
            oldest = member;
    }
    return oldest;
}
//# sourceMappingURL=member-order.js.map