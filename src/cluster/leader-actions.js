import { keyOf } from './gossip.js';
import { compareAddresses } from './member-order.js';
/**
 * The lowest address among reachable up/leaving members; while nobody is up yet, among joining ones; and
 * when only exiting members are left (the last node leaving), among those, so it can remove itself.
 */
export function leaderOf(state, unreachable) {
    // One pass per pool, keeping the lowest: this runs on every commit of every node.
    for (const statuses of LEADER_POOLS) {
        let leader;
        for (const [key, r] of state.members) {
            if (!statuses.has(r.status) || unreachable.has(key))
                continue;
            if (leader === undefined || compareAddresses(r.address, leader.address) < 0)
                leader = r;
        }
        if (leader !== undefined)
            return leader;
    }
    return undefined;
}
const LEADER_POOLS = [
    new Set(['up', 'leaving']),
    new Set(['joining', 'weakly-up']),
    new Set(['exiting']),
];
/** Every member that is not down or removed is reachable and has seen this content (unreachable exiting members excepted). */
export function isConverged(state, unreachable) {
    for (const [key, record] of state.members) {
        if (record.status === 'down' || record.status === 'removed')
            continue;
        if (unreachable.has(key)) {
            if (record.status === 'exiting')
                continue;
            return false;
        }
        if (!state.seen.has(key))
            return false;
    }
    return true;
}
/** The records the leader changes now; empty when self is not the leader or nothing is due. */
export function leaderActions(input) {
    const { state, unreachable } = input;
    const leader = leaderOf(state, unreachable);
    if (!leader || keyOf(leader) !== input.selfKey)
        return [];
    const records = [...state.members.values()].sort((a, b) => compareAddresses(a.address, b.address));
    if (!isConverged(state, unreachable)) {
        if (input.weaklyUpAfterMs <= 0)
            return [];
        const blockedByUnreachable = records.some((r) => unreachable.has(keyOf(r)) && r.status !== 'down' && r.status !== 'removed' && r.status !== 'exiting');
        if (!blockedByUnreachable)
            return [];
        return records
            .filter((r) => r.status === 'joining' && !unreachable.has(keyOf(r)))
            .filter((r) => input.nowMs - (input.joiningSinceMs.get(keyOf(r)) ?? input.nowMs) >= input.weaklyUpAfterMs)
            .map((r) => ({ ...r, status: 'weakly-up' }));
    }
    let nextUpNumber = Math.max(0, ...records.map((r) => r.upNumber)) + 1;
    const changes = [];
    for (const record of records) {
        switch (record.status) {
            case 'joining':
            case 'weakly-up':
                changes.push({ ...record, status: 'up', upNumber: record.upNumber > 0 ? record.upNumber : nextUpNumber++ });
                break;
            case 'leaving':
                changes.push({ ...record, status: 'exiting' });
                break;
            case 'exiting':
            case 'down':
                changes.push({ ...record, status: 'removed' });
                break;
            default:
                break;
        }
    }
    return changes;
}
//# sourceMappingURL=leader-actions.js.map