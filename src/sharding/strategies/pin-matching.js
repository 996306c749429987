import { targetMatches } from '../placements/placement-target.js';
const NO_MEMBERS = new Map();
export function readView(cluster) {
    if (cluster === undefined)
        return { reachable: undefined, members: NO_MEMBERS };
    const reachable = new Set();
    const members = new Map();
    for (const member of cluster.members()) {
        const key = member.address.toString();
        members.set(key, member);
        // A downed or removed member will not come back to take a shard, whatever its last heartbeat said.
        if (member.reachable && member.status !== 'down' && member.status !== 'removed')
            reachable.add(key);
    }
    return { reachable, members };
}
/**
 * Whether the node at `key` is a home the pin allows. An address pin names its node; a selector needs the
 * node's roles and attributes, so a node the view does not list (or no view at all) matches no selector.
 */
export function homeMatches(pin, key, view) {
    if (pin.target.kind === 'address')
        return key === pin.target.canonical;
    const member = view.members.get(key);
    return member !== undefined && targetMatches(pin.target, member);
}
/** The candidates the pin allows that are reachable, in candidate order, without duplicates. */
export function matchingCandidates(pin, candidates, view) {
    const out = [];
    const seen = new Set();
    for (const candidate of candidates) {
        const key = candidate.toString();
        if (seen.has(key) || !isReachable(key, view) || !homeMatches(pin, key, view))
            continue;
        seen.add(key);
        out.push(candidate);
        // An address names one node: no need to look further.
        if (pin.target.kind === 'address')
            break;
    }
    return out;
}
/**
 * Why no candidate can take the pinned shard. A target address the view does not list counts as
 * unreachable: it cannot be vouched for yet, and the pin applies once it is a reachable candidate.
 */
export function problemOf(pin, isCandidate) {
    if (pin.target.kind === 'selector')
        return 'no matching node';
    if (!isCandidate(pin.target.canonical))
        return 'not a candidate';
    return 'unreachable';
}
export function isReachable(key, view) {
    return view.reachable === undefined || view.reachable.has(key);
}
/** The reachable candidates, or all of them when none is reachable (a prefer pin never strands a shard). */
export function reachablePool(candidates, view) {
    if (view.reachable === undefined)
        return candidates;
    const reachable = view.reachable;
    const pool = candidates.filter((candidate) => reachable.has(candidate.toString()));
    return pool.length > 0 ? pool : candidates;
}
//# sourceMappingURL=pin-matching.js.map