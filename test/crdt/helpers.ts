// Shared test fixtures for the placement store: replicas with injected clocks, a manual update network,
// an in-memory replicator link with faults (ReplicatorLinks), and a manual interval scheduler.
import * as Y from 'yjs';
import { PlacementReplicator, PlacementStore, type PlacementLogEvent } from '../../crdt/index.js';
import { decodeWireStateVector, decodeWireUpdate, encodeWireUpdate } from '../../crdt/wire.js';
import { pick, seededRandom, shuffled } from '../support/random.js';

export const TYPES = ['Counter', 'Cart'] as const;

/** Deterministic PRNG (the runtime's one, src/cluster/random.ts) so a fast-check seed fully determines a run. */
export const prng: (seed: number) => () => number = seededRandom;

export { pick };

export const shuffle: <T>(random: () => number, items: readonly T[]) => T[] = shuffled;

/** A plain, comparable view of every type's visible placements. */
export function view(store: PlacementStore): Record<string, Record<number, string>> {
  const out: Record<string, Record<number, string>> = {};
  for (const typeName of store.typeNames()) {
    const shards: Record<number, string> = {};
    for (const [shardId, p] of store.snapshot(typeName).placements) {
      shards[shardId] = `${p.target}|${p.hlc.wallMs}.${p.hlc.counter}.${p.hlc.node}|${p.writer}`;
    }
    if (Object.keys(shards).length > 0) out[typeName] = shards;
  }
  return out;
}

export function stateVectorOf(store: PlacementStore): Map<number, number> {
  return Y.decodeStateVector(decodeWireStateVector(store.encodeStateVector()).doc);
}

/**
 * Replicas whose only channel is this network: every local update goes into a shared pool, and the test
 * decides which replica gets which pooled update when (any order, duplicates, drops).
 */
export class UpdatePool {
  readonly updates: Uint8Array[] = [];
  readonly delivered: Array<Set<number>>;

  constructor(readonly stores: readonly PlacementStore[]) {
    this.delivered = stores.map(() => new Set<number>());
    stores.forEach((store, i) => {
      store.onUpdate((update, origin) => {
        if (origin !== 'local') return;
        this.delivered[i]?.add(this.updates.length);
        this.updates.push(update);
      });
    });
  }

  deliver(replica: number, update: number): void {
    const bytes = this.updates[update];
    const store = this.stores[replica];
    if (bytes === undefined || store === undefined) throw new Error('no such update or replica');
    this.delivered[replica]?.add(update);
    store.applyUpdate(bytes);
  }

  /** Delivers a few random pooled updates (possibly duplicates, possibly out of order). */
  deliverSome(random: () => number, count: number): void {
    for (let i = 0; i < count && this.updates.length > 0; i++) {
      this.deliver(Math.floor(random() * this.stores.length), Math.floor(random() * this.updates.length));
    }
  }

  /** Until nothing new is produced: every replica gets every update, shuffled, with some duplicates. */
  deliverAll(random: () => number): void {
    for (let round = 0; round < 100; round++) {
      let moved = false;
      this.stores.forEach((_, replica) => {
        const missing = this.updates.map((_, i) => i).filter((i) => !this.delivered[replica]?.has(i));
        const duplicates = this.updates.length > 0 ? [Math.floor(random() * this.updates.length)] : [];
        for (const u of shuffle(random, [...missing, ...duplicates])) this.deliver(replica, u);
        if (missing.length > 0) moved = true;
      });
      if (!moved) return;
    }
    throw new Error('update pool did not quiesce');
  }
}

/** setInterval/clearInterval stand-ins: fire() runs every live callback once, in registration order. */
export class ManualTimers {
  private readonly live = new Map<number, () => void>();
  private next = 1;
  readonly setInterval = (callback: () => void): unknown => {
    const id = this.next++;
    this.live.set(id, callback);
    return id;
  };
  readonly clearInterval = (handle: unknown): void => {
    this.live.delete(handle as number);
  };
  get count(): number {
    return this.live.size;
  }
  fire(): void {
    for (const callback of [...this.live.values()]) callback();
  }
}

interface InFlight {
  readonly from: string;
  readonly to: string;
  readonly bytes: Uint8Array;
}

/**
 * An in-memory link between named replicators, with partitions, random drops and duplicates; delivery is
 * explicit (`flush`). Not the cluster's MemoryNetwork (src/cluster/transport/memory-transport.ts): replicators speak
 * raw frames to peer names, with no addresses, message families or encoding, and the store tests stay free
 * of cluster concepts; the fault knobs carry the same names and meaning as its NetworkFaults.
 */
export class ReplicatorLinks {
  readonly queue: InFlight[] = [];
  readonly replicators = new Map<string, PlacementReplicator>();
  /** Group per node; messages between different groups are dropped. */
  partition = new Map<string, number>();
  dropRate = 0;
  duplicateRate = 0;
  delivered = 0;

  constructor(private readonly random: () => number) {}

  linkFor(from: string): { send(peer: string, bytes: Uint8Array): void } {
    return { send: (to, bytes) => this.queue.push({ from, to, bytes }) };
  }

  /** Delivers queued frames in random order until none are left (or `limit` frames were handled). */
  flush(limit = 100_000): void {
    for (let n = 0; n < limit && this.queue.length > 0; n++) {
      const index = Math.floor(this.random() * this.queue.length);
      const [message] = this.queue.splice(index, 1);
      if (message === undefined) break;
      if ((this.partition.get(message.from) ?? 0) !== (this.partition.get(message.to) ?? 0)) continue;
      if (this.random() < this.dropRate) continue;
      if (this.random() < this.duplicateRate) this.queue.push(message);
      this.delivered++;
      this.replicators.get(message.to)?.receive(message.from, message.bytes);
    }
  }
}

/** The name the crdt tests knew ReplicatorLinks by; it is not src/cluster/transport/memory-transport.ts's MemoryNetwork. */
export { ReplicatorLinks as MemoryNetwork };

/** A log sink that records events for assertions. */
export function recordingLog(): { events: PlacementLogEvent[]; log: (event: PlacementLogEvent) => void } {
  const events: PlacementLogEvent[] = [];
  return { events, log: (event) => events.push(event) };
}

/** Raw Yjs V2 bytes in the store's envelope, as a generation-0 document update without a base. */
export function asWireUpdate(yjsUpdate: Uint8Array, generation = 0): Uint8Array {
  return encodeWireUpdate(generation, undefined, yjsUpdate);
}

/** The Yjs part of a store update (or diff). */
export function documentOf(update: Uint8Array): Uint8Array {
  const doc = decodeWireUpdate(update, Number.MAX_SAFE_INTEGER).doc;
  if (doc === undefined) throw new Error('update has no document part');
  return doc;
}
