/** Every member status, in lifecycle order: joining, weakly-up, up, then leaving, exiting, and down or removed. */
export const MEMBER_STATUSES = ['joining', 'weakly-up', 'up', 'leaving', 'exiting', 'down', 'removed'];
const statuses = (...list) => new Set(list);
/** Statuses of members that no longer take part: they host nothing and are not monitored. */
export const GONE_STATUSES = statuses('down', 'removed');
/** Arriving: known to the cluster, not yet serving. The last choice for new shards. */
export const ARRIVING_STATUSES = statuses('joining', 'weakly-up');
/** On its way out (or already out): the last choice for new shards. */
export const DEPARTING_STATUSES = statuses('leaving', 'exiting', 'down', 'removed');
/** Members whose regions may host shards (a new coordinator must hear from them before allocating). */
export const HOSTING_STATUSES = statuses('up', 'leaving', 'exiting');
/** Statuses in which a node has received the cluster's membership, so it knows its peers. */
export const JOINED_STATUSES = statuses('weakly-up', 'up', 'leaving', 'exiting');
/** Statuses in which a node may take writes that must reach the others: it joined and is not leaving. */
export const WRITING_STATUSES = statuses('joining', 'weakly-up', 'up');
/** Statuses that count towards a majority: members that are (or were) serving, not arriving or gone. */
export const COUNTED_STATUSES = statuses('weakly-up', 'up', 'leaving');
/**
 * The majority rule, the same for the downing decision and for refusing writes: a side keeps the cluster when
 * it holds more than half of the `counted` members, or exactly half and the lowest-ordered of them (addresses
 * compared with compareAddresses), so of two equal halves exactly one stays.
 */
export function holdsMajority(counted, side, sideHasLowest) {
    return side * 2 > counted || (side > 0 && side * 2 === counted && sideHasLowest);
}
/** Whether a member with this status is down or removed. */
export function isGone(status) {
    return GONE_STATUSES.has(status);
}
//# sourceMappingURL=member.js.map