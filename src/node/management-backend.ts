// The management API's view of a running node: placements through each type's ExternalAllocationController,
// everything else through the cluster and the sharding runtime.
import { existsSync } from 'node:fs';
import type { NodeAddress } from '../cluster/address.js';
import type { PlacementReplicatorStats } from '../../crdt/index.js';
import type { Cluster } from '../cluster/membership/cluster.js';
import type { PeerProtocols } from '../cluster/transport/peer-protocols.js';
import { COUNTED_STATUSES, WRITING_STATUSES, holdsMajority, type MemberInfo } from '../cluster/member.js';
import { compareAddresses } from '../cluster/member-order.js';
import type {
  DryRunMoves,
  CordonWritten,
  DrainOutcome,
  ManagementBackend,
  MemberProtocol,
  ParsedPin,
  PinScope,
  PlacementsDryRun,
  PlacementStoreHealth,
  RebalanceOutcome,
  ShardExplanation,
  ShardLocations,
  StorageHealth,
  WriteAccess,
  PinRecord,
  ShardId,
} from '../management/backend.js';
import { replicationHealth, type InboundHealth, type ReplicationHealth } from '../management/replication-health.js';
import type { ClusterSharding } from '../sharding/cluster-sharding.js';
import {
  ExternalAllocationController,
  pinRecords,
  type PlacementWriteOptions,
} from '../sharding/api/external-allocation-controller.js';
import { askDryRunRebalance, askExplain } from '../sharding/api/shard-insight.js';
import type { Logger } from '../logging.js';
import type { CordonRecord } from '../sharding/placements/cordon-view.js';
import type { CordonProvenance } from '../sharding/placements/cordons.js';
import type { Hlc } from '../../crdt/index.js';
import { CordonOperations } from './cordon-operations.js';

/**
 * The management API's view of one node (members, placements, cordons, drain, health, write access), over its cluster,
 * sharding and replication: what `createManagementServer` and `managementPlugin` serve from.
 */
export class NodeManagementBackend implements ManagementBackend {
  readonly self: NodeAddress;
  private readonly cordoning: CordonOperations;

  constructor(
    private readonly cluster: Cluster,
    private readonly sharding: ClusterSharding,
    private readonly replicator: { stats(): PlacementReplicatorStats },
    private readonly controllers: Map<string, ExternalAllocationController> = new Map(),
    private readonly options: {
      /** Given to the controllers this backend makes, so their writes are logged with reason and author. */
      readonly logger?: Logger;
      /** Why writes are held right now (this process was just frozen), or undefined. */
      readonly holding?: () => string | undefined;
      /** Why this node's clock is beyond `maxClockOffsetMs` of its peers' median (ClockOffsetTracker), or undefined. */
      readonly clockSkew?: () => string | undefined;
      /** Whether the transport starves this node's inbound frames of budget (its stats); reported in health. */
      readonly inbound?: () => InboundHealth;
      /** The transport's handshakes: each member's release and protocol, and peers refused for their protocol. */
      readonly protocols?: PeerProtocols;
      /** Why durable entities cannot be committed now (NodeEntityStore.problem), or undefined. */
      readonly entityStore?: () => string | undefined;
    } = {},
  ) {
    this.self = cluster.self;
    this.cordoning = new CordonOperations(
      () => cluster.members(),
      sharding,
      () => this.options.clockSkew?.(),
    );
  }

  cordons(): readonly CordonRecord[] {
    return this.sharding.cordons.list();
  }

  cordon(address: string, provenance: CordonProvenance): Promise<CordonWritten> {
    return this.cordoning.cordon(address, provenance);
  }

  uncordon(address: string): Promise<Hlc> {
    return this.cordoning.uncordon(address);
  }

  drain(address: string, provenance: CordonProvenance): Promise<DrainOutcome> {
    return this.cordoning.drain(address, provenance);
  }

  entityStoreProblem(): string | undefined {
    return this.options.entityStore?.();
  }

  writeAccess(): WriteAccess {
    const status = this.cluster.selfMember()?.status;
    // Joining may write: the cluster accepted this node (its record is in the gossip), so its writes replicate.
    // Leaving and exiting may not: the node is going away and its replica may get no further anti-entropy
    // round; down, removed and "never joined" are outside the cluster, where a write could only stay local.
    if (status === undefined || !WRITING_STATUSES.has(status)) {
      const why =
        status === undefined
          ? 'this node has not joined a cluster (no seed node accepted it yet)'
          : `this node's member status is ${status}`;
      return {
        writable: false,
        code: 'not_a_member',
        reason: `${why}; placement writes need a member that is joining or up: send them to another node`,
      };
    }
    const held = this.options.holding?.();
    if (held !== undefined) return { writable: false, code: 'paused', reason: held };
    // Acknowledged means in force: a write stamped by a clock far off its peers' would be held back by them.
    const skew = this.options.clockSkew?.();
    if (skew !== undefined) return { writable: false, code: 'clock_skew', reason: skew };
    // A node off the majority side (the rule the downing decision keeps sides by) is on the side that downs
    // itself, or was paused long enough to be put out and has not heard it yet: a write it acknowledged could
    // stay local and die with it. This node counts itself even while joining.
    const counted = this.cluster.members().filter((m) => COUNTED_STATUSES.has(m.status) || m.address.equals(this.self));
    const side = counted.filter((m) => m.reachable || m.address.equals(this.self));
    const lowest = counted.reduce<MemberInfo | undefined>(
      (low, m) => (low === undefined || compareAddresses(m.address, low.address) < 0 ? m : low),
      undefined,
    );
    if (!holdsMajority(counted.length, side.length, lowest !== undefined && side.includes(lowest))) {
      return {
        writable: false,
        code: 'no_majority',
        reason: `this node reaches ${side.length} of ${counted.length} members, not the majority side: a write here could be lost with this side of a partition; send it to a node on the majority side`,
      };
    }
    return { writable: true };
  }

