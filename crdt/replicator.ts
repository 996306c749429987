// Keeps a PlacementStore in sync with peers over a minimal link: sync step 1 -> step 2 when a peer is added
// and on every anti-entropy tick with one random peer (repairs anything a push lost), plus an immediate
// push of every own store update to every peer; what a replica receives new it relays as a digest, and a peer
// the digest shows lacking pulls the content (digest-relay.ts). Bad frames are counted and logged, never thrown.
// Peers on different generations (a replica compacted, see PlacementStore.compact) find each other here:
// the one behind is sent the newer, small document, and its own placements travel back folded into a base.
import { PlacementStoreError, describe } from './errors.js';
import { silentLog, type PlacementLog } from './log.js';
import type { PlacementStore } from './store.js';
import { decodeSyncFrame, encodeSyncFrame, type SyncFrame } from './sync-frame.js';
import { generationOf, lacksUpdatesOf } from './wire.js';
import { emptyUpdateFor } from './wire-digest.js';
import {
  assertPeer,
  checkFrame,
  checkSettings,
  defaultSetInterval,
  frameSize,
  pickRandom,
} from './replicator-checks.js';
import { DigestRelay } from './digest-relay.js';
import type { PlacementDurability } from './durability.js';
import { UnreplicatedWrites } from './unreplicated-writes.js';
import { GenerationBound } from './generation-bound.js';
import { FrameInbox } from './frame-inbox.js';
import type {
  PlacementByteLink,
  PlacementFrameLink,
  PlacementLink,
  PlacementPeerStats,
  PlacementReplicatorOptions,
  PlacementReplicatorStats,
} from './replicator-options.js';

interface PeerState {
  stateVector: Uint8Array | undefined;
  framesRejected: number;
  lastFrameRejected: boolean;
  lastSendFailed: boolean;
}

/**
 * Replicates one PlacementStore to its peers over a link you provide: y-protocols sync (step 1 / step 2) when a peer
 * is added and by anti-entropy, every local update pushed to all peers once, and a digest of what a replica received
 * new relayed onward so a lost push is pulled. Bad frames are rejected and counted, never applied.
 */
export class PlacementReplicator {
  private readonly peerSet = new Set<string>();
  // Peers whose full diff (sync step 2) this replica has applied: it has seen everything they had.
  private readonly synced = new Set<string>();
  private readonly syncListeners = new Set<(peer: string) => void>();
  // The latest generation each peer showed, within bounds (generation-bound.ts): the previous document is
  // released once none is behind.
  private readonly generations = new GenerationBound();
  private readonly peerStates = new Map<string, PeerState>();
  private readonly unreplicated = new UnreplicatedWrites(Date.now);
  private readonly random: () => number;
  private readonly clearTimer: (handle: unknown) => void;
  private readonly timer: unknown;
  private readonly log: PlacementLog;
  private readonly maxFrameBytes: number;
  private readonly relayFanout: number;
  private readonly unsubscribe: () => void;
  private readonly durable: PlacementDurability | undefined;
  private readonly inbox: FrameInbox;
  private readonly digests = new DigestRelay();
  // The peer whose update is being applied, so what it sent is not echoed back to it, and whether this replica held
  // structs waiting for a missing predecessor then (the sender's frame may let them in: the sender lacks those).
  private applying: { readonly from: string; readonly waited: boolean } | null = null;
  private closed = false;
  // What stats() counts, by direction: frames and bytes sent and failed sends; frames, bytes and rejections received.
  private readonly sent = { frames: 0, bytes: 0, failures: 0 };
  private readonly received = { frames: 0, bytes: 0, rejected: 0 };

