// Incremental read model of one entity type: per shard the writers' slots and the visible winner (the
// slot with the greatest hlc, hidden when it is a tombstone). Refreshing touches only the changed shards;
// while nothing visible changes, snapshot() keeps returning the very same object.
import { compareHlc, type Hlc } from './hlc.js';
import { IntMap } from './int-map.js';
import { sameMeta, type SlotMeta } from './slot-meta.js';
import { compareSlots, type Slot } from './slots.js';

/**
 * The winning placement of one shard: its target, the HLC it was written at, its writer, and what it stored with it.
 */
export interface Placement {
  readonly target: string;
  readonly hlc: Hlc;
  readonly writer: string;
  /** What the writer stored with the target (slot-meta.ts); absent when it stored nothing. */
  readonly meta?: SlotMeta;
}

/**
 * What a store shows for one entity type at one moment: the winning placement per shard. Immutable, and the same
 * object while nothing visible changes, so readers can cache by identity or `version`.
 */
export interface PlacementSnapshot {
  readonly version: number;
  readonly placements: ReadonlyMap<number, Placement>;
}

/** One slot change: the slot's new content, or undefined when the slot was deleted. */
export interface SlotChange {
  readonly shardId: number;
  readonly writer: string;
  readonly slot: Slot | undefined;
}

/**
 * Where a shard's base slot (the compacted winner, see base.ts) sits among its writers' slots. Node names
 * cannot contain control characters, so no writer can collide with it.
 */
export const BASE_WRITER = '\u0000base';

export const EMPTY_SNAPSHOT: PlacementSnapshot = Object.freeze({ version: 0, placements: IntMap.empty<Placement>() });

export class SnapshotIndex {
  private readonly slots = new Map<number, Map<string, Slot>>();
  private placements = IntMap.empty<Placement>();
  private current: PlacementSnapshot = EMPTY_SNAPSHOT;
  private slotTotal = 0;
  private recomputedTotal = 0;

  snapshot(): PlacementSnapshot {
    return this.current;
  }

  /** The slot with the greatest hlc for a shard, tombstones included. */
  winner(shardId: number): Slot | undefined {
    const writers = this.slots.get(shardId);
    if (writers === undefined) return undefined;
    let best: Slot | undefined;
    for (const slot of writers.values()) {
      if (best === undefined || compareSlots(slot, best) > 0) best = slot;
    }
    return best;
  }

  /** Every shard's winner, tombstones included. */
  *winners(): Generator<Slot> {
    for (const shardId of this.slots.keys()) yield this.winner(shardId) as Slot;
  }

  slot(shardId: number, writer: string): Slot | undefined {
    return this.slots.get(shardId)?.get(writer);
  }

  /**
   * Compaction: every shard keeps only its winner, as its base slot; the document's slots are gone.
   * Nothing visible changes. Returns the winners, which the caller stores in its base.
   */
  fold(): Slot[] {
    const winners: Slot[] = [];
    for (const [shardId, writers] of this.slots) {
      const winner = this.winner(shardId) as Slot;
      writers.clear();
      writers.set(BASE_WRITER, winner);
      winners.push(winner);
    }
    this.slotTotal = 0;
    return winners;
  }

  /** Live document slots (map keys) of this type; base slots are not map keys. */
  get slotCount(): number {
    return this.slotTotal;
  }

  /** How many shard winners were recomputed since creation: refresh work is proportional to it. */
  get recomputedShards(): number {
    return this.recomputedTotal;
  }

  /** Applies slot changes and returns the shards whose visible placement changed, ascending. */
  apply(changes: Iterable<SlotChange>): number[] {
    const touched = new Set<number>();
    for (const { shardId, writer, slot } of changes) {
      this.store(shardId, writer, slot);
      touched.add(shardId);
    }
    const changed: number[] = [];
    let placements = this.placements;
    for (const shardId of touched) {
      this.recomputedTotal++;
      const winner = this.winner(shardId);
      const before = placements.get(shardId);
      const after = winner === undefined || winner.target === null ? undefined : winner;
      if (samePlacement(before, after)) continue;
      placements = placements.with(shardId, after === undefined ? undefined : toPlacement(after));
      changed.push(shardId);
    }
    if (changed.length > 0) {
      this.placements = placements;
      this.current = Object.freeze({ version: this.current.version + 1, placements });
    }
    return changed.sort((a, b) => a - b);
  }

  private store(shardId: number, writer: string, slot: Slot | undefined): void {
    let writers = this.slots.get(shardId);
    const counted = writer === BASE_WRITER ? 0 : 1;
    if (slot === undefined) {
      if (writers?.delete(writer)) {
        this.slotTotal -= counted;
        if (writers.size === 0) this.slots.delete(shardId);
      }
      return;
    }
    if (writers === undefined) {
      writers = new Map();
      this.slots.set(shardId, writers);
    }
    if (!writers.has(writer)) this.slotTotal += counted;
    writers.set(writer, slot);
  }
}

function samePlacement(a: Placement | undefined, b: Slot | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.target === b.target && a.writer === b.writer && compareHlc(a.hlc, b.hlc) === 0 && sameMeta(a.meta, b.meta);
}

function toPlacement(slot: Slot): Placement {
  return placementOf(slot.target as string, slot.hlc, slot.writer, slot.meta);
}

/** A frozen Placement; `meta` is left out when there is none, so records compare and print as before. */
export function placementOf(target: string, hlc: Hlc, writer: string, meta: SlotMeta | undefined): Placement {
  return Object.freeze(meta === undefined ? { target, hlc, writer } : { target, hlc, writer, meta });
}
