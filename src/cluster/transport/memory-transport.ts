// An in-process network of transports for fast, deterministic cluster tests, with seeded fault injection
// (drop, duplicate, delay, jitter, reorder) and partitions. Every message is encoded with msgpackr and, as over
// TCP, decoded within the wire budget and parsed by the receiving transport's registered families; the sender's
// own families check it at `send` too, so a message that could not cross a real socket fails loudly here.
// That encoding and check run once per message object (message-codec.ts: messages are immutable values), the
// decode at arrival once per delivery, so no two receivers ever share a decoded object.
import { ConnectionLostListeners } from './connection-lost.js';
import { ActorTsError } from '../../errors.js';
import { describeValue } from '../../logging.js';
import type { NodeAddress } from '../address.js';
import { decodeMessage, encodeCheckedMessage, type CheckedEncoding } from './message-codec.js';
import { seededRandom } from '../random.js';
import type { MessageListener, ProbeResult, Transport } from './transport.js';
import { FamilyRegistry, type MessageFamily, type WireMessage } from './wire-message.js';

export type ScheduleFn = (fn: () => void, delayMs: number) => void;

/** Options of a MemoryNetwork: its seeded randomness, delays and faults. */
export interface MemoryNetworkOptions {
  /** Seed of the PRNG behind every fault decision; default 1. Same seed, same faults. */
  readonly seed?: number;
  /** Base latency of every message in ms; default 0 (still asynchronous: never delivered inside `send`). */
  readonly delayMs?: number;
  /** How deliveries are scheduled; default `setTimeout`, so `vi.useFakeTimers()` controls the network. */
  readonly schedule?: ScheduleFn;
  /**
   * When a transport closes, tell every other attached transport it can reach that its connection with it ended
   * (`Transport.onConnectionLost`), as the kernel does for a process that exits; default false (only silence).
   */
  readonly signalConnectionLoss?: boolean;
}

/** Faults applied to every message sent after `setFaults`; each call replaces the previous set. */
export interface NetworkFaults {
  /** Probability in [0, 1] that a message is lost; default 0. */
  readonly dropRate?: number;
  /** Probability in [0, 1] that a delivered message arrives twice; default 0. */
  readonly duplicateRate?: number;
  /** Extra latency in ms on top of the network's base delay; default 0. */
  readonly delayMs?: number;
  /** Extra random latency, uniform in [0, jitterMs); default 0. Without `reorder`, pairs stay FIFO. */
  readonly jitterMs?: number;
  /**
   * Lifts per-pair FIFO order (which TCP would give): later messages may overtake earlier ones. When no
   * jitter is set, a reorder window of `DEFAULT_REORDER_WINDOW_MS` is used so reordering actually happens.
   */
  readonly reorder?: boolean;
}

export interface MemoryNetworkStats {
  /** Messages accepted by `send` (an invalid message is not counted here but under `rejected`). */
  readonly sent: number;
  /** Messages handed to a receiving transport's listeners, duplicates included. */
  readonly delivered: number;
  /** Messages lost: by the drop rate, a partition, or a destination that does not exist or was closed. */
  readonly dropped: number;
  /** Extra copies created by the duplicate rate. */
  readonly duplicated: number;
  /** Messages refused by `send` because they did not survive encode -> the sender's registered parse. */
  readonly rejected: number;
  /** Messages a receiver dropped because none of the families it registered accepted them (as TCP drops them). */
  readonly unparsed: number;
}

export const DEFAULT_REORDER_WINDOW_MS = 5;

interface InFlight {
  ready: boolean;
  readonly deliver: () => void;
}

interface Counters {
  sent: number;
  delivered: number;
  dropped: number;
  duplicated: number;
  rejected: number;
  unparsed: number;
}

/**
 * An in-process network for tests and simulations: MemoryTransports attached to it exchange messages with seeded
 * delays and injectable faults (drops, partitions), reproducible by seed.
 */
export class MemoryNetwork {
  private readonly random: () => number;
  private readonly baseDelayMs: number;
  private readonly schedule: ScheduleFn;
  private readonly signalConnectionLoss: boolean;
  private readonly transports = new Map<string, MemoryTransport>();
  /** Unordered pairs `a|b` (sorted) that cannot talk. */
  private readonly blockedPairs = new Set<string>();
  private readonly isolated = new Set<string>();
  /** Per (from, to) FIFO of in-flight messages, used while `reorder` is off. */
  private readonly pairQueues = new Map<string, InFlight[]>();
  private faults: Required<NetworkFaults> = { dropRate: 0, duplicateRate: 0, delayMs: 0, jitterMs: 0, reorder: false };
  private readonly counters: Counters = { sent: 0, delivered: 0, dropped: 0, duplicated: 0, rejected: 0, unparsed: 0 };