  constructor(
    private readonly store: PlacementStore,
    private readonly link: PlacementLink,
    options: PlacementReplicatorOptions = {},
  ) {
    const { interval, maxFrameBytes, relayFanout, yieldAboveBytes } = checkSettings(options, link);
    this.relayFanout = relayFanout;
    this.inbox = new FrameInbox(yieldAboveBytes, options.defer);
    this.random = options.random ?? Math.random;
    this.log = options.log ?? silentLog;
    this.maxFrameBytes = maxFrameBytes;
    this.durable = store.durability;
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
    if (!this.peerStates.has(peer))
      this.peerStates.set(peer, {
        stateVector: undefined,
        framesRejected: 0,
        lastFrameRejected: false,
        lastSendFailed: false,
      });
    this.send(peer, { kind: 'step1', stateVector: this.store.encodeStateVector() });
  }

  removePeer(peer: string): void {
    this.peerSet.delete(peer);
    this.generations.forget(peer);
    this.digests.forget(peer);
    this.peerStates.delete(peer);
  }

  peers(): readonly string[] {
    return Object.freeze([...this.peerSet]);
  }

  /** One anti-entropy round: sync step 1 to one random peer. Runs on the timer; callable directly. */
  antiEntropy(): void {
    if (this.closed) return;
    this.releaseCaughtUpGeneration();
    this.pull(this.digests.tick(() => this.store.encodeStateVector()));
    if (this.peerSet.size === 0) return;
    const peers = [...this.peerSet];
    const pick = Math.min(peers.length - 1, Math.max(0, Math.floor(this.random() * peers.length)));
    this.send(peers[pick] as string, { kind: 'step1', stateVector: this.store.encodeStateVector() });
  }

  /** Handles one encoded frame from `peer`. Never throws: a bad frame is counted, logged and has no effect. */
  receive(peer: string, bytes: Uint8Array): void {
    if (this.closed) return;
    this.received.frames++;
    const size = bytes instanceof Uint8Array ? bytes.length : 0;
    this.received.bytes += size;
    this.inbox.add(size, () => this.handle(peer, () => decodeSyncFrame(bytes, this.maxFrameBytes)));
  }

  /** Handles one frame a frame link decoded. Never throws: a bad frame is counted, logged and has no effect. */
  receiveFrame(peer: string, frame: SyncFrame): void {
    if (this.closed) return;
    this.received.frames++;
    const size = frameSize(frame);
    this.received.bytes += size;
    this.inbox.add(size, () => this.handle(peer, () => checkFrame(frame, this.maxFrameBytes)));
  }

  private handle(peer: string, readFrame: () => SyncFrame): void {
    if (this.closed) return;
    try {
      assertPeer(peer);
      const frame = readFrame();
      if (frame.kind === 'update' && frame.digest !== undefined) return this.onDigest(peer, frame.digest);
      const claimed = generationOf(frame.kind === 'step1' ? frame.stateVector : frame.update);
      // An undecodable generation is rejected by the decoding below.
      const verdict =
        claimed === undefined
          ? 'accept'
          : this.generations.judge(peer, this.peerSet.has(peer), claimed, this.store.generation);
      if (frame.kind === 'step1') return this.answerStep1(peer, frame.stateVector, claimed ?? 0);
      if (verdict === 'defer') {
        // A member more than one generation ahead: ask again, each answer lets this replica accept one more.
        this.notePeer(peer, undefined);
        this.send(peer, { kind: 'step1', stateVector: this.store.encodeStateVector() });
        return;
      }
      const before = this.store.generation;
      this.applying = { from: peer, waited: this.store.awaitingMissing };
      try {
        this.store.applyUpdate(frame.update);
      } finally {
        this.applying = null;
      }
      const generation = claimed ?? 0;
      this.notePeer(peer, undefined);
      if (frame.kind === 'step2') {
        this.markSynced(peer);
        this.pull(this.digests.answered(peer, () => this.store.encodeStateVector()));
      } else if (generation > before || generation < this.store.generation) {
        // Generations differ: either a push moved this replica to a new one (the rest of that document
        // comes with a full sync), or the peer is behind (our state vector tells it so, and it answers
        // with its placements and its own).
        this.send(peer, { kind: 'step1', stateVector: this.store.encodeStateVector() });
      }
    } catch (error) {
      this.rejected(peer, error);
    }
  }

