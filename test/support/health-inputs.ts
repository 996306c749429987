// Test helper for the health tests: the replicator figures, peers and storage health of a node where nothing is
// wrong, so that each test changes only the figure it is about.
import type { PlacementReplicatorStats } from '../../crdt/index.js';
import type { StorageHealth } from '../../src/management/backend.js';

export type ReplicatorPeer = PlacementReplicatorStats['peers'][number];

/** A peer in sync, with nothing rejected or failed (named `p` unless `overrides` names it). */
export function syncedPeer(overrides: Partial<ReplicatorPeer> = {}): ReplicatorPeer {
  return {
    peer: 'p',
    synced: true,
    behind: false,
    framesRejected: 0,
    lastFrameRejected: false,
    lastSendFailed: false,
    ...overrides,
  };
}

/** Replicator figures with nothing sent, received or failed yet, over `peers`. */
export function idleReplicator(peers: ReplicatorPeer[]): PlacementReplicatorStats {
  return {
    framesSent: 0,
    framesReceived: 0,
    framesRejected: 0,
    bytesSent: 0,
    bytesReceived: 0,
    sendFailures: 0,
    peersBehind: 0,
    oldestUnreplicatedMs: null,
    peers,
  };
}

/** The replication health (GET /actor-ts/health's `replication`) of a node alone: no peer, nothing wrong. */
export const ALONE_REPLICATION = {
  peers: 0,
  syncedPeers: 0,
  peersBehind: 0,
  framesRejected: 0,
  sendFailures: 0,
  rejectedValues: { outOfRange: 0, aheadOfClock: 0 },
  heldValues: 0,
  quarantinedValues: 0,
  awaitingMissingUpdates: false,
  problems: [],
} as const;

/** The storage health of a node whose placements live in memory only. */
export const MEMORY_STORAGE: StorageHealth = {
  durable: false,
  path: null,
  bytesOnDisk: 0,
  lastCommitAt: null,
  logRecordsSinceSnapshot: 0,
  restored: false,
  failure: null,
};
