/** A DrainRegion or DrainStarted with every field checked; undefined when any is wrong. */
export function parseDrainMessage(raw, typeName, checks) {
    const requestId = raw['requestId'];
    if (!checks.isRequestId(requestId))
        return undefined;
    if (raw.type === 'DrainRegion') {
        const region = raw['region'];
        return checks.isAddress(region) ? { type: 'DrainRegion', typeName, requestId, region } : undefined;
    }
    if (raw.type !== 'DrainStarted')
        return undefined;
    const noCapacity = raw['noCapacity'];
    const list = raw['moves'];
    if (typeof noCapacity !== 'boolean' || !Array.isArray(list) || list.length > checks.maxShards)
        return undefined;
    const moves = [];
    for (const item of list) {
        if (typeof item !== 'object' || item === null || Array.isArray(item))
            return undefined;
        const { shardId, from, to } = item;
        if (!checks.isShardId(shardId) || !checks.isAddress(from) || (to !== null && !checks.isAddress(to)))
            return undefined;
        moves.push({ shardId, from, to });
    }
    return { type: 'DrainStarted', typeName, requestId, moves, noCapacity };
}
//# sourceMappingURL=drain-messages.js.map