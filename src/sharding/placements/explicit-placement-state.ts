// The external strategy's view of the placement store: a snapshot's placements read as pins (target parsed,
// mode and expiry from the stored rule).
// The view wraps the snapshot instead of copying it, so a placement change costs the strategy nothing
// until it looks a shard up (snapshots are persistent maps; copying every pin on each change made the first
// allocate after a change much slower, see bench S5).
import type { Placement, PlacementSnapshot } from '../../../crdt/index.js';
import { ruleOf } from './placement-options.js';
import { tryParsePlacementTarget } from './placement-target.js';
import { PlacementPin, type ExternalAllocationState } from './placement-pin.js';

const MAX_CACHED_TARGETS = 4096;
const LOOKUPS_BEFORE_COPY = 64;

/** The strategy's state for the snapshots `snapshot` returns; the same object while the snapshot is the same. */
export function explicitPlacementState(snapshot: () => PlacementSnapshot): () => ExternalAllocationState {
  const parse = pinCache();
  let source: PlacementSnapshot | undefined;
  let state: ExternalAllocationState = { explicitPlacements: new Map() };
  return () => {
    const current = snapshot();
    if (current !== source) {
      source = current;
      state = { explicitPlacements: new PlacementTargets(current.placements, parse) };
    }
    return state;
  };
}

/**
 * Targets are a handful of addresses and selectors repeated over many shards: each is parsed once, not per
 * lookup, and a pin without a stored rule (the common case) is shared by every shard with that target.
 */
function pinCache(): (placement: Placement) => PlacementPin | undefined {
  const plain = new Map<string, PlacementPin | undefined>();
  return (placement) => {
    let pin = plain.get(placement.target);
    if (pin === undefined && !plain.has(placement.target)) {
      if (plain.size >= MAX_CACHED_TARGETS) plain.clear();
      const target = tryParsePlacementTarget(placement.target);
      pin = target === undefined ? undefined : new PlacementPin(target);
      plain.set(placement.target, pin);
    }
    if (pin === undefined || placement.meta === undefined) return pin;
    const { mode, expiresAt } = ruleOf(placement);
    return new PlacementPin(pin.target, mode, expiresAt);
  };
}

/**
 * The placements whose target is an address or a selector. The store holds strings, and one that is
 * neither (written by a foreign writer) cannot be honoured, so it is absent here: not returned, not counted.
 * Expired pins are here (the strategy judges expiry against its clock; this view depends on the snapshot only).
 */
class PlacementTargets implements ReadonlyMap<number, PlacementPin> {
  private counted: number | undefined;
  private lookups = 0;
  // A rebalance looks up every allocated shard: past a few lookups a plain Map copy pays for itself.
  private copy: Map<number, PlacementPin> | undefined;

  constructor(
    private readonly placements: ReadonlyMap<number, Placement>,
    private readonly parse: (placement: Placement) => PlacementPin | undefined,
  ) {}

  get(shardId: number): PlacementPin | undefined {
    if (this.copy !== undefined) return this.copy.get(shardId);
    if (++this.lookups > LOOKUPS_BEFORE_COPY) {
      this.copy = new Map(this.entries());
      return this.copy.get(shardId);
    }
    const placement = this.placements.get(shardId);
    return placement === undefined ? undefined : this.parse(placement);
  }

  has(shardId: number): boolean {
    return this.get(shardId) !== undefined;
  }

  get size(): number {
    if (this.counted === undefined) {
      let count = 0;
      for (const _ of this.entries()) count++;
      this.counted = count;
    }
    return this.counted;
  }

  *entries(): MapIterator<[number, PlacementPin]> {
    for (const [shardId, placement] of this.placements) {
      const target = this.parse(placement);
      if (target !== undefined) yield [shardId, target];
    }
  }

  *keys(): MapIterator<number> {
    for (const [shardId] of this.entries()) yield shardId;
  }

  *values(): MapIterator<PlacementPin> {
    for (const [, target] of this.entries()) yield target;
  }

  forEach(
    callback: (target: PlacementPin, shardId: number, map: ReadonlyMap<number, PlacementPin>) => void,
    thisArg?: unknown,
  ): void {
    for (const [shardId, target] of this.entries()) callback.call(thisArg, target, shardId, this);
  }

  [Symbol.iterator](): MapIterator<[number, PlacementPin]> {
    return this.entries();
  }
}
