// What a PlacementReplicator is given and reports: the links it reaches peers over, its options with their
// defaults, and its counters. Apart from replicator.ts so that the replicator's logic is one file of its own.
import type { Defer } from './frame-inbox.js';
import type { PlacementLog } from './log.js';
import type { SyncFrame } from './sync-frame.js';

/**
 * How the replicator reaches peers. A byte link carries encoded frames (the y-protocols shapes) and calls
 * receive() on arrival; a frame link hands frames to a transport that encodes messages itself and calls
 * receiveFrame(), so a frame is encoded once per hop, on the wire.
 */
export type PlacementLink = PlacementByteLink | PlacementFrameLink;

/**
 * A link that carries encoded sync frames as bytes (a socket, a message bus); the replicator encodes and decodes
 * them.
 */
export interface PlacementByteLink {
  send(peer: string, bytes: Uint8Array): void;
}

/**
 * A link that carries sync frames as objects, for transports that encode messages themselves (the cluster transport
 * does).
 */
export interface PlacementFrameLink {
  sendFrame(peer: string, frame: SyncFrame): void;
}

/** Options of a PlacementReplicator. */
export interface PlacementReplicatorOptions {
  /** Default 1000. */
  readonly antiEntropyIntervalMs?: number;
  /** Picks the anti-entropy peer; Math.random by default. Must return a number in [0, 1). */
  readonly random?: () => number;
  readonly setInterval?: (callback: () => void, ms: number) => unknown;
  readonly clearInterval?: (handle: unknown) => void;
  readonly log?: PlacementLog;
  /** Larger frames are rejected on receipt. Default 16 MiB. */
  readonly maxFrameBytes?: number;
  /**
   * How many random peers (never the sender) a digest of a received update is relayed to; default 3; 0 relays
   * none. The origin already pushes the content to every peer once, so the digest is only insurance against a
   * lost push: a peer it shows lacking pulls the content from the digest's sender (digest-relay.ts). Relaying the
   * content itself cost about 4 copies of every change per peer. `Infinity` relays to every peer.
   */
  readonly relayFanout?: number;
  /** A received frame larger than this is handled in a later macrotask (frame-inbox.ts). Default 1 MiB. */
  readonly yieldAboveBytes?: number;
  /** How that later macrotask is scheduled; setImmediate by default. */
  readonly defer?: Defer;
}

/** Counters of a replicator's traffic and rejections, for health and metrics. */
export interface PlacementReplicatorStats {
  readonly framesSent: number;
  readonly framesReceived: number;
  readonly framesRejected: number;
  readonly bytesSent: number;
  readonly bytesReceived: number;
  readonly sendFailures: number;
  /** Peers this replica is behind right now (see PlacementPeerStats.behind). */
  readonly peersBehind: number;
  /** One entry per current peer, in the order they were added. */
  readonly peers: readonly PlacementPeerStats[];
  /** Age (ms) of the oldest own write some peer has not shown to hold yet; null when all have them. */
  readonly oldestUnreplicatedMs: number | null;
}

/** What this replica knows about replicating with one peer; a node is not in sync while any is behind. */
export interface PlacementPeerStats {
  readonly peer: string;
  /** A full sync step 2 from this peer has been applied. */
  readonly synced: boolean;
  /**
   * The peer's latest state vector (from its sync step 1) shows updates this replica has not integrated:
   * a later generation, or a writer's updates further on. Stays true while an update cannot be integrated
   * (a missing predecessor), so a stalled stream shows here rather than nowhere.
   */
  readonly behind: boolean;
  /** Frames from this peer that were rejected (malformed), and whether the latest one was. */
  readonly framesRejected: number;
  readonly lastFrameRejected: boolean;
  /** Whether the latest send to this peer failed. */
  readonly lastSendFailed: boolean;
}

/** Default anti-entropy period (1 s): how often a replicator syncs with one random peer to repair lost pushes. */
export const DEFAULT_ANTI_ENTROPY_INTERVAL_MS = 1000;
/** Default number of random peers a receiver relays a new update's digest to, so a lost push is pulled at once. */
export const DEFAULT_RELAY_FANOUT = 3;
