import { parseInsightMessage } from './insight-messages.js';
import { MAX_SHARD_ID, isAddress, isRequestId, isShardId } from './wire-values.js';
import { parseDrainMessage } from './drain-messages.js';
/** Largest shard id accepted on the wire (`numberOfShards` is capped below this by `init`). */
export { MAX_SHARD_ID };
/** Longest entity id accepted, in UTF-16 code units. */
export const MAX_ENTITY_ID_LENGTH = 1024;
/** Longest error text carried back to an asker. */
export const MAX_ERROR_LENGTH = 4096;
/** Most shard ids in one message (registration, locations, rebalance requests). */
export const MAX_SHARDS_PER_MESSAGE = MAX_SHARD_ID + 1;
/** Most regions in one `ShardLocations` answer. */
export const MAX_REGIONS_PER_MESSAGE = 10_000;
/** Entity type names: also path segments of the management API, so kept to a safe alphabet. */
export const TYPE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
/**
 * The one declaration of the sharding message set and its routing: the type set, the family and every
 * route set derive from it, and the compiler rejects a message type without a route (or a route for none).
 */
export const SHARDING_ROUTES = {
    RegisterRegion: 'coordinator',
    RegisterAck: 'region',
    RegisterRequired: 'region',
    GetShardHome: 'coordinator',
    ShardHome: 'region',
    HostShard: 'region',
    ShardStarted: 'coordinator',
    BeginHandOff: 'region',
    BeginHandOffAck: 'coordinator',
    HandOff: 'region',
    ShardStopped: 'coordinator',
    GracefulShutdownRequest: 'coordinator',
    GracefulShutdownAck: 'region',
    EntityEnvelope: 'region',
    EntityReply: 'asker',
    GetShardLocations: 'coordinator',
    ShardLocations: 'requester',
    RebalanceNow: 'coordinator',
    RebalanceNowResult: 'requester',
    RequestRebalance: 'coordinator',
    RebalanceRequested: 'requester',
    ExplainShard: 'coordinator',
    ShardExplained: 'requester',
    DryRunPlacements: 'coordinator',
    DryRunRebalance: 'coordinator',
    DryRunAnswer: 'requester',
    DrainRegion: 'coordinator',
    DrainStarted: 'requester',
};
/** Every sharding message type name, for routing and validation. */
export const SHARDING_MESSAGE_TYPES = new Set(Object.keys(SHARDING_ROUTES));
/** The message types routed to `route`. */
export function typesRoutedTo(route) {
    return new Set(Object.entries(SHARDING_ROUTES).flatMap(([type, to]) => (to === route ? [type] : [])));
}
/** Narrows a sharding message to the ones routed to `route`. */
export function isRoutedTo(message, route) {
    return SHARDING_ROUTES[message.type] === route;
}
/**
 * The sharding family as the transport takes it (`MessageFamily<ShardingMessage>`): every type of the
 * table, through the one parse gate below.
 */
