import { PLACEMENT_MODES, MAX_BY_LENGTH, MAX_REASON_LENGTH } from '../placements/placement-options.js';
import { MAX_PLACEMENT_TARGET_LENGTH } from '../placements/placement-target.js';
import { MAX_SHARD_ID, isAddress, isRequestId, isShardId } from './wire-values.js';
export const EXPLAIN_DECISIONS = ['placement', 'placement-unavailable', 'waiting', 'fallback', 'unallocated'];
/** Longest explanation sentence or warning accepted. */
export const MAX_INSIGHT_TEXT = 4096;
const MAX_LIST = MAX_SHARD_ID + 1;
const MAX_NODES = 10_000;
const MAX_STATUS_LENGTH = 32;
const MAX_NODE_KEY_LENGTH = 512;
/** Validates one of the messages above (typeName already checked); undefined when any field is wrong. */
export function parseInsightMessage(raw, typeName) {
    const requestId = raw['requestId'];
    if (!isRequestId(requestId))
        return undefined;
    switch (raw.type) {
        case 'ExplainShard': {
            const shardId = raw['shardId'];
            return isShardId(shardId) ? { type: raw.type, typeName, requestId, shardId } : undefined;
        }
        case 'ShardExplained': {
            const value = raw['explanation'];
            const explanation = value === null ? null : parseExplanation(value);
            return explanation === undefined ? undefined : { type: raw.type, typeName, requestId, explanation };
        }
        case 'DryRunPlacements': {
            const pins = list(raw['pins'], MAX_LIST, parseProposedPin);
            return pins === undefined ? undefined : { type: raw.type, typeName, requestId, pins };
        }
        case 'DryRunRebalance': {
            const shardIds = list(raw['shardIds'], MAX_LIST, (item) => (isShardId(item) ? item : undefined));
            return shardIds === undefined ? undefined : { type: raw.type, typeName, requestId, shardIds };
        }
        case 'DryRunAnswer': {
            const moves = list(raw['moves'], MAX_LIST, parseMove);
            const warnings = list(raw['warnings'], MAX_LIST, parseWarning);
            return moves === undefined || warnings === undefined ? undefined : { type: raw.type, typeName, requestId, moves, warnings };
        }
        default:
            return undefined;
    }
}
function list(value, max, item) {
    if (!Array.isArray(value) || value.length > max)
        return undefined;
    const out = [];
    for (const element of value) {
        const parsed = item(element);
        if (parsed === undefined)
            return undefined;
        out.push(parsed);
    }
    return out;
}
function record(value) {
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
}
function text(value, max) {
    return typeof value === 'string' && value.length <= max;
}
function orNull(value, check) {
    if (value === null)
        return null;
    return check(value) ? value : undefined;
}
function isMode(value) {
    return typeof value === 'string' && PLACEMENT_MODES.includes(value);
}
function isEpochMs(value) {
    return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
function parseProposedPin(value) {
    const raw = record(value);
    if (raw === undefined)
        return undefined;
    const { shardId, target, mode } = raw;
    const expiresAt = orNull(raw['expiresAt'], isEpochMs);
    if (!isShardId(shardId) || !text(target, MAX_PLACEMENT_TARGET_LENGTH) || !isMode(mode) || expiresAt === undefined)
        return undefined;
    return { shardId, target, mode, expiresAt };
}
function parseMove(value) {
    const raw = record(value);
    if (raw === undefined)
        return undefined;
    const { shardId, from } = raw;
    const to = orNull(raw['to'], isAddress);
    return isShardId(shardId) && isAddress(from) && to !== undefined ? { shardId, from, to } : undefined;
}
function parseWarning(value) {
    const raw = record(value);
    if (raw === undefined)
        return undefined;
    const { target, message } = raw;
    const shardId = orNull(raw['shardId'], isShardId);
    if (shardId === undefined || !text(message, MAX_INSIGHT_TEXT))
        return undefined;
    if (target === undefined || target === null)
        return { shardId, message };
    return text(target, MAX_PLACEMENT_TARGET_LENGTH) ? { shardId, target, message } : undefined;
}
function parseExplanation(value) {
    const raw = record(value);
    if (raw === undefined)
        return undefined;
    const { shardId, handingOff, decision, message } = raw;
    const home = orNull(raw['home'], isAddress);
    const placement = raw['placement'] === null ? null : parsePlacement(raw['placement']);
    const nodes = list(raw['nodes'], MAX_NODES, parseNode);
    if (!isShardId(shardId) || home === undefined || typeof handingOff !== 'boolean' || placement === undefined || nodes === undefined)
        return undefined;
    if (!EXPLAIN_DECISIONS.includes(decision) || !text(message, MAX_INSIGHT_TEXT))
        return undefined;
    return { shardId, home, handingOff, placement, decision: decision, message, nodes };
}
function parseNode(value) {
    const raw = record(value);
    if (raw === undefined)
        return undefined;
    const { address, shards, reachable, status, cordoned } = raw;
    const matches = orNull(raw['matches'], (v) => typeof v === 'boolean');
    if (!isAddress(address) || !isEpochMs(shards) || shards > MAX_LIST || typeof reachable !== 'boolean')
        return undefined;
    if (!text(status, MAX_STATUS_LENGTH) || typeof cordoned !== 'boolean' || matches === undefined)
        return undefined;
    return { address, shards, reachable, status, cordoned, matches };
}
function parsePlacement(value) {
    const raw = record(value);
    if (raw === undefined)
        return undefined;
    const { shardId, target, mode, writer } = raw;
    const expiresAt = orNull(raw['expiresAt'], (v) => text(v, 64));
    const reason = orNull(raw['reason'], (v) => text(v, MAX_REASON_LENGTH));
    const by = orNull(raw['by'], (v) => text(v, MAX_BY_LENGTH));
    const hlc = record(raw['hlc']);
    if (!isShardId(shardId) || !text(target, MAX_PLACEMENT_TARGET_LENGTH) || !isMode(mode) || !text(writer, MAX_NODE_KEY_LENGTH))
        return undefined;
    if (expiresAt === undefined || reason === undefined || by === undefined || hlc === undefined)
        return undefined;
    const { wallMs, counter, node } = hlc;
    if (!isEpochMs(wallMs) || !isEpochMs(counter) || !text(node, MAX_NODE_KEY_LENGTH))
        return undefined;
    return { shardId, target, mode, expiresAt, reason, by, writer, hlc: { wallMs, counter, node } };
}
//# sourceMappingURL=insight-messages.js.map