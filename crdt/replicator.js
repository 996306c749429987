// Keeps a PlacementStore in sync with peers over a minimal link: sync step 1 -> step 2 when a peer is added
// and on every anti-entropy tick with one random peer (repairs anything a push lost), plus an immediate
// push of every new store update to every peer. Bad frames are counted and logged, never thrown.
// Peers on different generations (a replica compacted, see PlacementStore.compact) find each other here:
// the one behind is sent the newer, small document, and its own placements travel back folded into a base.
import { PlacementStoreError, describe } from './errors.js';
import { silentLog } from './log.js';
import { DEFAULT_MAX_FRAME_BYTES, decodeSyncFrame, encodeSyncFrame } from './sync-frame.js';
import { generationOf, lacksUpdatesOf } from './wire.js';
import { assertPeer, checkFrame, defaultSetInterval, frameSize } from './replicator-checks.js';
/** Default anti-entropy period (1 s): how often a replicator syncs with one random peer to repair lost pushes. */
export const DEFAULT_ANTI_ENTROPY_INTERVAL_MS = 1000;
/** Default number of random peers a receiver relays a new update to, so a lost push is repaired within a hop. */
export const DEFAULT_RELAY_FANOUT = 3;
/**
 * Replicates one PlacementStore to its peers over a link you provide: y-protocols sync (step 1 / step 2) when a peer
 * is added and by anti-entropy, every local update pushed to all peers and relayed onward. Bad frames are rejected
 * and counted, never applied.
 */