  constructor(options: MemoryNetworkOptions = {}) {
    const delayMs = options.delayMs ?? 0;
    if (!isNonNegative(delayMs)) throw argument(`delayMs must be a finite number >= 0, got ${String(delayMs)}`);
    const seed = options.seed ?? 1;
    if (!Number.isFinite(seed)) throw argument(`seed must be a finite number, got ${String(seed)}`);
    this.random = seededRandom(seed);
    this.baseDelayMs = delayMs;
    this.schedule = options.schedule ?? ((fn, ms) => void setTimeout(fn, ms));
    this.signalConnectionLoss = options.signalConnectionLoss ?? false;
  }

  /**
   * Attaches a node to the network. An address can have one open transport at a time; after `close()` the
   * address may attach again (a restarted node). Messages still in flight reach whichever transport is
   * attached when they arrive.
   */
  transport(address: NodeAddress): MemoryTransport {
    const key = address.toString();
    if (this.transports.has(key)) throw argument(`a transport for ${key} is already attached to this network`);
    const transport = new MemoryTransport(address, this);
    this.transports.set(key, transport);
    return transport;
  }

  setFaults(faults: NetworkFaults): void {
    const next = {
      dropRate: faults.dropRate ?? 0,
      duplicateRate: faults.duplicateRate ?? 0,
      delayMs: faults.delayMs ?? 0,
      jitterMs: faults.jitterMs ?? 0,
      reorder: faults.reorder ?? false,
    };
    if (!isProbability(next.dropRate)) throw argument(`dropRate must be in [0, 1], got ${String(next.dropRate)}`);
    if (!isProbability(next.duplicateRate)) {
      throw argument(`duplicateRate must be in [0, 1], got ${String(next.duplicateRate)}`);
    }
    if (!isNonNegative(next.delayMs))
      throw argument(`delayMs must be a finite number >= 0, got ${String(next.delayMs)}`);
    if (!isNonNegative(next.jitterMs)) {
      throw argument(`jitterMs must be a finite number >= 0, got ${String(next.jitterMs)}`);
    }
    if (typeof next.reorder !== 'boolean') throw argument('reorder must be a boolean');
    this.faults = next;
  }

  /** No message crosses between any node of `sideA` and any node of `sideB` (in flight ones included). */
  partition(sideA: ReadonlyArray<NodeAddress>, sideB: ReadonlyArray<NodeAddress>): void {
    for (const a of sideA) {
      for (const b of sideB) {
        if (!a.equals(b)) this.blockedPairs.add(pairKey(a.toString(), b.toString()));
      }
    }
  }

  /** Cuts one node off from every other node, including nodes that attach later. */
  isolate(address: NodeAddress): void {
    this.isolated.add(address.toString());
  }

  /** Removes every partition and isolation; faults set by `setFaults` stay. */
  heal(): void {
    this.blockedPairs.clear();
    this.isolated.clear();
  }

  stats(): MemoryNetworkStats {
    return { ...this.counters };
  }

