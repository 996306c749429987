// What a node's sharding runtime reports about itself (ClusterSharding.stats): per type, its region and, where it
// runs here, its coordinator; and the node-wide counts of asks, sends and messages that went nowhere.
import type { CoordinatorStats } from './coordinator/shard-coordinator.js';
import type { RegionStats } from './region/region-stats.js';

/** One entity type's statistics on this node: its region, and its coordinator where it runs here. */
export interface TypeStats {
  readonly region: RegionStats;
  /** Present on the node that runs this type's coordinator. */
  readonly coordinator?: CoordinatorStats;
}

/** This node's sharding statistics, per type and overall. */
export interface ShardingStats {
  readonly types: Readonly<Record<string, TypeStats>>;
  readonly asksTimedOut: number;
  /** Sends past their deadline: whether a copy had left this node (outcome unknown) or not (never applied). */
  readonly sendTimeouts: { readonly delivered: number; readonly notDelivered: number };
  /** Sharding messages for a type not initialised here, or for a coordinator that does not run here. */
  readonly unroutableMessages: number;
  /** Sends the transport refused (a message that cannot be encoded). */
  readonly sendFailures: number;
}
