import { compareAddresses } from './member-order.js';
/** The ring order: by address, then key (two incarnations of one address while the old one is being downed). */
export function ringOrder(members) {
    return [...members].sort((a, b) => compareAddresses(a.address, b.address) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}
/**
 * The keys `self` heartbeats: walking the ring from `self`, the first `monitoredByNrOfMembers` reachable
 * members, plus the unreachable ones passed on the way (while fewer than that many were taken).
 */
export function heartbeatTargets(members, selfKey, monitoredByNrOfMembers, unreachable = new Set()) {
    return targetsOnRing(ringOrder(members), selfKey, monitoredByNrOfMembers, unreachable);
}
/** `heartbeatTargets` on a ring already in `ringOrder` (callers that keep the ring between changes). */
export function targetsOnRing(ring, selfKey, monitoredByNrOfMembers, unreachable = new Set()) {
    const start = ring.findIndex((m) => m.key === selfKey);
    if (start < 0)
        return [];
    const targets = [];
    let wanted = monitoredByNrOfMembers;
    for (let step = 1; step < ring.length && wanted > 0; step++) {
        const next = ring[(start + step) % ring.length];
        if (!unreachable.has(next.key)) {
            targets.push(next.key);
            wanted--;
        }
        else if (targets.length < monitoredByNrOfMembers) {
            targets.push(next.key);
        }
    }
    return targets;
}
/** For each member, the members that heartbeat it (the inverse of `heartbeatTargets`, all reachable). */
export function monitorsOf(members, monitoredByNrOfMembers) {
    const monitors = new Map(members.map((m) => [m.key, []]));
    for (const m of members) {
        for (const target of heartbeatTargets(members, m.key, monitoredByNrOfMembers))
            monitors.get(target)?.push(m.key);
    }
    return monitors;
}
//# sourceMappingURL=heartbeat-ring.js.map