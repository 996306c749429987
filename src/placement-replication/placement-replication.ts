// Replicates this node's placement-store replica to every cluster member over the cluster transport: crdt/'s
// replicator does the syncing, its peers follow membership (a joining node pulls the full state from every
// member it meets), and its sync frames travel as the placement sync family of the wire protocol.
import {
  PlacementReplicator,
  type PlacementLog,
  type PlacementReplicatorOptions,
  type PlacementReplicatorStats,
  type PlacementStore,
  type SyncFrame,
} from '../../crdt/index.js';
import { NodeAddress } from '../cluster/address.js';
import { JOINED_STATUSES, isGone, type Membership } from '../cluster/member.js';
import type { Transport } from '../cluster/transport/transport.js';
import { isFamilyMessage, type WireMessage } from '../cluster/transport/wire-message.js';
import type { Logger } from '../logging.js';
import type { LogThrottleOptions } from '../logging.js';
import { aggregatedPeerLog } from './peer-log.js';
import { PLACEMENT_SYNC_MESSAGES, toSyncFrame, toSyncMessage } from './sync-messages.js';

/** Replicator settings passed through (see PlacementReplicatorOptions for their defaults). */
export type PlacementReplicationOptions = Pick<
  PlacementReplicatorOptions,
  'antiEntropyIntervalMs' | 'log' | 'random' | 'setInterval' | 'clearInterval' | 'relayFanout'
> & {
  /**
   * The entity types this node knows and their shard counts (the sharding runtime's entityTypes()): a
   * peer's update with a slot of a known type at a shard id at or beyond its count is rejected. Types
   * this node does not know are bounded only by the store's maxUpdateSlots.
   */
  readonly entityTypes?: () => ReadonlyMap<string, { readonly numberOfShards: number }>;
  /** How the replicator's per-peer lines (rejected frames, failed sends) are aggregated (peer-log.ts). */
  readonly peerLog?: LogThrottleOptions;
};

/** What the sharding runtime needs of a replicated placement store: the replica and when it may take writes. */
export interface ReplicatedPlacements {
  readonly store: PlacementStore;
  /** Resolves true when ready, or false after `timeoutMs` (the caller decides whether to write anyway). */
  whenReady(timeoutMs: number): Promise<boolean>;
}

/**
 * Replicates this node's PlacementStore to every cluster member over the cluster transport (the placement-sync
 * message family), following membership; the `placements` a ClusterSharding takes.
 */
export class PlacementReplication implements ReplicatedPlacements {
  private readonly replicator: PlacementReplicator;
  private readonly unsubscribe: Array<() => void>;
  private readonly addresses = new Map<string, NodeAddress>();
  // The shard counts read once per received message, not once per slot it carries.
  private shardCounts: ReadonlyMap<string, { readonly numberOfShards: number }> | undefined;

  constructor(
    readonly store: PlacementStore,
    private readonly transport: Transport,
    private readonly membership: Membership,
    options: PlacementReplicationOptions = {},
  ) {
    transport.register(PLACEMENT_SYNC_MESSAGES);
    const { entityTypes, peerLog, log, ...rest } = options;
    const replicatorOptions = log === undefined ? rest : { ...rest, log: aggregatedPeerLog(log, peerLog) };
    if (entityTypes !== undefined) {
      store.setSlotCheck((typeName, shardId) => {
        this.shardCounts ??= entityTypes();
        const count = this.shardCounts.get(typeName)?.numberOfShards;
        return count !== undefined && shardId >= count
          ? `is beyond the type's ${count} shards (ids 0-${count - 1})`
          : null;
      });
    }
    this.replicator = new PlacementReplicator(
      store,
      { sendFrame: (peer, frame) => this.sendFrame(peer, frame) },
      replicatorOptions,
    );
    this.unsubscribe = [
      transport.onMessage((from, message) => this.onMessage(from, message)),
      membership.onChange(() => this.syncPeers()),
    ];
    this.syncPeers();
  }

  peers(): readonly string[] {
    return this.replicator.peers();
  }

  stats(): PlacementReplicatorStats {
    return this.replicator.stats();
  }

  /**
   * True once this replica may take local writes safely: the node has joined (so it knows its peers) and
   * has applied a full sync from one of them, or it has no peers. A node restarted with an empty replica
   * that wrote sooner could race its previous incarnation's value on the same slot, which Yjs settles by
   * client id rather than by HLC. A replica rebuilt from its data directory holds its own slots, so it is
   * ready at once.
   */
  isReady(): boolean {
    if (this.store.durability?.restored === true) return true;
    const self = this.membership.self.toString();
    let joined = false;
    let peers = 0;
    for (const member of this.membership.members()) {
      if (member.address.toString() === self) joined = JOINED_STATUSES.has(member.status);
      else if (!isGone(member.status)) peers++;
    }
    return joined && (peers === 0 || this.replicator.hasSynced());
  }

  whenReady(timeoutMs: number): Promise<boolean> {
    if (this.isReady()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const check = (): void => {
        if (this.isReady()) done(true);
      };
      const unsubscribe = [this.membership.onChange(check), this.replicator.onSynced(check)];
      const timer = setTimeout(() => done(false), timeoutMs);
      const done = (ready: boolean): void => {
        clearTimeout(timer);
        for (const stop of unsubscribe) stop();
        resolve(ready);
      };
    });
  }

  /** One anti-entropy round now (the timer runs them anyway). */
  antiEntropy(): void {
    this.replicator.antiEntropy();
  }

  /** Stops replicating; the store stays usable (it belongs to the caller). Idempotent. */
  close(): void {
    for (const unsubscribe of this.unsubscribe.splice(0)) unsubscribe();
    this.replicator.close();
  }

  private syncPeers(): void {
    const self = this.membership.self.toString();
    const wanted = new Map<string, NodeAddress>();
    for (const member of this.membership.members()) {
      const key = member.address.toString();
      if (key !== self && !isGone(member.status)) wanted.set(key, member.address);
    }
    for (const peer of this.replicator.peers()) {
      if (!wanted.has(peer)) {
        this.replicator.removePeer(peer);
        this.addresses.delete(peer);
      }
    }
    for (const [key, address] of wanted) {
      if (this.addresses.has(key)) continue;
      this.addresses.set(key, address);
      this.replicator.addPeer(key);
    }
  }

  // The link's two ends carry decoded frames: the transport encodes each message once, on the wire.
  private sendFrame(peer: string, frame: SyncFrame): void {
    const address = this.addresses.get(peer) ?? NodeAddress.parse(peer);
    this.transport.send(address, toSyncMessage(frame));
  }

  private onMessage(from: NodeAddress, message: WireMessage): void {
    // A replica answers anyone who asks, member or not yet: a joining node's first step 1 may arrive
    // before its membership record does.
    if (!isFamilyMessage(PLACEMENT_SYNC_MESSAGES, message)) return;
    this.shardCounts = undefined;
    this.replicator.receiveFrame(from.toString(), toSyncFrame(message));
  }
}

/** crdt/'s log events (of the store and the replicator) written to a node's logger. */
export function placementLogOf(logger: Logger): PlacementLog {
  return (event) => logger[event.level]({ ...event.details }, event.message);
}
