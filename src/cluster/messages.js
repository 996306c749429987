import { NodeAddress } from './address.js';
import { MEMBER_STATUSES } from './member.js';
import { attributesProblem, normalizeAttributes } from './attributes.js';
export const CLUSTER_MESSAGE_TYPES = new Set(['Heartbeat', 'HeartbeatAck', 'Join', 'Gossip', 'GossipStatus', 'GossipNews', 'GossipAsk']);
/** The membership family; the Cluster registers it on its transport. */
export const CLUSTER_MESSAGES = {
    name: 'cluster',
    types: CLUSTER_MESSAGE_TYPES,
    parse: (raw) => parseClusterMessage(raw),
};
const KNOWN_STATUSES = new Set(MEMBER_STATUSES);
const MAX_TEXT = 128;
/** A member key: an address (bounded by NodeAddress) + '#' + an incarnation. */
const MAX_KEY = 512;
const MAX_ROLES = 32;
const MAX_MEMBERS = 10_000;
/** A status hash: 32 base64 characters today; a little room, no more. */
const MAX_HASH = 64;
/** Member keys one GossipAsk may name: the author's answer is bounded by it. */
export const MAX_ASK_KEYS = 256;
/** Subjects summed over all reachability rows: with the heartbeat ring a row names about ten, this is ample. */
const MAX_REACHABILITY_ENTRIES = 100_000;
export function parseClusterMessage(raw) {
    switch (raw.type) {
        case 'Heartbeat':
        case 'HeartbeatAck': {
            const { sequence, incarnation } = raw;
            if (!isCount(sequence) || !isText(incarnation))
                return undefined;
            return { type: raw.type, sequence, incarnation };
        }
        case 'Join': {
            const { incarnation, appVersion } = raw;
            const roles = parseRoles(raw['roles']);
            const attributes = parseAttributes(raw['attributes']);
            if (!isText(incarnation) || !isText(appVersion) || !roles || attributes === null)
                return undefined;
            return attributes === undefined ? { type: 'Join', incarnation, appVersion, roles } : { type: 'Join', incarnation, appVersion, roles, attributes };
        }
        case 'Gossip':
        case 'GossipNews': {
            const gossip = parseGossip(raw['gossip']);
            return gossip ? { type: raw.type, gossip } : undefined;
        }
        case 'GossipStatus': {
            const { hash, seen } = raw;
            if (!isText(hash, MAX_HASH) || !(seen instanceof Uint8Array) || seen.byteLength > Math.ceil(MAX_MEMBERS / 8))
                return undefined;
            return { type: 'GossipStatus', hash, seen };
        }
        case 'GossipAsk': {
            const { keys } = raw;
            if (!Array.isArray(keys) || keys.length === 0 || keys.length > MAX_ASK_KEYS || !keys.every((k) => isText(k, MAX_KEY)))
                return undefined;
            return { type: 'GossipAsk', keys: keys };
        }
        default:
            return undefined;
    }
}
function parseGossip(value) {
    if (!isRecord(value))
        return undefined;
    const { members, seen } = value;
    if (!Array.isArray(members) || members.length > MAX_MEMBERS)
        return undefined;
    if (!Array.isArray(seen) || seen.length > MAX_MEMBERS || !seen.every((s) => isText(s, MAX_KEY))) {
        return undefined;
    }
    const parsed = [];
    for (const member of members) {
        const m = parseMember(member);
        if (!m)
            return undefined;
        parsed.push(m);
    }
    const gossip = { members: parsed, seen: seen };
    const tombstones = value['tombstones'];
    if (tombstones !== undefined) {
        if (!Array.isArray(tombstones) || tombstones.length > MAX_MEMBERS)
            return undefined;
        const isTombstone = (t) => Array.isArray(t) && t.length === 2 && isText(t[0], MAX_KEY) && isCount(t[1]);
        if (!tombstones.every(isTombstone))
            return undefined;
    }
    const reachability = parseReachability(value['reachability'], parsed.length);
    if (reachability === null)
        return undefined;
    return {
        ...gossip,
        ...(tombstones === undefined ? {} : { tombstones: tombstones }),
        ...(reachability === undefined ? {} : { reachability }),
    };
}
/**
 * Optional: undefined when absent, null when invalid (drop the message). Every index must name one of the
 * `memberCount` members; counts are checked before the entries are walked.
 */
function parseReachability(value, memberCount) {
    if (value === undefined)
        return undefined;
    if (!Array.isArray(value) || value.length > memberCount)
        return null;
    const isIndex = (i) => isCount(i) && i < memberCount;
    let entries = 0;
    const rows = [];
    for (const row of value) {
        if (!Array.isArray(row) || row.length !== 3)
            return null;
        const [observer, version, subjects] = row;
        if (!isIndex(observer) || !isCount(version) || !Array.isArray(subjects) || subjects.length > memberCount)
            return null;
        entries += subjects.length;
        if (entries > MAX_REACHABILITY_ENTRIES || !subjects.every(isIndex))
            return null;
        rows.push([observer, version, subjects]);
    }
    return rows;
}
function parseMember(value) {
    if (!isRecord(value))
        return undefined;
    const { address, incarnation, status, appVersion, upNumber } = value;
    const roles = parseRoles(value['roles']);
    if (typeof address !== 'string' || NodeAddress.tryParse(address) === undefined)
        return undefined;
    if (!isText(incarnation) || !isText(appVersion) || !roles || !isCount(upNumber))
        return undefined;
    if (typeof status !== 'string' || !KNOWN_STATUSES.has(status))
        return undefined;
    const attributes = parseAttributes(value['attributes']);
    if (attributes === null)
        return undefined;
    const downedAtMs = value['downedAtMs'];
    const base = { address, incarnation, status: status, appVersion, roles, upNumber, ...(attributes === undefined ? {} : { attributes }) };
    if (downedAtMs === undefined)
        return base;
    return isCount(downedAtMs) ? { ...base, downedAtMs } : undefined;
}
function parseRoles(value) {
    if (!Array.isArray(value) || value.length > MAX_ROLES)
        return undefined;
    return value.every((r) => isText(r)) ? value : undefined;
}
/** Optional (older peers send none): undefined when absent, null when present but invalid (drop the message). */
function parseAttributes(value) {
    if (value === undefined)
        return undefined;
    // The count is checked by attributesProblem before any per-entry work.
    return attributesProblem(value) === undefined ? normalizeAttributes(value) : null;
}
function isRecord(value) {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
}
function isText(value, max = MAX_TEXT) {
    return typeof value === 'string' && value.length > 0 && value.length <= max;
}
function isCount(value) {
    return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
//# sourceMappingURL=messages.js.map