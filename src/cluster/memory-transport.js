// An in-process network of transports for fast, deterministic cluster tests, with seeded fault injection
// (drop, duplicate, delay, jitter, reorder) and partitions. Every message is encoded with msgpackr and, as over
// TCP, decoded within the wire budget and parsed by the receiving transport's registered families; the sender's
// own families check it at `send` too, so a message that could not cross a real socket fails loudly here.
// That encoding and check run once per message object (message-codec.ts: messages are immutable values), the
// decode at arrival once per delivery, so no two receivers ever share a decoded object.
import { ActorTsError } from '../errors.js';
import { describeValue } from '../logging.js';
import { decodeMessage, encodeCheckedMessage } from './message-codec.js';
import { seededRandom } from './random.js';
import { FamilyRegistry } from './wire-message.js';
export const DEFAULT_REORDER_WINDOW_MS = 5;
/**
 * An in-process network for tests and simulations: MemoryTransports attached to it exchange messages with seeded
 * delays and injectable faults (drops, partitions), reproducible by seed.
 */
export class MemoryNetwork {
    random;
    baseDelayMs;
    schedule;
    transports = new Map();
    /** Unordered pairs `a|b` (sorted) that cannot talk. */
    blockedPairs = new Set();
    isolated = new Set();
    /** Per (from, to) FIFO of in-flight messages, used while `reorder` is off. */
    pairQueues = new Map();
    faults = { dropRate: 0, duplicateRate: 0, delayMs: 0, jitterMs: 0, reorder: false };
    counters = { sent: 0, delivered: 0, dropped: 0, duplicated: 0, rejected: 0, unparsed: 0 };
    constructor(options = {}) {
        const delayMs = options.delayMs ?? 0;
        if (!isNonNegative(delayMs))
            throw argument(`delayMs must be a finite number >= 0, got ${String(delayMs)}`);
        const seed = options.seed ?? 1;
        if (!Number.isFinite(seed))
            throw argument(`seed must be a finite number, got ${String(seed)}`);
        this.random = seededRandom(seed);
        this.baseDelayMs = delayMs;
        this.schedule = options.schedule ?? ((fn, ms) => void setTimeout(fn, ms));
    }
    /**
     * Attaches a node to the network. An address can have one open transport at a time; after `close()` the
     * address may attach again (a restarted node). Messages still in flight reach whichever transport is
     * attached when they arrive.
     */
    transport(address) {
        const key = address.toString();
        if (this.transports.has(key))
            throw argument(`a transport for ${key} is already attached to this network`);
        const transport = new MemoryTransport(address, this);
        this.transports.set(key, transport);
        return transport;
    }
    setFaults(faults) {
        const next = {
            dropRate: faults.dropRate ?? 0,
            duplicateRate: faults.duplicateRate ?? 0,
            delayMs: faults.delayMs ?? 0,
            jitterMs: faults.jitterMs ?? 0,
            reorder: faults.reorder ?? false,
        };
        if (!isProbability(next.dropRate))
            throw argument(`dropRate must be in [0, 1], got ${String(next.dropRate)}`);
        if (!isProbability(next.duplicateRate)) {
            throw argument(`duplicateRate must be in [0, 1], got ${String(next.duplicateRate)}`);
        }
        if (!isNonNegative(next.delayMs))
            throw argument(`delayMs must be a finite number >= 0, got ${String(next.delayMs)}`);
        if (!isNonNegative(next.jitterMs)) {
            throw argument(`jitterMs must be a finite number >= 0, got ${String(next.jitterMs)}`);
        }
        if (typeof next.reorder !== 'boolean')
            throw argument('reorder must be a boolean');
        this.faults = next;
    }
    /** No message crosses between any node of `sideA` and any node of `sideB` (in flight ones included). */
    partition(sideA, sideB) {
        for (const a of sideA) {
            for (const b of sideB) {
                if (!a.equals(b))
                    this.blockedPairs.add(pairKey(a.toString(), b.toString()));
            }
        }
    }
    /** Cuts one node off from every other node, including nodes that attach later. */
    isolate(address) {
        this.isolated.add(address.toString());
    }
    /** Removes every partition and isolation; faults set by `setFaults` stay. */
    heal() {
        this.blockedPairs.clear();
        this.isolated.clear();
    }
    stats() {
        return { ...this.counters };
    }
    /** @internal called by MemoryTransport. */
    send(from, to, message, families) {
        let checked;
        try {
            checked = encodeCheckedMessage(message, families);
        }
        catch (error) {
            this.counters.rejected++;
            throw error;
        }
        if (!checked.ok) {
            this.counters.rejected++;
            throw new ActorTsError('malformed_message', `${describeValue(message, 120)} from ${from.toString()} does not pass the parse of a family registered on its transport after encoding`);
        }
        const bytes = checked.bytes;
        this.counters.sent++;
        const fromKey = from.toString();
        const toKey = to.toString();
        if (this.blocked(fromKey, toKey) || this.random() < this.faults.dropRate) {
            this.counters.dropped++;
            return;
        }
        const copies = this.random() < this.faults.duplicateRate ? 2 : 1;
        if (copies === 2)
            this.counters.duplicated++;
        for (let i = 0; i < copies; i++)
            this.dispatch(from, fromKey, toKey, bytes);
    }
    /** @internal called by MemoryTransport.close(). */
    detach(transport) {
        const key = transport.self.toString();
        if (this.transports.get(key) === transport)
            this.transports.delete(key);
    }
    dispatch(from, fromKey, toKey, bytes) {
        const { delayMs, jitterMs, reorder } = this.faults;
        const window = reorder && jitterMs === 0 ? DEFAULT_REORDER_WINDOW_MS : jitterMs;
        const delay = this.baseDelayMs + delayMs + (window > 0 ? this.random() * window : 0);
        const arrive = () => this.arrive(from, fromKey, toKey, bytes);
        if (reorder) {
            this.schedule(arrive, delay);
            return;
        }
        // Per-pair FIFO: a message that is ready waits for every earlier message of the same pair.
        const queueKey = `${fromKey}>${toKey}`;
        const queue = this.pairQueues.get(queueKey) ?? [];
        this.pairQueues.set(queueKey, queue);
        const entry = { ready: false, deliver: arrive };
        queue.push(entry);
        this.schedule(() => {
            entry.ready = true;
            this.drainPair(queueKey);
        }, delay);
    }
    drainPair(queueKey) {
        const queue = this.pairQueues.get(queueKey);
        if (!queue)
            return;
        let failure;
        while (queue.length > 0 && queue[0]?.ready === true) {
            const entry = queue.shift();
            try {
                entry?.deliver();
            }
            catch (error) {
                failure ??= { error };
            }
        }
        if (queue.length === 0)
            this.pairQueues.delete(queueKey);
        if (failure)
            throw failure.error;
    }
    arrive(from, fromKey, toKey, bytes) {
        const target = this.transports.get(toKey);
        if (!target || this.blocked(fromKey, toKey)) {
            this.counters.dropped++;
            return;
        }
        // Each delivery decodes afresh, so receivers never share (and cannot mutate) one another's copy.
        const message = decodeMessage(bytes, target.families);
        if (message === undefined) {
            this.counters.unparsed++;
            return;
        }
        this.counters.delivered++;
        target.deliver(from, message);
    }
    blocked(fromKey, toKey) {
        if (fromKey === toKey)
            return false;
        return this.isolated.has(fromKey) || this.isolated.has(toKey) || this.blockedPairs.has(pairKey(fromKey, toKey));
    }
}
/** One node's end of a MemoryNetwork. */
export class MemoryTransport {
    self;
    network;
    /** @internal read by MemoryNetwork to parse what arrives here. */
    families = new FamilyRegistry();
    listeners = new Set();
    closed = false;
    /** Reconnect requests by peer address: there is no connection to drop, so tests only see that they came. */
    reconnects = new Map();
    constructor(self, network) {
        this.self = self;
        this.network = network;
    }
    /**
     * Sends asynchronously. Throws `malformed_message` for a message that would not survive the wire: that
     * is a bug in the sender, and a test harness should fail loudly on it (on every send of it). A send after
     * `close()` is dropped. `message` must not change afterwards: its encoding is reused when it is sent again.
     */
    send(to, message) {
        if (this.closed)
            return;
        this.network.send(this.self, to, message, this.families);
    }
    register(family) {
        this.families.register(family);
    }
    onMessage(listener) {
        // Wrapped so the same function subscribed twice gets two independent subscriptions.
        const entry = (from, message) => listener(from, message);
        this.listeners.add(entry);
        return () => {
            this.listeners.delete(entry);
        };
    }
    /** Nothing to reconnect in memory: a cut ends when the test heals it. Counted for tests. */
    reconnect(peer) {
        if (this.closed)
            return;
        const key = peer.toString();
        this.reconnects.set(key, (this.reconnects.get(key) ?? 0) + 1);
    }
    close() {
        if (!this.closed) {
            this.closed = true;
            this.listeners.clear();
            this.network.detach(this);
        }
        return Promise.resolve();
    }
    /** @internal called by MemoryNetwork. Every listener runs even if one throws; the first error is rethrown. */
    deliver(from, message) {
        let failure;
        for (const listener of [...this.listeners]) {
            try {
                listener(from, message);
            }
            catch (error) {
                failure ??= { error };
            }
        }
        if (failure)
            throw failure.error;
    }
}
function pairKey(a, b) {
    return a < b ? `${a}|${b}` : `${b}|${a}`;
}
function isProbability(value) {
    return typeof value === 'number' && value >= 0 && value <= 1;
}
function isNonNegative(value) {
    return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}
function argument(message) {
    return new ActorTsError('invalid_argument', message);
}
//# sourceMappingURL=memory-transport.js.map