  /**
   * A digest showing versions this replica lacks (a later generation included) is answered by a pull (sync step 1)
   * from its sender; its empty update, there for peers that know no digests, is not applied. Only a current peer's
   * digest counts: a stranger claiming versions would otherwise hold the one pull at a time for itself.
   */
  private onDigest(peer: string, digest: Uint8Array): void {
    if (!this.peerSet.has(peer)) return;
    const stateVector = this.store.encodeStateVector();
    if (this.digests.shouldPull(peer, stateVector, digest)) this.send(peer, { kind: 'step1', stateVector });
    this.notePeer(peer, undefined);
  }

  /** Sync step 2 for a peer's step 1; and a step 1 back when the peer compacted. */
  private answerStep1(peer: string, stateVector: Uint8Array, generation: number): void {
    const answer = (): void => {
      if (!this.closed) this.send(peer, { kind: 'step2', update: this.store.encodeDiff(stateVector) });
    };
    // A durable replica answers only with committed state (see durable-store.ts).
    if (this.durable !== undefined) this.durable.whenIdle(answer);
    else answer();
    this.notePeer(peer, stateVector);
    // The peer compacted: ask it for its new document (this replica's placements went along, as a base).
    if (generation > this.store.generation)
      this.send(peer, { kind: 'step1', stateVector: this.store.encodeStateVector() });
  }

  private rejected(peer: string, error: unknown): void {
    this.received.rejected++;
    const state = this.peerStates.get(peer);
    if (state !== undefined) {
      state.framesRejected++;
      state.lastFrameRejected = true;
    }
    this.log({
      level: 'warn',
      message: `rejected placement sync frame from ${describe(peer)}: ${error instanceof Error ? error.message : String(error)}`,
      details: { peer, code: error instanceof PlacementStoreError ? error.code : undefined },
    });
  }

  /**
   * Whether this replica has applied a full sync step 2 from any peer since it started. A writer that
   * restarted with an empty document should not write before this (or before it knows it has no peers):
   * a write racing its own previous incarnation's value on the same slot is settled by Yjs client id,
   * not by HLC.
   */
  hasSynced(): boolean {
    return this.synced.size > 0;
  }

  /** Called once per peer, the first time its sync step 2 is applied. Returns an unsubscribe function. */
  onSynced(listener: (peer: string) => void): () => void {
    this.syncListeners.add(listener);
    return () => this.syncListeners.delete(listener);
  }

  /** Stops the timer and the pushes; later frames and peers are ignored. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.clearTimer(this.timer);
    this.inbox.clear();
    this.unsubscribe();
    this.peerSet.clear();
    this.syncListeners.clear();
  }

  stats(): PlacementReplicatorStats {
    const local = this.store.encodeStateVector();
    const peers = [...this.peerSet].map((peer): PlacementPeerStats => {
      const state = this.peerStates.get(peer);
      const vector = state?.stateVector;
      return {
        peer,
        synced: this.synced.has(peer),
        behind: vector !== undefined && lacksUpdatesOf(local, vector) === true,
        framesRejected: state?.framesRejected ?? 0,
        lastFrameRejected: state?.lastFrameRejected ?? false,
        lastSendFailed: state?.lastSendFailed ?? false,
      };
    });
    return {
      framesSent: this.sent.frames,
      framesReceived: this.received.frames,
      framesRejected: this.received.rejected,
      bytesSent: this.sent.bytes,
      bytesReceived: this.received.bytes,
      sendFailures: this.sent.failures,
      peersBehind: peers.filter((p) => p.behind).length,
      peers,
      oldestUnreplicatedMs: this.unreplicated.oldestAgeMs(
        [...this.peerSet].map((peer) => this.peerStates.get(peer)?.stateVector),
      ),
    };
  }

  /** Remembers a peer's accepted frame: its state vector when it sent one, and that it was not rejected. */
  private notePeer(peer: string, stateVector: Uint8Array | undefined): void {
    const state = this.peerStates.get(peer);
    if (state === undefined) return;
    state.lastFrameRejected = false;
    if (stateVector !== undefined) state.stateVector = stateVector;
  }

