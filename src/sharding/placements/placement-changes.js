import { isInternalNamespace } from './cordons.js';
export class PlacementChanges {
    store;
    targets;
    queued = new Set();
    constructor(store, targets) {
        this.store = store;
        this.targets = targets;
    }
    /** The store changed `name`: a type's pins, or an internal namespace (cordons) that concerns every type. */
    changed(name) {
        if (!isInternalNamespace(name)) {
            this.queue(name);
            return;
        }
        for (const typeName of this.targets.typeNames())
            this.queue(typeName);
    }
    /** A pinned target may just have become able to take its shards (it joined, or its region registered). */
    mayApply(typeName) {
        if (this.store.snapshot(typeName).placements.size > 0)
            this.queue(typeName);
    }
    queue(typeName) {
        const { coordinator, stopped } = this.targets;
        if (stopped() || coordinator(typeName) === undefined || this.queued.has(typeName))
            return;
        this.queued.add(typeName);
        queueMicrotask(() => {
            this.queued.delete(typeName);
            if (!stopped())
                coordinator(typeName)?.rebalanceSoon();
        });
    }
}
//# sourceMappingURL=placement-changes.js.map