// What the management API needs from a running node. The node wiring implements it over the cluster,
// the sharding runtime and the placement controllers; route tests can drive a real node through it.
import type { MemberInfo } from '../cluster/member.js';
import type { NodeAddress } from '../cluster/address.js';

export interface PlacementEntry {
  readonly shardId: number;
  readonly target: string;
}

/** A placement as written: the target plus the HLC that decides conflicts and the node that wrote it. */
export interface WrittenPlacement extends PlacementEntry {
  readonly writer: string;
  readonly hlc: { readonly wallMs: number; readonly counter: number; readonly node: string };
}

export interface RebalanceOutcome {
  /** Shards the coordinator started handing off. */
  readonly accepted: readonly number[];
  /** Shards that had no home: nothing to move; their next allocation follows the strategy. */
  readonly homeless: readonly number[];
}

export interface PlacementStoreHealth {
  readonly generation: number;
  readonly slots: number;
  readonly baseSlots: number;
  readonly documentItems: number;
}

export interface ShardLocations {
  readonly regions: ReadonlyArray<{ readonly address: string; readonly shards: readonly number[] }>;
  /** Shards whose hand-off is in progress: listed under the region they are leaving until they stopped. */
  readonly handingOff: readonly number[];
}

/** Whether this node may take placement writes now, and if not, why (the 503 `not_a_member` message). */
export type WriteAccess = { readonly writable: true } | { readonly writable: false; readonly reason: string };

export interface ManagementBackend {
  readonly self: NodeAddress;
  /** Entity types initialised on this node, with their shard count. */
  entityTypes(): ReadonlyMap<string, { readonly numberOfShards: number }>;
  members(): ReadonlyArray<MemberInfo>;
  /** Writes all entries (already validated) locally; they replicate to every node. */
  setPlacements(typeName: string, entries: ReadonlyArray<{ shardId: number; target: NodeAddress }>): Promise<readonly WrittenPlacement[]>;
  /** False when the shard had no explicit placement. */
  removePlacement(typeName: string, shardId: number): Promise<boolean>;
  placements(typeName: string): ReadonlyArray<WrittenPlacement>;
  rebalance(typeName: string, shardIds: readonly number[]): Promise<RebalanceOutcome>;
  shardLocations(typeName: string): Promise<ShardLocations>;
  /** Liveness of this node as the cluster sees it. */
  health(): { readonly status: 'ok' | 'starting' | 'leaving' | 'down'; readonly memberStatus: string | undefined };
  /** The placement store replica's size: its generation, live slots, compacted slots and history items. */
  placementStore(): PlacementStoreHealth;
  /**
   * Whether this node is a member that may write placements (writes are refused with 503 otherwise, so a
   * node outside the cluster never acknowledges a write it can only keep to itself).
   */
  writeAccess(): WriteAccess;
}