  private releaseCaughtUpGeneration(): void {
    const current = this.store.generation;
    for (const peer of this.peerSet) if (this.generations.of(peer) < current) return;
    this.store.releasePreviousGeneration();
  }

  private markSynced(peer: string): void {
    if (this.synced.has(peer)) return;
    this.synced.add(peer);
    for (const listener of [...this.syncListeners]) {
      try {
        listener(peer);
      } catch (error) {
        this.log({
          level: 'warn',
          message: `onSynced listener failed: ${error instanceof Error ? error.message : String(error)}`,
        });
      }
    }
  }

  private push(update: Uint8Array, origin: 'local' | 'remote'): void {
    if (this.closed || this.peerSet.size === 0) return;
    if (origin === 'local') this.unreplicated.note(this.store.encodeStateVector());
    const relay = origin === 'remote' ? this.applying : null;
    const durable = this.durable;
    if (durable === undefined) return this.pushNow(update, relay);
    // Own updates leave once committed; relayed ones are their writer's durable state. Neither, once
    // this replica's storage failed: it then sends nothing that might carry a rejected write.
    if (origin === 'local') durable.afterCommit(() => this.pushNow(update, null));
    else if (durable.storageFailure === undefined) this.pushNow(update, relay);
  }

  /**
   * An own update goes to every peer; a received one (`relay`) is relayed as a digest to `relayFanout` random peers
   * other than its sender (and to the sender when the update let waiting structs in), who pull what they lack.
   */
  private pushNow(update: Uint8Array, relay: { readonly from: string; readonly waited: boolean } | null): void {
    if (this.closed || this.peerSet.size === 0) return;
    let frame: SyncFrame = { kind: 'update', update };
    const targets = [...this.peerSet].filter((peer) => peer !== relay?.from);
    if (relay !== null) {
      if (this.relayFanout === 0) return;
      const digest = this.digests.digestOf(update, this.store.encodeStateVector());
      if (digest === undefined) return;
      frame = { kind: 'update', update: emptyUpdateFor(digest), digest };
      pickRandom(targets, this.relayFanout, this.random);
      if (relay.waited && this.peerSet.has(relay.from)) targets.push(relay.from);
    }
    // Encoded once for all peers of a byte link.
    const bytes = 'send' in this.link ? encodeSyncFrame(frame) : undefined;
    for (const peer of targets) this.deliver(peer, frame, bytes);
  }

  /** Asks `peer` (a digest showed it holds what this replica lacks) for what this replica lacks. */
  private pull(peer: string | undefined): void {
    if (peer !== undefined) this.send(peer, { kind: 'step1', stateVector: this.store.encodeStateVector() });
  }

  private send(peer: string, frame: SyncFrame): void {
    this.deliver(peer, frame, 'send' in this.link ? encodeSyncFrame(frame) : undefined);
  }

  /** Sends `frame` (already encoded as `bytes` for a byte link). */
  private deliver(peer: string, frame: SyncFrame, bytes: Uint8Array | undefined): void {
    try {
      if ('send' in this.link) this.link.send(peer, bytes ?? encodeSyncFrame(frame));
      else this.link.sendFrame(peer, frame);
      const state = this.peerStates.get(peer);
      if (state !== undefined) state.lastSendFailed = false;
      this.sent.frames++;
      this.sent.bytes += bytes?.length ?? frameSize(frame);
    } catch (error) {
      // A failing link must not break the store's update event; anti-entropy repairs the loss later.
      this.sent.failures++;
      const state = this.peerStates.get(peer);
      if (state !== undefined) state.lastSendFailed = true;
      this.log({
        level: 'warn',
        message: `placement sync send to ${describe(peer)} failed: ${error instanceof Error ? error.message : String(error)}`,
        details: { peer },
      });
    }
  }
}
