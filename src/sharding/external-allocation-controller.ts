// The programmatic face of external allocation for one entity type: operators' explicit placements are
// written to this node's replica of the placement store (and replicate to every node from there), read
// back as the `ExternalAllocationState` the external strategy consults, and moved now with rebalanceNow.
import type { Placement, PlacementSnapshot } from '../../crdt/index.js';
import { NodeAddress } from '../cluster/address.js';
import { ActorTsError } from '../errors.js';
import type { ClusterSharding, RebalanceNowResult } from './cluster-sharding.js';
import { explicitPlacementState } from './explicit-placement-state.js';
import type { ExternalAllocationState } from './strategies/index.js';

export { explicitPlacementState };

/** A placement as stored: its target, the HLC that decides conflicts, and the node that wrote it. */
export interface PlacementRecord {
  readonly shardId: number;
  readonly target: NodeAddress;
  readonly hlc: Placement['hlc'];
  readonly writer: string;
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

  /**
   * Pins a shard to a node. Written locally once this replica is ready (see `ready`) and replicated; a
   * later write, from any node, wins.
   */
  async setPlacement(shardId: number, target: NodeAddress | string): Promise<void> {
    const entries = this.check([{ shardId, target }]);
    await this.ready();
    this.write(entries);
  }

  /**
   * Pins several shards at once, all validated before any is written, at once (without waiting for
   * `ready`). Returns what was written (each entry's HLC). A target need not be a member yet: the pin is
   * honoured once that node joins.
   */
  setPlacements(entries: ReadonlyArray<{ readonly shardId: number; readonly target: NodeAddress | string }>): PlacementRecord[] {
    return this.write(this.check(entries));
  }

  /** Drops a shard's pin (a no-op when it has none); the shard returns to the fallback strategy at the next rebalance. */
  async removePlacement(shardId: number): Promise<void> {
    this.requireShard(shardId, this.numberOfShards());
    await this.ready();
    this.remove(shardId);
  }

  /**
   * Resolves when this node's replica may take writes: it has joined and synced with a peer (or has
   * none), waiting at most 5 s. A node restarted with an empty replica that wrote sooner could lose to
   * its own previous incarnation's older value, because Yjs settles a clash on one slot by client id.
   */
  ready(): Promise<void> {
    return this.sharding.placementsReady();
  }

  /** Like removePlacement, but says whether there was a pin to remove. */
  remove(shardId: number): boolean {
    this.requireShard(shardId, this.numberOfShards());
    const store = this.sharding.placementStore;
    if (!store.snapshot(this.typeName).placements.has(shardId)) return false;
    store.remove(this.typeName, shardId);
    return true;
  }

  private check(
    entries: ReadonlyArray<{ readonly shardId: number; readonly target: NodeAddress | string }>,
  ): Array<{ shardId: number; target: NodeAddress }> {
    const numberOfShards = this.numberOfShards();
    return entries.map(({ shardId, target }) => ({
      shardId: this.requireShard(shardId, numberOfShards),
      target: typeof target === 'string' ? NodeAddress.parse(target) : requireAddress(target),
    }));
  }

  private write(checked: ReadonlyArray<{ shardId: number; target: NodeAddress }>): PlacementRecord[] {
    // One store transaction: one update on the wire and one change notice, however many shards.
    const written = this.sharding.placementStore.setMany(
      this.typeName,
      checked.map(({ shardId, target }) => ({ shardId, target: target.toString() })),
    );
    return checked.map(({ shardId, target }, i) => {
      const placement = written[i] as Placement;
      return { shardId, target, hlc: placement.hlc, writer: placement.writer };
    });
  }

  async getPlacements(): Promise<ReadonlyMap<number, NodeAddress>> {
    return this.getState().explicitPlacements;
  }

  /** Every pin with its HLC and writer, by ascending shard id. */
  placements(): PlacementRecord[] {
    const records: PlacementRecord[] = [];
    for (const [shardId, placement] of this.sharding.placementStore.snapshot(this.typeName).placements) {
      const target = NodeAddress.tryParse(placement.target);
      if (target !== undefined) records.push({ shardId, target, hlc: placement.hlc, writer: placement.writer });
    }
    return records.sort((a, b) => a.shardId - b.shardId);
  }

  /**
   * Hands these shards off now; the coordinator re-allocates them through the strategy, so a pin decides
   * where they go. Resolves once the coordinator accepted. Rejects with `unknown_shard` (nothing sent) for
   * ids out of range, and with a `RebalanceError` naming shards that have no home yet.
   */
  async rebalanceNow(shardIds: ReadonlyArray<number>): Promise<void> {
    const result = await this.rebalance(shardIds);
    if (result.homeless.length > 0) throw new RebalanceError(result);
  }

  /** rebalanceNow's detailed form: which shards were accepted and which had no home. */
  async rebalance(shardIds: ReadonlyArray<number>): Promise<RebalanceNowResult> {
    if (!Array.isArray(shardIds)) throw new ActorTsError('invalid_argument', 'shardIds must be an array of shard ids');
    const numberOfShards = this.numberOfShards();
    for (const shardId of shardIds) this.requireShard(shardId, numberOfShards);
    return this.sharding.rebalanceNow(this.typeName, shardIds);
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


function requireAddress(target: unknown): NodeAddress {
  if (target instanceof NodeAddress) return target;
  throw new ActorTsError('invalid_address', `target must be a NodeAddress or an address string, got ${typeof target}`);
}