  /** @internal called by MemoryTransport. */
  send(from: NodeAddress, to: NodeAddress, message: WireMessage, families: FamilyRegistry): void {
    let checked: CheckedEncoding;
    try {
      checked = encodeCheckedMessage(message, families);
    } catch (error) {
      this.counters.rejected++;
      throw error;
    }
    if (!checked.ok) {
      this.counters.rejected++;
      throw new ActorTsError(
        'malformed_message',
        `${describeValue(message, 120)} from ${from.toString()} does not pass the parse of a family registered on its transport after encoding`,
      );
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
    if (copies === 2) this.counters.duplicated++;
    for (let i = 0; i < copies; i++) this.dispatch(from, fromKey, toKey, bytes);
  }

  /**
   * @internal called by MemoryTransport.probe(): `refused` when no transport is attached at `to` (a crashed or
   * stopped node), `unknown` when the pair is cut (a partition drops, it does not refuse), else `accepting`.
   */
  probe(fromKey: string, toKey: string): ProbeResult {
    if (this.blocked(fromKey, toKey)) return 'unknown';
    return this.transports.has(toKey) ? 'accepting' : 'refused';
  }

  /** @internal called by MemoryTransport.close(). */
  detach(transport: MemoryTransport): void {
    const key = transport.self.toString();
    if (this.transports.get(key) !== transport) return;
    this.transports.delete(key);
    if (!this.signalConnectionLoss) return;
    // Only peers it can reach: a cut link carries no close either.
    for (const [peerKey, peer] of this.transports) {
      if (this.blocked(key, peerKey)) continue;
      this.schedule(() => peer.connectionLost(transport.self), this.baseDelayMs);
    }
  }

  private dispatch(from: NodeAddress, fromKey: string, toKey: string, bytes: Uint8Array): void {
    const { delayMs, jitterMs, reorder } = this.faults;
    const window = reorder && jitterMs === 0 ? DEFAULT_REORDER_WINDOW_MS : jitterMs;
    const delay = this.baseDelayMs + delayMs + (window > 0 ? this.random() * window : 0);
    const arrive = (): void => this.arrive(from, fromKey, toKey, bytes);
    if (reorder) {
      this.schedule(arrive, delay);
      return;
    }
    // Per-pair FIFO: a message that is ready waits for every earlier message of the same pair.
    const queueKey = `${fromKey}>${toKey}`;
    const queue = this.pairQueues.get(queueKey) ?? [];
    this.pairQueues.set(queueKey, queue);
    const entry: InFlight = { ready: false, deliver: arrive };
    queue.push(entry);
    this.schedule(() => {
      entry.ready = true;
      this.drainPair(queueKey);
    }, delay);
  }

  private drainPair(queueKey: string): void {
    const queue = this.pairQueues.get(queueKey);
    if (!queue) return;
    let failure: { readonly error: unknown } | undefined;
    while (queue.length > 0 && queue[0]?.ready === true) {
      const entry = queue.shift();
      try {
        entry?.deliver();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (queue.length === 0) this.pairQueues.delete(queueKey);
    if (failure) throw failure.error;
  }

  private arrive(from: NodeAddress, fromKey: string, toKey: string, bytes: Uint8Array): void {
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

  private blocked(fromKey: string, toKey: string): boolean {
    if (fromKey === toKey) return false;
    return this.isolated.has(fromKey) || this.isolated.has(toKey) || this.blockedPairs.has(pairKey(fromKey, toKey));
  }
}

/** One node's end of a MemoryNetwork. */
export class MemoryTransport implements Transport {
  /** @internal read by MemoryNetwork to parse what arrives here. */
  readonly families = new FamilyRegistry();
  private readonly listeners = new Set<MessageListener>();
  /** A listener's error is rethrown once every listener ran, as `deliver` does. */
  private readonly lost = new ConnectionLostListeners((error) => {
    this.lostFailure ??= { error };
  });
  private lostFailure: { readonly error: unknown } | undefined;
  private closed = false;
  /** Reconnect requests by peer address: there is no connection to drop, so tests only see that they came. */
  readonly reconnects = new Map<string, number>();
  /** Probes made, for tests. */
  probes = 0;

  constructor(
    readonly self: NodeAddress,
    private readonly network: MemoryNetwork,
  ) {}

  /**
   * Sends asynchronously. Throws `malformed_message` for a message that would not survive the wire: that
   * is a bug in the sender, and a test harness should fail loudly on it (on every send of it). A send after
   * `close()` is dropped. `message` must not change afterwards: its encoding is reused when it is sent again.
   */
  send<M extends WireMessage>(to: NodeAddress, message: M): void {
    if (this.closed) return;
    this.network.send(this.self, to, message, this.families);
  }

  register<M extends WireMessage>(family: MessageFamily<M>): void {
    this.families.register(family);
  }

  onMessage(listener: MessageListener): () => void {
    // Wrapped so the same function subscribed twice gets two independent subscriptions.
    const entry: MessageListener = (from, message) => listener(from, message);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  /** See `Transport.onConnectionLost`: only on a network made with `signalConnectionLoss`. */
  onConnectionLost(listener: (peer: NodeAddress) => void): () => void {
    return this.lost.add(listener);
  }

  /** @internal called by MemoryNetwork when a transport it can reach closed. A listener's error is rethrown. */
  connectionLost(peer: NodeAddress): void {
    if (this.closed) return;
    this.lostFailure = undefined;
    this.lost.emit(peer);
    const failure = this.lostFailure as { readonly error: unknown } | undefined;
    if (failure) throw failure.error;
  }

  /** Nothing to reconnect in memory: a cut ends when the test heals it. Counted for tests. */
  reconnect(peer: NodeAddress): void {
    if (this.closed) return;
    const key = peer.toString();
    this.reconnects.set(key, (this.reconnects.get(key) ?? 0) + 1);
  }

  /** Asynchronously, as a dial would answer. Counted for tests. */
  probe(peer: NodeAddress): Promise<ProbeResult> {
    this.probes++;
    const result = this.closed ? 'unknown' : this.network.probe(this.self.toString(), peer.toString());
    return new Promise((resolve) => queueMicrotask(() => resolve(result)));
  }

  close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.listeners.clear();
      this.lost.clear();
      this.network.detach(this);
    }
    return Promise.resolve();
  }

  /** @internal called by MemoryNetwork. Every listener runs even if one throws; the first error is rethrown. */
  deliver(from: NodeAddress, message: WireMessage): void {
    let failure: { readonly error: unknown } | undefined;
    for (const listener of [...this.listeners]) {
      try {
        listener(from, message);
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }
}

function pairKey(a: string, b: string): string {
  return a < b ? `${a}|${b}` : `${b}|${a}`;
}

function isProbability(value: number): boolean {
  return typeof value === 'number' && value >= 0 && value <= 1;
}

function isNonNegative(value: number): boolean {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

function argument(message: string): ActorTsError {
  return new ActorTsError('invalid_argument', message);
}
