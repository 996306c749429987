// Keeps a PlacementStore in sync with peers over a minimal link: sync step 1 -> step 2 when a peer is added
// and on every anti-entropy tick with one random peer (repairs anything a push lost), plus an immediate
// push of every new store update to every peer. Bad frames are counted and logged, never thrown.
import { PlacementStoreError, describe } from './errors.js';
import { silentLog, type PlacementLog } from './log.js';
import type { PlacementStore } from './store.js';
import { DEFAULT_MAX_FRAME_BYTES, decodeSyncFrame, encodeSyncFrame, type SyncFrame } from './sync-frame.js';

/** How the replicator reaches peers; the cluster transport implements it and calls receive() on arrival. */
export interface PlacementLink {
  send(peer: string, bytes: Uint8Array): void;
}

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
}

export interface PlacementReplicatorStats {
  readonly framesSent: number;
  readonly framesReceived: number;
  readonly framesRejected: number;
  readonly bytesSent: number;
  readonly bytesReceived: number;
  readonly sendFailures: number;
}

export const DEFAULT_ANTI_ENTROPY_INTERVAL_MS = 1000;

export class PlacementReplicator {
  private readonly peerSet = new Set<string>();
  private readonly random: () => number;
  private readonly clearTimer: (handle: unknown) => void;
  private readonly timer: unknown;
  private readonly log: PlacementLog;
  private readonly maxFrameBytes: number;
  private readonly unsubscribe: () => void;
  // The peer whose update is being applied, so its own update is not echoed back to it.
  private applyingFrom: string | null = null;
  private closed = false;
  private framesSent = 0;
  private framesReceived = 0;
  private framesRejected = 0;
  private bytesSent = 0;
  private bytesReceived = 0;
  private sendFailures = 0;

  constructor(
    private readonly store: PlacementStore,
    private readonly link: PlacementLink,
    options: PlacementReplicatorOptions = {},
  ) {
    const interval = options.antiEntropyIntervalMs ?? DEFAULT_ANTI_ENTROPY_INTERVAL_MS;
    if (!Number.isFinite(interval) || interval <= 0) {
      throw new PlacementStoreError('invalid_option', `antiEntropyIntervalMs must be a positive number, got ${describe(interval)}`);
    }
    const maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    if (!Number.isSafeInteger(maxFrameBytes) || maxFrameBytes <= 0) {
      throw new PlacementStoreError('invalid_option', `maxFrameBytes must be a positive integer, got ${describe(maxFrameBytes)}`);
    }
    if (typeof link !== 'object' || link === null || typeof link.send !== 'function') {
      throw new PlacementStoreError('invalid_option', 'link must have a send(peer, bytes) function');
    }
    this.random = options.random ?? Math.random;
    this.log = options.log ?? silentLog;
    this.maxFrameBytes = maxFrameBytes;
    this.unsubscribe = store.onUpdate((update, origin) => this.push(update, origin));
    const startTimer = options.setInterval ?? defaultSetInterval;
    this.clearTimer = options.clearInterval ?? ((handle) => clearInterval(handle as NodeJS.Timeout));
    this.timer = startTimer(() => this.antiEntropy(), interval);
  }

  /** Starts replicating with `peer`: asks it for what this store lacks (sync step 1). */
  addPeer(peer: string): void {
    if (this.closed) return;
    assertPeer(peer);
    this.peerSet.add(peer);
    this.send(peer, { kind: 'step1', stateVector: this.store.encodeStateVector() });
  }

  removePeer(peer: string): void {
    this.peerSet.delete(peer);
  }

  peers(): readonly string[] {
    return Object.freeze([...this.peerSet]);
  }

  /** One anti-entropy round: sync step 1 to one random peer. Runs on the timer; callable directly. */
  antiEntropy(): void {
    if (this.closed || this.peerSet.size === 0) return;
    const peers = [...this.peerSet];
    const pick = Math.min(peers.length - 1, Math.max(0, Math.floor(this.random() * peers.length)));
    this.send(peers[pick] as string, { kind: 'step1', stateVector: this.store.encodeStateVector() });
  }

  /** Handles one frame from `peer`. Never throws: a bad frame is counted, logged and has no effect. */
  receive(peer: string, bytes: Uint8Array): void {
    if (this.closed) return;
    this.framesReceived++;
    this.bytesReceived += bytes instanceof Uint8Array ? bytes.length : 0;
    try {
      assertPeer(peer);
      const frame = decodeSyncFrame(bytes, this.maxFrameBytes);
      if (frame.kind === 'step1') {
        this.send(peer, { kind: 'step2', update: this.store.encodeDiff(frame.stateVector) });
        return;
      }
      this.applyingFrom = peer;
      try {
        this.store.applyUpdate(frame.update);
      } finally {
        this.applyingFrom = null;
      }
    } catch (error) {
      this.framesRejected++;
      this.log({
        level: 'warn',
        message: `rejected placement sync frame from ${describe(peer)}: ${error instanceof Error ? error.message : String(error)}`,
        details: { peer, code: error instanceof PlacementStoreError ? error.code : undefined },
      });
    }
  }

  /** Stops the timer and the pushes; later frames and peers are ignored. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.clearTimer(this.timer);
    this.unsubscribe();
    this.peerSet.clear();
  }

  stats(): PlacementReplicatorStats {
    return {
      framesSent: this.framesSent,
      framesReceived: this.framesReceived,
      framesRejected: this.framesRejected,
      bytesSent: this.bytesSent,
      bytesReceived: this.bytesReceived,
      sendFailures: this.sendFailures,
    };
  }

  private push(update: Uint8Array, origin: 'local' | 'remote'): void {
    if (this.closed || this.peerSet.size === 0) return;
    const skip = origin === 'remote' ? this.applyingFrom : null;
    const bytes = encodeSyncFrame({ kind: 'update', update });
    for (const peer of this.peerSet) if (peer !== skip) this.sendBytes(peer, bytes);
  }

  private send(peer: string, frame: SyncFrame): void {
    this.sendBytes(peer, encodeSyncFrame(frame));
  }

  private sendBytes(peer: string, bytes: Uint8Array): void {
    try {
      this.link.send(peer, bytes);
      this.framesSent++;
      this.bytesSent += bytes.length;
    } catch (error) {
      // A failing link must not break the store's update event; anti-entropy repairs the loss later.
      this.sendFailures++;
      this.log({
        level: 'warn',
        message: `placement sync send to ${describe(peer)} failed: ${error instanceof Error ? error.message : String(error)}`,
        details: { peer },
      });
    }
  }
}

function assertPeer(peer: unknown): asserts peer is string {
  if (typeof peer !== 'string' || peer.length === 0) {
    throw new PlacementStoreError('invalid_option', `peer must be a non-empty string, got ${describe(peer)}`);
  }
}

// Unref'd, so an idle replicator never keeps a process alive on its own.
function defaultSetInterval(callback: () => void, ms: number): unknown {
  const handle = setInterval(callback, ms);
  handle.unref();
  return handle;
}
