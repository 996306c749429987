// Carries the node's placement-store replica over the cluster transport: the replicator's sync frames
// become the protocol's PlacementSyncStep1 / PlacementSyncStep2 / PlacementUpdate messages, and its peers
// follow cluster membership, so a joining node pulls the full state from everyone it meets.
import {
  PlacementReplicator,
  decodeSyncFrame,
  encodeSyncFrame,
  type PlacementLog,
  type PlacementReplicatorStats,
  type PlacementStore,
  type SyncFrame,
} from '../../crdt/index.js';
import { NodeAddress } from '../cluster/address.js';
import type { Membership, MemberStatus } from '../cluster/member.js';
import type { Transport } from '../cluster/transport.js';
import type { PlacementMessage, ProtocolMessage } from '../protocol.js';

export interface PlacementGossipOptions {
  /** How often one random peer is asked for what this replica lacks. Default 1000 ms. */
  readonly antiEntropyIntervalMs?: number;
  readonly log?: PlacementLog;
}

/** Members worth replicating with: every one that may still run shards or take writes. */
const REPLICATING: ReadonlySet<MemberStatus> = new Set(['joining', 'weakly-up', 'up', 'leaving', 'exiting']);

export class PlacementGossip {
  private readonly replicator: PlacementReplicator;
  private readonly unsubscribe: Array<() => void>;
  private readonly addresses = new Map<string, NodeAddress>();

  constructor(
    store: PlacementStore,
    private readonly transport: Transport,
    private readonly membership: Membership,
    options: PlacementGossipOptions = {},
  ) {
    this.replicator = new PlacementReplicator(
      store,
      { send: (peer, bytes) => this.sendFrame(peer, bytes) },
      {
        ...(options.antiEntropyIntervalMs !== undefined ? { antiEntropyIntervalMs: options.antiEntropyIntervalMs } : {}),
        ...(options.log !== undefined ? { log: options.log } : {}),
      },
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

  /** One anti-entropy round now (the timer runs them anyway). */
  antiEntropy(): void {
    this.replicator.antiEntropy();
  }

  close(): void {
    for (const unsubscribe of this.unsubscribe.splice(0)) unsubscribe();
    this.replicator.close();
  }

  private syncPeers(): void {
    const self = this.membership.self.toString();
    const wanted = new Map<string, NodeAddress>();
    for (const member of this.membership.members()) {
      const key = member.address.toString();
      if (key !== self && REPLICATING.has(member.status)) wanted.set(key, member.address);
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

  private sendFrame(peer: string, bytes: Uint8Array): void {
    const address = this.addresses.get(peer) ?? NodeAddress.parse(peer);
    this.transport.send(address, toMessage(decodeSyncFrame(bytes)));
  }

  private onMessage(from: NodeAddress, message: ProtocolMessage): void {
    const frame = toFrame(message);
    // A replica answers anyone who asks, member or not yet: a joining node's first step 1 may arrive
    // before its membership record does.
    if (frame !== undefined) this.replicator.receive(from.toString(), encodeSyncFrame(frame));
  }
}

function toMessage(frame: SyncFrame): PlacementMessage {
  switch (frame.kind) {
    case 'step1':
      return { type: 'PlacementSyncStep1', stateVector: frame.stateVector };
    case 'step2':
      return { type: 'PlacementSyncStep2', update: frame.update };
    case 'update':
      return { type: 'PlacementUpdate', update: frame.update };
  }
}

function toFrame(message: ProtocolMessage): SyncFrame | undefined {
  switch (message.type) {
    case 'PlacementSyncStep1':
      return { kind: 'step1', stateVector: message.stateVector };
    case 'PlacementSyncStep2':
      return { kind: 'step2', update: message.update };
    case 'PlacementUpdate':
      return { kind: 'update', update: message.update };
    default:
      return undefined;
  }
}