export const SHARDING_MESSAGES = {
    name: 'sharding',
    types: SHARDING_MESSAGE_TYPES,
    parse: (raw) => parseShardingMessage(raw),
};
function isTypeName(value) {
    return typeof value === 'string' && TYPE_NAME_PATTERN.test(value);
}
function shardList(value, validItem) {
    if (!Array.isArray(value) || value.length > MAX_SHARDS_PER_MESSAGE)
        return undefined;
    for (const item of value)
        if (!validItem(item))
            return undefined;
    return [...value];
}
/** Any integer shard number (RebalanceNow may name out-of-range shards; the coordinator reports them as unknown). */
function isAnyShardNumber(value) {
    return typeof value === 'number' && Number.isSafeInteger(value);
}
function parseReplyTo(value) {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
        return undefined;
    const { node, askId } = value;
    return isAddress(node) && isRequestId(askId) ? { node, askId } : undefined;
}
function parseRegions(value) {
    if (!Array.isArray(value) || value.length > MAX_REGIONS_PER_MESSAGE)
        return undefined;
    const regions = [];
    for (const item of value) {
        if (typeof item !== 'object' || item === null || Array.isArray(item))
            return undefined;
        const { address, shards } = item;
        const list = shardList(shards, isShardId);
        if (!isAddress(address) || list === undefined)
            return undefined;
        regions.push({ address, shards: list });
    }
    return regions;
}
/** Validates one decoded message whose `type` is in SHARDING_MESSAGE_TYPES; undefined when any field is wrong. */
export function parseShardingMessage(raw) {
    if (raw.type === 'EntityReply')
        return parseEntityReply(raw);
    const typeName = raw['typeName'];
    if (!isTypeName(typeName))
        return undefined;
    switch (raw.type) {
        case 'RegisterRegion': {
            const shards = shardList(raw['shards'], isShardId);
            const stopping = shardList(raw['stopping'], isShardId);
            const proxy = raw['proxy'];
            if (shards === undefined || stopping === undefined || typeof proxy !== 'boolean')
                return undefined;
            // A shard is either hosted or stopping; a message claiming both cannot come from a correct region.
            const hosted = new Set(shards);
            if (stopping.some((shardId) => hosted.has(shardId)))
                return undefined;
            return { type: raw.type, typeName, proxy, shards, stopping };
        }
        case 'RegisterAck':
        case 'RegisterRequired':
        case 'GracefulShutdownRequest':
        case 'GracefulShutdownAck':
            return { type: raw.type, typeName };
        case 'GetShardHome':
        case 'HostShard':
        case 'ShardStarted':
        case 'BeginHandOff':
        case 'BeginHandOffAck': {
            const shardId = raw['shardId'];
            return isShardId(shardId) ? { type: raw.type, typeName, shardId } : undefined;
        }
        case 'HandOff':
        case 'ShardStopped': {
            const { shardId, handOffId } = raw;
            return isShardId(shardId) && isRequestId(handOffId) ? { type: raw.type, typeName, shardId, handOffId } : undefined;
        }
        case 'ShardHome': {
            const { shardId, region } = raw;
            return isShardId(shardId) && isAddress(region) ? { type: raw.type, typeName, shardId, region } : undefined;
        }
        case 'EntityEnvelope':
            return parseEnvelope(raw, typeName);
        case 'GetShardLocations':
        case 'RequestRebalance':
        case 'RebalanceRequested': {
            const requestId = raw['requestId'];
            return isRequestId(requestId) ? { type: raw.type, typeName, requestId } : undefined;
        }
        case 'ShardLocations': {
            const requestId = raw['requestId'];
            const regions = parseRegions(raw['regions']);
            const handingOff = shardList(raw['handingOff'], isShardId);
            return isRequestId(requestId) && regions && handingOff ? { type: raw.type, typeName, requestId, regions, handingOff } : undefined;
        }
        case 'RebalanceNow': {
            const requestId = raw['requestId'];
            const shardIds = shardList(raw['shardIds'], isAnyShardNumber);
            return isRequestId(requestId) && shardIds ? { type: raw.type, typeName, requestId, shardIds } : undefined;
        }
        case 'RebalanceNowResult': {
            const requestId = raw['requestId'];
            const accepted = shardList(raw['accepted'], isShardId);
            const unknown = shardList(raw['unknown'], isAnyShardNumber);
            const homeless = shardList(raw['homeless'], isShardId);
            if (!isRequestId(requestId) || !accepted || !unknown || !homeless)
                return undefined;
            return { type: raw.type, typeName, requestId, accepted, unknown, homeless };
        }
        case 'ExplainShard':
        case 'ShardExplained':
        case 'DryRunPlacements':
        case 'DryRunRebalance':
        case 'DryRunAnswer':
            return parseInsightMessage(raw, typeName);
        case 'DrainRegion':
        case 'DrainStarted':
            return parseDrainMessage(raw, typeName, { isRequestId, isShardId, isAddress, maxShards: MAX_SHARDS_PER_MESSAGE });
        default:
            return undefined;
    }
}
function parseEnvelope(raw, typeName) {
    const { shardId, entityId, hops } = raw;
    if (!isShardId(shardId))
        return undefined;
    if (typeof entityId !== 'string' || entityId.length === 0 || entityId.length > MAX_ENTITY_ID_LENGTH)
        return undefined;
    if (typeof hops !== 'number' || !Number.isInteger(hops) || hops < 0 || hops > 255)
        return undefined;
    // A missing payload or value is `undefined`: some encoders drop undefined fields instead of encoding them.
    const payload = raw['payload'];
    const rawReplyTo = raw['replyTo'];
    if (rawReplyTo === undefined || rawReplyTo === null) {
        return { type: 'EntityEnvelope', typeName, shardId, entityId, payload, hops };
    }
    const replyTo = parseReplyTo(rawReplyTo);
    return replyTo ? { type: 'EntityEnvelope', typeName, shardId, entityId, payload, hops, replyTo } : undefined;
}
function parseEntityReply(raw) {
    const { askId, ok } = raw;
    if (!isRequestId(askId))
        return undefined;
    if (ok === true)
        return { type: 'EntityReply', askId, ok, value: raw['value'] };
    const error = raw['error'];
    if (ok === false && typeof error === 'string' && error.length <= MAX_ERROR_LENGTH) {
        return { type: 'EntityReply', askId, ok, error };
    }
    return undefined;
}
//# sourceMappingURL=messages.js.map