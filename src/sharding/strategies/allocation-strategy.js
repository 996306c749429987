import { ARRIVING_STATUSES, DEPARTING_STATUSES } from '../../cluster/member.js';
import { ActorTsError } from '../../errors.js';
const NO_SHARDS = new Set();
export function requireShardId(shardId) {
    if (!Number.isSafeInteger(shardId) || shardId < 0) {
        throw new ActorTsError('invalid_argument', `shard id must be a non-negative integer, got ${String(shardId)}`);
    }
}
export function requireCandidates(candidates) {
    if (!Array.isArray(candidates) || candidates.length === 0) {
        throw new ActorTsError('invalid_argument', 'allocate needs at least one candidate node');
    }
}
/** The shards `address` holds; a node missing from the map holds none. */
export function shardsOf(currentShards, address) {
    return currentShards.get(address.toString()) ?? NO_SHARDS;
}
/** Members by address string, or undefined when there is no view (then every node counts as healthy). */
export function membersByAddress(cluster) {
    if (cluster === undefined)
        return undefined;
    const byAddress = new Map();
    for (const member of cluster.members())
        byAddress.set(member.address.toString(), member);
    return byAddress;
}
/** One entry per distinct candidate, in candidate order. */
export function describeRegions(candidates, currentShards, members) {
    const seen = new Set();
    const regions = [];
    for (const address of candidates) {
        const region = describeRegion(address, currentShards, members);
        if (seen.has(region.key))
            continue;
        seen.add(region.key);
        regions.push(region);
    }
    return regions;
}
export function describeRegion(address, currentShards, members) {
    const key = address.toString();
    const shards = currentShards.get(key) ?? NO_SHARDS;
    if (members === undefined) {
        return { address, key, shards, known: true, reachable: true, leaving: false, appVersion: '', upNumber: 0 };
    }
    const member = members.get(key);
    if (member === undefined) {
        // A node the view does not know yet cannot be vouched for: rank it with unreachable leavers.
        return { address, key, shards, known: false, reachable: false, leaving: true, appVersion: '', upNumber: Infinity };
    }
    return {
        address,
        key,
        shards,
        known: true,
        reachable: member.reachable,
        leaving: DEPARTING_STATUSES.has(member.status),
        appVersion: member.appVersion,
        upNumber: member.upNumber,
    };
}
/**
 * Allocation preference, best first: reachable, not on its way out, highest app version, fewest
 * shards, oldest member, address. Reachability comes first (Pekko omits it) so a new shard never
 * lands on a node that is about to be downed.
 */
export function compareForAllocation(a, b) {
    const health = compareHealth(a, b);
    if (health !== 0)
        return health;
    if (a.shards.size !== b.shards.size)
        return a.shards.size - b.shards.size;
    if (a.upNumber !== b.upNumber)
        return a.upNumber < b.upNumber ? -1 : 1;
    return compareStrings(a.key, b.key);
}
/**
 * The part of allocation preference that is about the node, not its load: reachable, not on its way out,
 * highest app version. Strategies that place by something other than load (the ring) rank by this alone.
 */
