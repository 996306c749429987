import { COUNTED_STATUSES, holdsMajority } from './member.js';
import { compareAddresses } from './member-order.js';
import { unreachableSubjects } from './reachability-table.js';
export function decideSplitBrain(input) {
    const live = new Map();
    for (const m of input.members)
        if (m.status !== 'down' && m.status !== 'removed')
            live.set(m.key, m);
    const edges = input.edges.filter((e) => e.observer !== e.subject && live.has(e.observer) && live.has(e.subject));
    if (edges.length === 0)
        return { kind: 'none' };
    const unreachableAtFirst = unreachableSubjects(edges);
    const { cover, remaining } = indirectlyConnectedCover(edges, live);
    const unreachable = unreachableSubjects(remaining);
    const counted = [...live.values()].filter((m) => COUNTED_STATUSES.has(m.status));
    const side = counted.filter((m) => !unreachable.has(m.key));
    const indirectlyConnected = sortedKeys(cover, live);
    const first = lowest(counted);
    if (holdsMajority(counted.length, side.length, first !== undefined && side.some((m) => m.key === first.key))) {
        const down = sortedKeys(new Set([...cover, ...unreachable]), live);
        const leader = lowest(side.filter((m) => !unreachableAtFirst.has(m.key) && !cover.has(m.key))) ?? lowest(side.filter((m) => !cover.has(m.key)));
        return { kind: 'down-unreachable', down, indirectlyConnected, leader: leader?.key };
    }
    const down = sortedKeys(new Set([...side.map((m) => m.key), ...cover]), live);
    return { kind: 'down-own-side', down, indirectlyConnected };
}
/**
 * Members that observe and are observed as unreachable, taken one at a time (most unreachable edges to other
 * such members first, then the higher address) until none is left; each taken member's edges are dropped. Returns them and the
 * edges left, which form a clean split (no observer among the subjects).
 */
export function indirectlyConnectedCover(edges, members) {
    const cover = new Set();
    let remaining = [...edges];
    for (;;) {
        const subjects = unreachableSubjects(remaining);
        const candidates = new Set(remaining.map((e) => e.observer).filter((o) => subjects.has(o)));
        if (candidates.size === 0)
            return { cover, remaining };
        // Only edges between two candidates count: an edge to a crashed member says nothing against its observer.
        const degree = new Map();
        for (const e of remaining) {
            if (!candidates.has(e.observer) || !candidates.has(e.subject))
                continue;
            for (const end of [e.observer, e.subject])
                degree.set(end, (degree.get(end) ?? 0) + 1);
        }
        let pick;
        for (const key of candidates) {
            if (pick === undefined)
                pick = key;
            else {
                const d = (degree.get(key) ?? 0) - (degree.get(pick) ?? 0);
                if (d > 0 || (d === 0 && compareMembers(key, pick, members) > 0))
                    pick = key;
            }
        }
        if (pick === undefined)
            return { cover, remaining };
        cover.add(pick);
        remaining = remaining.filter((e) => e.observer !== pick && e.subject !== pick);
    }
}
function lowest(members) {
    let best;
    for (const m of members)
        if (best === undefined || compareMember(m, best) < 0)
            best = m;
    return best;
}
/** By address, then key: total, so every node orders the same members the same way. */
function compareMember(a, b) {
    return compareAddresses(a.address, b.address) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}
function compareMembers(a, b, members) {
    const ma = members.get(a);
    const mb = members.get(b);
    if (ma && mb)
        return compareMember(ma, mb);
    return a < b ? -1 : a > b ? 1 : 0;
}
function sortedKeys(keys, members) {
    return [...keys].sort((a, b) => compareMembers(a, b, members));
}
//# sourceMappingURL=split-brain-decision.js.map