export class PlacementReplicator {
    store;
    link;
    peerSet = new Set();
    // Peers whose full diff (sync step 2) this replica has applied: it has seen everything they had.
    synced = new Set();
    syncListeners = new Set();
    // The latest generation each peer showed: the previous document is released once none is behind.
    peerGenerations = new Map();
    peerStates = new Map();
    random;
    clearTimer;
    timer;
    log;
    maxFrameBytes;
    relayFanout;
    unsubscribe;
    durable;
    // The peer whose update is being applied, so its own update is not echoed back to it.
    applyingFrom = null;
    closed = false;
    framesSent = 0;
    framesReceived = 0;
    framesRejected = 0;
    bytesSent = 0;
    bytesReceived = 0;
    sendFailures = 0;
    constructor(store, link, options = {}) {
        this.store = store;
        this.link = link;
        const interval = options.antiEntropyIntervalMs ?? DEFAULT_ANTI_ENTROPY_INTERVAL_MS;
        if (!Number.isFinite(interval) || interval <= 0) {
            throw new PlacementStoreError('invalid_option', `antiEntropyIntervalMs must be a positive number, got ${describe(interval)}`);
        }
        const maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
        if (!Number.isSafeInteger(maxFrameBytes) || maxFrameBytes <= 0) {
            throw new PlacementStoreError('invalid_option', `maxFrameBytes must be a positive integer, got ${describe(maxFrameBytes)}`);
        }
        if (typeof link !== 'object' || link === null || (!('send' in link && typeof link.send === 'function') && !('sendFrame' in link && typeof link.sendFrame === 'function'))) {
            throw new PlacementStoreError('invalid_option', 'link must have a send(peer, bytes) or a sendFrame(peer, frame) function');
        }
        const relayFanout = options.relayFanout ?? DEFAULT_RELAY_FANOUT;
        if (relayFanout !== Infinity && (!Number.isSafeInteger(relayFanout) || relayFanout < 0)) {
            throw new PlacementStoreError('invalid_option', `relayFanout must be a non-negative integer or Infinity, got ${describe(relayFanout)}`);
        }
        this.relayFanout = relayFanout;
        this.random = options.random ?? Math.random;
        this.log = options.log ?? silentLog;
        this.maxFrameBytes = maxFrameBytes;
        this.durable = store.durability;
        this.unsubscribe = store.onUpdate((update, origin) => this.push(update, origin));
        const startTimer = options.setInterval ?? defaultSetInterval;
        this.clearTimer = options.clearInterval ?? ((handle) => clearInterval(handle));
        this.timer = startTimer(() => this.antiEntropy(), interval);
    }
    /** Starts replicating with `peer`: asks it for what this store lacks (sync step 1). */
    addPeer(peer) {
        if (this.closed)
            return;
        assertPeer(peer);
        this.peerSet.add(peer);
        if (!this.peerStates.has(peer))
            this.peerStates.set(peer, { stateVector: undefined, framesRejected: 0, lastFrameRejected: false, lastSendFailed: false });
        this.send(peer, { kind: 'step1', stateVector: this.store.encodeStateVector() });
    }
    removePeer(peer) {
        this.peerSet.delete(peer);
        this.peerGenerations.delete(peer);
        this.peerStates.delete(peer);
    }
    peers() {
        return Object.freeze([...this.peerSet]);
    }
    /** One anti-entropy round: sync step 1 to one random peer. Runs on the timer; callable directly. */
    antiEntropy() {
        if (this.closed)
            return;
        this.releaseCaughtUpGeneration();
        if (this.peerSet.size === 0)
            return;
        const peers = [...this.peerSet];
        const pick = Math.min(peers.length - 1, Math.max(0, Math.floor(this.random() * peers.length)));
        this.send(peers[pick], { kind: 'step1', stateVector: this.store.encodeStateVector() });
    }
    /** Handles one encoded frame from `peer`. Never throws: a bad frame is counted, logged and has no effect. */
    receive(peer, bytes) {
        if (this.closed)
            return;
        this.framesReceived++;
        this.bytesReceived += bytes instanceof Uint8Array ? bytes.length : 0;
        this.handle(peer, () => decodeSyncFrame(bytes, this.maxFrameBytes));
    }
    /** Handles one frame a frame link decoded. Never throws: a bad frame is counted, logged and has no effect. */
    receiveFrame(peer, frame) {
        if (this.closed)
            return;
        this.framesReceived++;
        this.bytesReceived += frameSize(frame);
        this.handle(peer, () => checkFrame(frame, this.maxFrameBytes));
    }
    handle(peer, readFrame) {
        try {
            assertPeer(peer);
            const frame = readFrame();
            if (frame.kind === 'step1') {
                const stateVector = frame.stateVector;
                const answer = () => {
                    if (!this.closed)
                        this.send(peer, { kind: 'step2', update: this.store.encodeDiff(stateVector) });
                };
                // A durable replica answers only with committed state (see durable-store.ts).
                if (this.durable !== undefined)
                    this.durable.whenIdle(answer);
                else
                    answer();
                this.notePeer(peer, frame.stateVector);
                const generation = this.notePeerGeneration(peer, frame.stateVector);
                // The peer compacted: ask it for its new document (this replica's placements went along, as a base).
                if (generation > this.store.generation)
                    this.send(peer, { kind: 'step1', stateVector: this.store.encodeStateVector() });
                return;
            }
            const before = this.store.generation;
            this.applyingFrom = peer;
            try {
                this.store.applyUpdate(frame.update);
            }
            finally {
                this.applyingFrom = null;
            }
            const generation = this.notePeerGeneration(peer, frame.update);
            this.notePeer(peer, undefined);
            if (frame.kind === 'step2')
                this.markSynced(peer);
            else if (generation > before || generation < this.store.generation) {
                // Generations differ: either a push moved this replica to a new one (the rest of that document
                // comes with a full sync), or the peer is behind (our state vector tells it so, and it answers
                // with its placements and its own).
                this.send(peer, { kind: 'step1', stateVector: this.store.encodeStateVector() });
            }
        }
        catch (error) {
            this.framesRejected++;
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
    }
    /**
     * Whether this replica has applied a full sync step 2 from any peer since it started. A writer that
     * restarted with an empty document should not write before this (or before it knows it has no peers):
     * a write racing its own previous incarnation's value on the same slot is settled by Yjs client id,
     * not by HLC.
     */
    hasSynced() {
        return this.synced.size > 0;
    }
    /** Called once per peer, the first time its sync step 2 is applied. Returns an unsubscribe function. */
    onSynced(listener) {
        this.syncListeners.add(listener);
        return () => this.syncListeners.delete(listener);
    }
    /** Stops the timer and the pushes; later frames and peers are ignored. Idempotent. */
    close() {
        if (this.closed)
            return;
        this.closed = true;
        this.clearTimer(this.timer);
        this.unsubscribe();
        this.peerSet.clear();
        this.syncListeners.clear();
    }
    stats() {
        const local = this.store.encodeStateVector();
        const peers = [...this.peerSet].map((peer) => {
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
            framesSent: this.framesSent,
            framesReceived: this.framesReceived,
            framesRejected: this.framesRejected,
            bytesSent: this.bytesSent,
            bytesReceived: this.bytesReceived,
            sendFailures: this.sendFailures,
            peersBehind: peers.filter((p) => p.behind).length,
            peers,
        };
    }
    /** Remembers a peer's accepted frame: its state vector when it sent one, and that it was not rejected. */
    notePeer(peer, stateVector) {
        const state = this.peerStates.get(peer);
        if (state === undefined)
            return;
        state.lastFrameRejected = false;
        if (stateVector !== undefined)
            state.stateVector = stateVector;
    }
    notePeerGeneration(peer, bytes) {
        const generation = generationOf(bytes) ?? 0;
        if (this.peerSet.has(peer))
            this.peerGenerations.set(peer, Math.max(generation, this.peerGenerations.get(peer) ?? 0));
        return generation;
    }
    releaseCaughtUpGeneration() {
        const current = this.store.generation;
        for (const peer of this.peerSet)
            if ((this.peerGenerations.get(peer) ?? 0) < current)
                return;
        this.store.releasePreviousGeneration();
    }
    markSynced(peer) {
        if (this.synced.has(peer))
            return;
        this.synced.add(peer);
        for (const listener of [...this.syncListeners]) {
            try {
                listener(peer);
            }
            catch (error) {
                this.log({ level: 'warn', message: `onSynced listener failed: ${error instanceof Error ? error.message : String(error)}` });
            }
        }
    }
    push(update, origin) {
        if (this.closed || this.peerSet.size === 0)
            return;
        const sender = origin === 'remote' ? this.applyingFrom : null;
        const durable = this.durable;
        if (durable === undefined)
            return this.pushNow(update, sender);
        // Own updates leave once committed; relayed ones are their writer's durable state. Neither, once
        // this replica's storage failed: it then sends nothing that might carry a rejected write.
        if (origin === 'local')
            durable.afterCommit(() => this.pushNow(update, null));
        else if (durable.storageFailure === undefined)
            this.pushNow(update, sender);
    }
    pushNow(update, sender) {
        if (this.closed || this.peerSet.size === 0)
            return;
        const frame = { kind: 'update', update };
        // Encoded once for all peers of a byte link.
        const bytes = 'send' in this.link ? encodeSyncFrame(frame) : undefined;
        const targets = [...this.peerSet].filter((peer) => peer !== sender);
        if (sender !== null)
            this.pickRandom(targets, this.relayFanout);
        for (const peer of targets)
            this.deliver(peer, frame, bytes);
    }
    /** Keeps `count` random elements of `items` in place (a partial Fisher-Yates shuffle). */
    pickRandom(items, count) {
        if (items.length <= count)
            return;
        for (let i = 0; i < count; i++) {
            const j = i + Math.min(items.length - i - 1, Math.floor(this.random() * (items.length - i)));
            [items[i], items[j]] = [items[j], items[i]];
        }
        items.length = count;
    }
    send(peer, frame) {
        this.deliver(peer, frame, 'send' in this.link ? encodeSyncFrame(frame) : undefined);
    }
    /** Sends `frame` (already encoded as `bytes` for a byte link). */
    deliver(peer, frame, bytes) {
        try {
            if ('send' in this.link)
                this.link.send(peer, bytes ?? encodeSyncFrame(frame));
            else
                this.link.sendFrame(peer, frame);
            const state = this.peerStates.get(peer);
            if (state !== undefined)
                state.lastSendFailed = false;
            this.framesSent++;
            this.bytesSent += bytes?.length ?? frameSize(frame);
        }
        catch (error) {
            // A failing link must not break the store's update event; anti-entropy repairs the loss later.
            this.sendFailures++;
            const state = this.peerStates.get(peer);
            if (state !== undefined)
                state.lastSendFailed = true;
            this.log({
                level: 'warn',
                message: `placement sync send to ${describe(peer)} failed: ${error instanceof Error ? error.message : String(error)}`,
                details: { peer },
            });
        }
    }
}
//# sourceMappingURL=replicator.js.map