export function compareHealth(a, b) {
    if (a.reachable !== b.reachable)
        return a.reachable ? -1 : 1;
    if (a.leaving !== b.leaving)
        return a.leaving ? 1 : -1;
    if (a.appVersion !== b.appVersion)
        return compareAppVersions(b.appVersion, a.appVersion);
    return 0;
}
/** The regions that tie with the healthiest one on compareHealth, in `regions` order. */
export function healthiest(regions) {
    let best;
    for (const region of regions)
        if (best === undefined || compareHealth(region, best) < 0)
            best = region;
    return best === undefined ? [] : regions.filter((region) => compareHealth(region, best) === 0);
}
/** Checks least-shard's rate-limit options (shared by the strategies that rate-limit the same way). */
export function requireRebalanceLimits(absoluteLimit, relativeLimit) {
    if (!(Number.isInteger(absoluteLimit) || absoluteLimit === Infinity) || absoluteLimit < 0) {
        throw new ActorTsError('invalid_argument', `absoluteLimit must be a non-negative integer or Infinity, got ${String(absoluteLimit)}`);
    }
    if (typeof relativeLimit !== 'number' || Number.isNaN(relativeLimit) || relativeLimit < 0) {
        throw new ActorTsError('invalid_argument', `relativeLimit must be a number >= 0, got ${String(relativeLimit)}`);
    }
}
/** Most shards one rebalance round moves: `max(1, min(floor(relativeLimit * shards), absoluteLimit))`. */
export function rebalanceLimit(shardCount, absoluteLimit, relativeLimit) {
    return Math.max(1, Math.min(Math.floor(relativeLimit * shardCount), absoluteLimit));
}
/** The best region for a new shard; `regions` must not be empty. */
export function mostSuitable(regions) {
    let best = regions[0];
    if (best === undefined)
        throw new ActorTsError('invalid_argument', 'no candidate regions to choose from');
    for (const region of regions) {
        if (compareForAllocation(region, best) < 0)
            best = region;
    }
    return best;
}
/** Allocation shared by both least-shard strategies. */
export function allocateLeastShard(shardId, candidates, currentShards, cluster) {
    requireShardId(shardId);
    requireCandidates(candidates);
    // A single pass without building the region list: allocate runs once per new shard, and a
    // duplicate candidate cannot change which one is best.
    if (cluster === undefined)
        return leastLoaded(candidates, currentShards);
    const members = membersByAddress(cluster);
    let best;
    for (const address of candidates) {
        const region = describeRegion(address, currentShards, members);
        if (best === undefined || compareForAllocation(region, best) < 0)
            best = region;
    }
    return best.address;
}
/** Without a view every candidate ties on health and version: fewest shards, then address. */
function leastLoaded(candidates, currentShards) {
    let best = candidates[0];
    let bestKey = best.toString();
    let bestSize = currentShards.get(bestKey)?.size ?? 0;
    for (const address of candidates) {
        const key = address.toString();
        const size = currentShards.get(key)?.size ?? 0;
        if (size < bestSize || (size === bestSize && key < bestKey)) {
            best = address;
            bestKey = key;
            bestSize = size;
        }
    }
    return best;
}
/**
 * Rebalancing moves shards through a hand-off that every region and proxy must acknowledge, and a
 * joining node or a rolling update will change the picture shortly, so wait for a settled cluster:
 * no regions -> no; a candidate unknown to the view -> no (the view is stale); regions on different
 * app versions -> no; any member (other than removed ones) unreachable, joining or weakly-up -> no.
 */
export function isGoodTimeToRebalance(regions, cluster) {
    const first = regions[0];
    if (first === undefined)
        return false;
    if (cluster === undefined)
        return true;
    for (const region of regions) {
        if (!region.known)
            return false;
        if (compareAppVersions(region.appVersion, first.appVersion) !== 0)
            return false;
    }
    for (const member of cluster.members()) {
        if (member.status === 'removed')
            continue;
        if (!member.reachable || ARRIVING_STATUSES.has(member.status))
            return false;
    }
    return true;
}
/**
 * Compares app versions by dot-separated parts, numerically: "1.10.0" > "1.9.0". Missing parts count
 * as 0 ("1.2" == "1.2.0"). Within a part the leading digits compare as a number; a part with a
 * suffix after its digits is a pre-release, below the bare number ("1.0.0-RC1" < "1.0.0"), and
 * suffixes compare as strings. Returns -1, 0 or 1.
 */
export function compareAppVersions(a, b) {
    const left = a.split('.');
    const right = b.split('.');
    const length = Math.max(left.length, right.length);
    for (let i = 0; i < length; i++) {
        const order = compareVersionPart(left[i] ?? '0', right[i] ?? '0');
        if (order !== 0)
            return order;
    }
    return 0;
}
function compareVersionPart(a, b) {
    const [digitsA, suffixA] = splitPart(a);
    const [digitsB, suffixB] = splitPart(b);
    // Compare digit strings without Number() so parts longer than 2^53 still order correctly.
    if (digitsA.length !== digitsB.length)
        return digitsA.length < digitsB.length ? -1 : 1;
    const numeric = compareStrings(digitsA, digitsB);
    if (numeric !== 0)
        return numeric;
    if (suffixA === suffixB)
        return 0;
    if (suffixA === '')
        return 1;
    if (suffixB === '')
        return -1;
    return compareStrings(suffixA, suffixB);
}
function splitPart(part) {
    let end = 0;
    while (end < part.length && part.charCodeAt(end) >= 48 && part.charCodeAt(end) <= 57)
        end++;
    const digits = part.slice(0, end).replace(/^0+/, '');
    return [digits, part.slice(end)];
}
/** Code-unit order, independent of the process locale, so every node sorts the same way. */
export function compareStrings(a, b) {
    return a < b ? -1 : a > b ? 1 : 0;
}
//# sourceMappingURL=allocation-strategy.js.map