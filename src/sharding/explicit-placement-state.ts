// The external strategy's view of the placement store: a snapshot's placements read as node addresses.
// The view wraps the snapshot instead of copying it, so a placement change costs the strategy nothing
// until it looks a shard up (snapshots are persistent maps; copying every pin on each change made the first
// allocate after a change much slower, see bench S5).
import type { Placement, PlacementSnapshot } from '../../crdt/index.js';
import { NodeAddress } from '../cluster/address.js';
import type { ExternalAllocationState } from './strategies/index.js';

const MAX_CACHED_TARGETS = 4096;
const LOOKUPS_BEFORE_COPY = 64;

/** The strategy's state for the snapshots `snapshot` returns; the same object while the snapshot is the same. */
export function explicitPlacementState(snapshot: () => PlacementSnapshot): () => ExternalAllocationState {
  const parse = addressCache();
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

// Targets are a handful of node addresses repeated over many shards: each is parsed once, not per lookup.
function addressCache(): (target: string) => NodeAddress | undefined {
  const addresses = new Map<string, NodeAddress | undefined>();
  return (target) => {
    if (addresses.has(target)) return addresses.get(target);
    if (addresses.size >= MAX_CACHED_TARGETS) addresses.clear();
    const address = NodeAddress.tryParse(target);
    addresses.set(target, address);
    return address;
  };
}

/**
 * The placements whose target is a node address. The store holds strings, and one that is not an address
 * (written by a foreign writer) cannot be honoured, so it is absent here: not returned, not counted.
 */
class PlacementTargets implements ReadonlyMap<number, NodeAddress> {
  private counted: number | undefined;
  private lookups = 0;
  // A rebalance looks up every allocated shard: past a few lookups a plain Map copy pays for itself.
  private copy: Map<number, NodeAddress> | undefined;

  constructor(
    private readonly placements: ReadonlyMap<number, Placement>,
    private readonly parse: (target: string) => NodeAddress | undefined,
  ) {}

  get(shardId: number): NodeAddress | undefined {
    if (this.copy !== undefined) return this.copy.get(shardId);
    if (++this.lookups > LOOKUPS_BEFORE_COPY) {
      this.copy = new Map(this.entries());
      return this.copy.get(shardId);
    }
    const placement = this.placements.get(shardId);
    return placement === undefined ? undefined : this.parse(placement.target);
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

  *entries(): MapIterator<[number, NodeAddress]> {
    for (const [shardId, placement] of this.placements) {
      const target = this.parse(placement.target);
      if (target !== undefined) yield [shardId, target];
    }
  }

  *keys(): MapIterator<number> {
    for (const [shardId] of this.entries()) yield shardId;
  }

  *values(): MapIterator<NodeAddress> {
    for (const [, target] of this.entries()) yield target;
  }

  forEach(callback: (target: NodeAddress, shardId: number, map: ReadonlyMap<number, NodeAddress>) => void, thisArg?: unknown): void {
    for (const [shardId, target] of this.entries()) callback.call(thisArg, target, shardId, this);
  }

  [Symbol.iterator](): MapIterator<[number, NodeAddress]> {
    return this.entries();
  }
}
