// The compacted part of a store: per entity type and shard, the one slot that won when a generation's
// document was folded away. Merging two bases keeps, per shard, the slot with the greater hlc, so bases
// form a join-semilattice: replicas may merge them in any order, any number of times, and agree.
import { compareSlots, type Slot } from './slots.js';

export class BaseState {
  private readonly types = new Map<string, Map<number, Slot>>();
  private size = 0;
  // Cached canonical encoding's digest; see wire.ts. Cleared on every change.
  private digestCache: Uint8Array | undefined;

  get(typeName: string, shardId: number): Slot | undefined {
    return this.types.get(typeName)?.get(shardId);
  }

  /** Keeps `slot` when it is greater than what the shard holds; returns whether it was kept. */
  merge(typeName: string, slot: Slot): boolean {
    let shards = this.types.get(typeName);
    const current = shards?.get(slot.shardId);
    if (current !== undefined && compareSlots(slot, current) <= 0) return false;
    if (shards === undefined) this.types.set(typeName, (shards = new Map()));
    if (current === undefined) this.size++;
    shards.set(slot.shardId, slot);
    this.digestCache = undefined;
    return true;
  }

  /** Number of shards over all types that hold a base slot. */
  get slotCount(): number {
    return this.size;
  }

  typeNames(): string[] {
    return [...this.types.keys()];
  }

  /** Entries of one type in ascending shard order: the canonical order every encoding uses. */
  slotsOf(typeName: string): Slot[] {
    const shards = this.types.get(typeName);
    if (shards === undefined) return [];
    return [...shards.values()].sort((a, b) => a.shardId - b.shardId);
  }

  cachedDigest(compute: () => Uint8Array): Uint8Array {
    this.digestCache ??= compute();
    return this.digestCache;
  }
}
