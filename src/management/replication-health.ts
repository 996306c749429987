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
 * Judges a replica's replication from its counters: peers synced, frames rejected, values held; lists each problem in
 * words.
 */
export function replicationHealth(replicator: PlacementReplicatorStats, store: PlacementStoreStats): ReplicationHealth {
  const problems: string[] = [];
  const peers = replicator.peers;
  if (store.awaitingMissingUpdates) problems.push('updates wait for an earlier update of their writer that has not arrived');
  if (peers.length > 0 && peers.every((peer) => peer.lastSendFailed)) problems.push('the last send to every peer failed');
  if (peers.length > 0 && peers.every((peer) => peer.lastFrameRejected)) problems.push('the last frame from every peer was rejected');
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
