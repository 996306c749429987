import { COUNTED_STATUSES, WRITING_STATUSES, holdsMajority } from '../cluster/member.js';
import { compareAddresses } from '../cluster/member-order.js';
import { replicationHealth } from '../management/replication-health.js';
import { ExternalAllocationController, pinRecords } from '../sharding/placements/external-allocation-controller.js';
import { askDryRunRebalance, askExplain } from '../sharding/coordinator/shard-insight.js';
import { CordonOperations } from './cordon-operations.js';
export class NodeManagementBackend {
    cluster;
    sharding;
    replicator;
    controllers;
    options;
    self;
    cordoning;
    constructor(cluster, sharding, replicator, controllers = new Map(), options = {}) {
        this.cluster = cluster;
        this.sharding = sharding;
        this.replicator = replicator;
        this.controllers = controllers;
        this.options = options;
        this.self = cluster.self;
        this.cordoning = new CordonOperations(() => cluster.members(), sharding);
    }
    cordons() {
        return this.sharding.cordons.list();
    }
    cordon(address, provenance) {
        return this.cordoning.cordon(address, provenance);
    }
    uncordon(address) {
        return this.cordoning.uncordon(address);
    }
    drain(address, provenance) {
        return this.cordoning.drain(address, provenance);
    }
    writeAccess() {
        const status = this.cluster.selfMember()?.status;
        // Joining may write: the cluster accepted this node (its record is in the gossip), so its writes replicate.
        // Leaving and exiting may not: the node is going away and its replica may get no further anti-entropy
        // round; down, removed and "never joined" are outside the cluster, where a write could only stay local.
        if (status === undefined || !WRITING_STATUSES.has(status)) {
            const why = status === undefined
                ? 'this node has not joined a cluster (no seed node accepted it yet)'
                : `this node's member status is ${status}`;
            return { writable: false, code: 'not_a_member', reason: `${why}; placement writes need a member that is joining or up: send them to another node` };
        }
        const held = this.options.holding?.();
        if (held !== undefined)
            return { writable: false, code: 'paused', reason: held };
        // A node off the majority side (the rule the downing decision keeps sides by) is on the side that downs
        // itself, or was paused long enough to be put out and has not heard it yet: a write it acknowledged could
        // stay local and die with it. This node counts itself even while joining.
        const counted = this.cluster.members().filter((m) => COUNTED_STATUSES.has(m.status) || m.address.equals(this.self));
        const side = counted.filter((m) => m.reachable || m.address.equals(this.self));
        const lowest = counted.reduce((low, m) => (low === undefined || compareAddresses(m.address, low.address) < 0 ? m : low), undefined);
        if (!holdsMajority(counted.length, side.length, lowest !== undefined && side.includes(lowest))) {
            return {
                writable: false,
                code: 'no_majority',
                reason: `this node reaches ${side.length} of ${counted.length} members, not the majority side: a write here could be lost with this side of a partition; send it to a node on the majority side`,
            };
        }
        return { writable: true };
    }
    entityTypes() {
        return this.sharding.entityTypes();
    }
    members() {
        return this.cluster.members();
    }
    setPlacements(typeName, entries) {
        return this.controller(typeName).setPlacements(entries);
    }
    removePlacement(typeName, shardId) {
        return this.controller(typeName).removePlacement(shardId);
    }
    placements(typeName, options = {}) {
        return pinRecords(this.sharding.placementStore, typeName, { includeExpired: options.includeExpired === true });
    }
    async rebalance(typeName, shardIds) {
        const { accepted, homeless } = await this.sharding.rebalanceNow(typeName, shardIds);
        return { accepted, homeless };
    }
    shardLocations(typeName) {
        return this.sharding.getShardLocations(typeName);
    }
    explain(typeName, shardId) {
        return askExplain(this.sharding, typeName, shardId);
    }
    dryRunPlacements(typeName, entries) {
        return this.controller(typeName).dryRunPlacements(entries);
    }
    dryRunRebalance(typeName, shardIds) {
        return askDryRunRebalance(this.sharding, typeName, shardIds);
    }
    placementStore() {
        const { generation, slots, baseSlots, documentItems } = this.sharding.placementStore.stats();
        return { generation, slots, baseSlots, documentItems };
    }
    storage() {
        const durability = this.sharding.placementStore.durability;
        if (durability === undefined) {
            return { durable: false, path: null, bytesOnDisk: 0, lastCommitAt: null, logRecordsSinceSnapshot: 0, restored: false, failure: null };
        }
        const { path, bytesOnDisk, lastCommitAt, logRecordsSinceSnapshot, restored, failure } = durability.storageHealth();
        return { durable: true, path, bytesOnDisk, lastCommitAt, logRecordsSinceSnapshot, restored, failure };
    }
    replication() {
        return replicationHealth(this.replicator.stats(), this.sharding.placementStore.stats());
    }
    health() {
        const status = this.cluster.selfMember()?.status;
        switch (status) {
            case 'up':
            case 'weakly-up':
                return { status: 'ok', memberStatus: status };
            case 'leaving':
            case 'exiting':
                return { status: 'leaving', memberStatus: status };
            case 'down':
            case 'removed':
                return { status: 'down', memberStatus: status };
            default:
                return { status: 'starting', memberStatus: status };
        }
    }
    // Any initialised type can carry placements; its controller is made on first use.
    controller(typeName) {
        let controller = this.controllers.get(typeName);
        if (controller === undefined) {
            controller = new ExternalAllocationController(this.sharding, typeName, this.options.logger === undefined ? {} : { logger: this.options.logger });
            this.controllers.set(typeName, controller);
        }
        return controller;
    }
}
//# sourceMappingURL=management-backend.js.map