import { MetricsEventHub } from '../management/metrics.js';
import { entityTypeNames, isInternalNamespace } from '../sharding/placements/cordons.js';
export function nodeMetricsSource(membership, store, sharding, transport) {
    const hub = new MetricsEventHub();
    const self = membership.self.toString();
    // A change names the shards whose winner changed; the winner's HLC wall time is when it was written.
    const stopFollowing = store.onChange((typeName, shardIds) => {
        // Cordons share the store but are not placements.
        if (isInternalNamespace(typeName))
            return;
        const placements = store.snapshot(typeName).placements;
        for (const shardId of shardIds) {
            const placement = placements.get(shardId);
            if (placement !== undefined)
                hub.onPlacementApplied(placement.writer === self ? 'local' : 'remote', placement.hlc.wallMs);
        }
    });
    const durability = store.durability;
    const durable = durability !== undefined;
    const stopTiming = durability?.onCommitted((seconds) => hub.onStorageCommit(seconds)) ?? (() => undefined);
    return {
        hub,
        durable,
        subscribe: hub.subscribe,
        shardsHosted: function* () {
            const types = sharding()?.stats().types ?? {};
            for (const [type, stats] of Object.entries(types))
                yield [type, stats.region.localShards];
        },
        placements: function* () {
            for (const type of entityTypeNames(store)) {
                const counts = new Map([['prefer', 0], ['require', 0]]);
                for (const placement of store.snapshot(type).placements.values()) {
                    const mode = placement.meta?.['mode'] === 'require' ? 'require' : 'prefer';
                    counts.set(mode, (counts.get(mode) ?? 0) + 1);
                }
                for (const [mode, count] of counts)
                    yield { type, mode, count };
            }
        },
        ...(transport === undefined ? {} : { transport: () => transport.usage() }),
        members: () => membership.members().map((member) => ({ status: member.status, reachable: member.reachable })),
        placementStore: () => {
            const { generation, documentItems } = store.stats();
            return { generation, items: documentItems };
        },
        close: () => {
            stopFollowing();
            stopTiming();
        },
    };
}
//# sourceMappingURL=metrics-source.js.map