// Carries the node's placement-store replica over the cluster transport: the replicator's sync frames
// become the protocol's PlacementSyncStep1 / PlacementSyncStep2 / PlacementUpdate messages, and its peers
// follow cluster membership, so a joining node pulls the full state from everyone it meets.
import {
  PlacementReplicator,
  decodeSyncFrame,
  encodeSyncFrame,
  type PlacementLog,
  type PlacementReplicatorOptions,
  type PlacementReplicatorStats,
  type PlacementStore,
  type SyncFrame,
} from '../../crdt/index.js';
import { NodeAddress } from '../cluster/address.js';
import type { Membership, MemberStatus } from '../cluster/member.js';
import type { Transport } from '../cluster/transport.js';
import { isFamilyMessage, type WireMessage } from '../cluster/wire-message.js';
import { PLACEMENT_MESSAGES, type PlacementMessage } from './placement-messages.js';

/** Replicator settings passed through (see PlacementReplicatorOptions for their defaults). */
export type PlacementGossipOptions = Pick<
  PlacementReplicatorOptions,
  'antiEntropyIntervalMs' | 'log' | 'random' | 'setInterval' | 'clearInterval' | 'relayFanout'
>;

/** Members worth replicating with: every one that may still run shards or take writes. */
const REPLICATING: ReadonlySet<MemberStatus> = new Set(['joining', 'weakly-up', 'up', 'leaving', 'exiting']);
/** Statuses in which this node has received the cluster's membership, so it knows its peers. */
const JOINED: ReadonlySet<MemberStatus> = new Set(['weakly-up', 'up', 'leaving', 'exiting']);

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
    transport.register(PLACEMENT_MESSAGES);
    this.replicator = new PlacementReplicator(store, { send: (peer, bytes) => this.sendFrame(peer, bytes) }, options);
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
   * client id rather than by HLC.
   */
  isReady(): boolean {
    const self = this.membership.self.toString();
    let joined = false;
    let peers = 0;
    for (const member of this.membership.members()) {
      if (member.address.toString() === self) joined = JOINED.has(member.status);
      else if (REPLICATING.has(member.status)) peers++;
    }
    return joined && (peers === 0 || this.replicator.hasSynced());
  }

  /** Resolves true when ready, or false after `timeoutMs` (the caller decides whether to write anyway). */
  whenReady(timeoutMs: number): Promise<boolean> {
    if (this.isReady()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const check = (): void => {
        if (!this.isReady()) return;
        done(true);
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

  private onMessage(from: NodeAddress, message: WireMessage): void {
    const frame = isFamilyMessage(PLACEMENT_MESSAGES, message) ? toFrame(message) : undefined;
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

function toFrame(message: PlacementMessage): SyncFrame | undefined {
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