  entityTypes(): ReturnType<ManagementBackend['entityTypes']> {
    return this.sharding.entityTypes();
  }

  members(): ReadonlyArray<MemberInfo> {
    return this.cluster.members();
  }

  pinScope(typeName: string): PinScope {
    return this.controller(typeName).pinScope();
  }

  setPlacements(
    typeName: string,
    pins: ReadonlyArray<ParsedPin>,
    options?: PlacementWriteOptions,
  ): Promise<readonly PinRecord[]> {
    return this.controller(typeName).setParsedPlacements(pins, options);
  }

  removePlacement(typeName: string, shardId: ShardId): Promise<boolean> {
    return this.controller(typeName).removePin(shardId);
  }

  placements(typeName: string, options: { readonly includeExpired?: boolean } = {}): ReadonlyArray<PinRecord> {
    return pinRecords(this.sharding.placementStore, typeName, { includeExpired: options.includeExpired === true });
  }

  async rebalance(typeName: string, shardIds: readonly ShardId[]): Promise<RebalanceOutcome> {
    const { accepted, unallocated } = await this.sharding.rebalanceNow(typeName, shardIds);
    return { accepted, unallocated };
  }

  shardLocations(typeName: string): Promise<ShardLocations> {
    return this.sharding.getShardLocations(typeName);
  }

  explain(typeName: string, shardId: ShardId): Promise<ShardExplanation> {
    return askExplain(this.sharding, typeName, shardId);
  }

  dryRunPlacements(
    typeName: string,
    pins: ReadonlyArray<ParsedPin>,
    options?: PlacementWriteOptions,
  ): Promise<PlacementsDryRun> {
    return this.controller(typeName).dryRunPins(pins, options);
  }

  dryRunRebalance(typeName: string, shardIds: readonly ShardId[]): Promise<DryRunMoves> {
    return askDryRunRebalance(this.sharding, typeName, shardIds);
  }

  placementStore(): PlacementStoreHealth {
    const { generation, slots, baseSlots, documentItems } = this.sharding.placementStore.stats();
    return { generation, slots, baseSlots, documentItems };
  }

  storage(): StorageHealth {
    const durability = this.sharding.placementStore.durability;
    if (durability === undefined) {
      return {
        durable: false,
        path: null,
        bytesOnDisk: 0,
        lastCommitAt: null,
        logRecordsSinceSnapshot: 0,
        restored: false,
        failure: null,
      };
    }
    const { path, bytesOnDisk, lastCommitAt, logRecordsSinceSnapshot, restored, failure } = durability.storageHealth();
    // A deleted data directory goes unnoticed by the open database until the next restart finds it empty.
    const gone =
      failure === null && path !== null && !existsSync(path)
        ? `the data directory ${path} is gone: placements written now do not survive a restart of this node`
        : null;
    return {
      durable: true,
      path,
      bytesOnDisk,
      lastCommitAt,
      logRecordsSinceSnapshot,
      restored,
      failure: failure ?? gone,
    };
  }

  replication(): ReplicationHealth {
    const health = replicationHealth(
      this.replicator.stats(),
      this.sharding.placementStore.stats(),
      this.options.inbound?.(),
    );
    const refused = this.options.protocols?.problems() ?? [];
    return refused.length === 0 ? health : { ...health, problems: [...health.problems, ...refused] };
  }

  protocolOf(address: NodeAddress): MemberProtocol | undefined {
    const protocols = this.options.protocols;
    if (protocols === undefined) return undefined;
    if (!address.equals(this.self)) return protocols.of(address.toString());
    const { release, protocolMax } = protocols.announcement;
    return protocolMax === undefined ? undefined : { release, protocol: protocolMax };
  }

  health(): { status: 'ok' | 'starting' | 'leaving' | 'down'; memberStatus: string | undefined } {
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
  private controller(typeName: string): ExternalAllocationController {
    let controller = this.controllers.get(typeName);
    if (controller === undefined) {
      const members = (): ReadonlyArray<MemberInfo> => this.cluster.members();
      controller = new ExternalAllocationController(this.sharding, typeName, {
        members,
        clockSkew: () => this.options.clockSkew?.(),
        ...(this.options.logger === undefined ? {} : { logger: this.options.logger }),
      });
      this.controllers.set(typeName, controller);
    }
    return controller;
  }
}
