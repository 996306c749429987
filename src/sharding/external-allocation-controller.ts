// The programmatic face of external allocation for one entity type: operators' explicit placements are
// written to this node's replica of the placement store (and replicate to every node from there), read
// back as the `ExternalAllocationState` the external strategy consults, and moved now with rebalanceNow.
import { whenDurable, type Placement, type PlacementStore } from '../../crdt/index.js';
import { NodeAddress } from '../cluster/address.js';
import { ActorTsError } from '../errors.js';
import type { ClusterSharding } from './cluster-sharding.js';
import type { RebalanceNowResult } from './coordinator-client.js';
import { explicitPlacementState } from './explicit-placement-state.js';
import type { ExternalAllocationState } from './strategies/index.js';

export { explicitPlacementState };

/**
 * One shard's placement as the store holds it: the target (a canonical `system@host:port` string), the HLC
 * that decides conflicts and the node that wrote it.
 */
export interface PlacementRecord extends Placement {
  readonly shardId: number;
}

/** A placement to write: the target as a NodeAddress or an address string (`actor-ts://` accepted). */
export interface PlacementRequest {
  readonly shardId: number;
  readonly target: NodeAddress | string;
}

/** rebalanceNow could not move every shard it was given; `result` says which were started. */
export class RebalanceError extends ActorTsError {
  constructor(readonly result: RebalanceNowResult) {
    super(
      'not_allocated',
      `shards ${result.homeless.join(', ')} have no home yet, so there is nothing to move; ` +
        `their first message allocates them through the strategy` +
        (result.accepted.length > 0 ? ` (hand-off started for ${result.accepted.join(', ')})` : ''),
    );
    this.name = 'RebalanceError';
  }
}

/** Every placement of a type in `store`, by ascending shard id. */
export function placementRecords(store: PlacementStore, typeName: string): PlacementRecord[] {
  const records: PlacementRecord[] = [];
  for (const [shardId, { target, hlc, writer }] of store.snapshot(typeName).placements) records.push({ shardId, target, hlc, writer });
  return records.sort((a, b) => a.shardId - b.shardId);
}

export class ExternalAllocationController {
  /**
   * The state `externalAllocationStrategy` reads at every allocate and rebalance: a view of this node's
   * replica, rebuilt only when the store's snapshot changed. Pass it as the strategy's `getState`.
   */
  readonly getState: () => ExternalAllocationState;

  constructor(
    private readonly sharding: ClusterSharding,
    readonly typeName: string,
  ) {
    if (typeof sharding?.entityTypes !== 'function' || sharding.placementStore === undefined) {
      throw new ActorTsError('invalid_argument', 'ExternalAllocationController needs a ClusterSharding');
    }
    // Validates the type name the way the store does, so a bad name fails here and not at first use.
    sharding.placementStore.snapshot(typeName);
    this.getState = explicitPlacementState(() => sharding.placementStore.snapshot(typeName));
  }

  /** Pins a shard to a node; see setPlacements. */
  async setPlacement(shardId: number, target: NodeAddress | string): Promise<void> {
    await this.setPlacements([{ shardId, target }]);
  }

  /**
   * Pins shards to nodes, in one store transaction (one update on the wire, one change notice). Every
   * entry is validated before any is written (`unknown_shard`, `invalid_address`; nothing written then).
   * Written once this replica may take writes (it joined and synced with a peer, or has none; at most 5 s:
   * a restarted node writing sooner could lose to its previous incarnation's older value), then replicated;
   * a later write, from any node, wins. A target need not be a member yet: the pin applies once it joins.
   * Resolves with what was written.
   */
  async setPlacements(entries: ReadonlyArray<PlacementRequest>): Promise<PlacementRecord[]> {
    if (!Array.isArray(entries)) throw new ActorTsError('invalid_argument', 'entries must be an array of { shardId, target }');
    const numberOfShards = this.numberOfShards();
    const checked = entries.map(({ shardId, target }) => ({
      shardId: this.requireShard(shardId, numberOfShards),
      target: canonicalTarget(target),
    }));
    await this.sharding.placementsReady();
    const written = this.sharding.placementStore.setMany(this.typeName, checked);
    await whenDurable(this.sharding.placementStore);
    return checked.map(({ shardId }, i) => {
      const { target, hlc, writer } = written[i] as Placement;
      return { shardId, target, hlc, writer };
    });
  }

  /**
   * Drops a shard's pin, once this replica may take writes (as setPlacements); the shard returns to the
   * fallback strategy at the next rebalance. Resolves false when it had no pin (nothing written).
   */
  async removePlacement(shardId: number): Promise<boolean> {
    this.requireShard(shardId, this.numberOfShards());
    await this.sharding.placementsReady();
    const store = this.sharding.placementStore;
    if (!store.snapshot(this.typeName).placements.has(shardId)) return false;
    store.remove(this.typeName, shardId);
    await whenDurable(store);
    return true;
  }

  /** The pins the strategy honours: those whose target is a node address. */
  async getPlacements(): Promise<ReadonlyMap<number, NodeAddress>> {
    return this.getState().explicitPlacements;
  }

  /**
   * Hands these shards off now; the coordinator re-allocates them through the strategy, so a pin decides
   * where they go. Resolves, with the shards accepted, once the coordinator accepted them all. Rejects with
   * `unknown_shard` (nothing sent) for ids out of range, and with a `RebalanceError` naming shards that have
   * no home yet (the others were still handed off).
   */
  async rebalanceNow(shardIds: ReadonlyArray<number>): Promise<RebalanceNowResult> {
    if (!Array.isArray(shardIds)) throw new ActorTsError('invalid_argument', 'shardIds must be an array of shard ids');
    const numberOfShards = this.numberOfShards();
    for (const shardId of shardIds) this.requireShard(shardId, numberOfShards);
    const result = await this.sharding.rebalanceNow(this.typeName, shardIds);
    if (result.homeless.length > 0) throw new RebalanceError(result);
    return result;
  }

  private numberOfShards(): number {
    const type = this.sharding.entityTypes().get(this.typeName);
    if (type === undefined) {
      throw new ActorTsError('unknown_type', `entity type "${this.typeName}" is not initialised on this node`);
    }
    return type.numberOfShards;
  }

  private requireShard(shardId: number, numberOfShards: number): number {
    if (!Number.isSafeInteger(shardId) || shardId < 0 || shardId >= numberOfShards) {
      throw new ActorTsError(
        'unknown_shard',
        `shard id ${String(shardId)} is out of range for ${this.typeName}: expected an integer in 0..${numberOfShards - 1}`,
      );
    }
    return shardId;
  }
}

/** A target parsed once, at the edge, and kept as its canonical string from here on. */
function canonicalTarget(target: unknown): string {
  if (typeof target === 'string') return NodeAddress.parse(target).toString();
  if (target instanceof NodeAddress) return target.toString();
  throw new ActorTsError('invalid_address', `target must be a NodeAddress or an address string, got ${typeof target}`);
}
