// What a node's health says about placement replication: the figures an operator needs to see a replica that
// has fallen out of the cluster's placements, and the problems that make the node's health not `ok`.
import type { PlacementReplicatorStats, PlacementStoreStats } from '../../crdt/index.js';

/** The placement replication part of `/actor-ts/health`: peer counts and the problems found, empty when healthy. */
export interface ReplicationHealth {
  readonly peers: number;
  /** Peers a full sync has been applied from. */
  readonly syncedPeers: number;
  /** Peers whose last state vector shows updates this replica has not integrated (transient while syncing). */
  readonly peersBehind: number;
  readonly framesRejected: number;
  readonly sendFailures: number;
  /** Values whose timestamp no replica may count (past the representable range) or that were too far ahead. */
  readonly rejectedValues: PlacementStoreStats['rejectedValues'];
  /** Values kept but not counted until this node's clock catches up with them. */
  readonly heldValues: number;
  readonly quarantinedValues: number;
  /** Updates that cannot be integrated yet because an earlier update of their writer is missing. */
  readonly awaitingMissingUpdates: boolean;
  /** Why this replica cannot replicate now; empty when it can. A non-empty list makes health `degraded`. */
  readonly problems: readonly string[];
}

/**
 * What the transport says about this node's inbound side: `starved` when peers' frames are being refused
 * or delayed for want of inbound budget (the transport's stats; the node wires it), with why.
 */
export interface InboundHealth {
  readonly starved: boolean;
  readonly reason?: string;
}

/** Peers named in one problem line at most; the rest are counted. */
const NAMED_PEERS = 5;

/**
 * Judges a replica's replication from its counters: peers synced, frames rejected, values held, inbound budget;
 * lists each problem in words.
 */
export function replicationHealth(
  replicator: PlacementReplicatorStats,
  store: PlacementStoreStats,
  inbound?: InboundHealth,
): ReplicationHealth {
  const problems: string[] = [];
  const peers = replicator.peers;
  if (store.awaitingMissingUpdates)
    problems.push('updates wait for an earlier update of their writer that has not arrived');
  // One peer is enough: what it writes does not reach this replica, or what this replica writes does not reach it.
  const unsent = peers.filter((peer) => peer.lastSendFailed).map((peer) => peer.peer);
  if (unsent.length > 0)
    problems.push(
      `the last send to ${listed(unsent)} failed: placements written here may not reach ${unsent.length === 1 ? 'it' : 'them'}`,
    );
  const rejected = peers.filter((peer) => peer.lastFrameRejected).map((peer) => peer.peer);
  if (rejected.length > 0)
    problems.push(
      `the last frame from ${listed(rejected)} was rejected: placements written there may not reach this node`,
    );
  if (store.heldValues > 0) {
    problems.push(
      `${store.heldValues} placement value(s) are held for being too far ahead of this node's clock (another node's clock, or this one's, is wrong): fix the clocks (NTP), or remove the pins with force`,
    );
  }
  if (inbound?.starved === true)
    problems.push(`inbound frames are starved of budget${inbound.reason === undefined ? '' : `: ${inbound.reason}`}`);
  return {
    peers: peers.length,
    syncedPeers: peers.filter((peer) => peer.synced).length,
    peersBehind: replicator.peersBehind,
    framesRejected: replicator.framesRejected,
    sendFailures: replicator.sendFailures,
    rejectedValues: store.rejectedValues,
    heldValues: store.heldValues,
    quarantinedValues: store.quarantinedValues,
    awaitingMissingUpdates: store.awaitingMissingUpdates,
    problems,
  };
}

function listed(peers: readonly string[]): string {
  const named = peers.slice(0, NAMED_PEERS).join(', ');
  return peers.length > NAMED_PEERS ? `${named} and ${peers.length - NAMED_PEERS} more peer(s)` : `peer(s) ${named}`;
}
