// The coordinator's public types: its settings, its stats, and where it runs. Apart from the dispatcher so
// that its parts under coordinator/ can name them without importing the class that dispatches to them.
import type { NodeAddress } from '../../cluster/address.js';
import type { MemberInfo } from '../../cluster/member.js';
import type { ProbeResult } from '../../cluster/transport/transport.js';
import { oldestUpMember } from '../../cluster/member-order.js';
import type { CordonView } from '../placements/cordon-view.js';
import type { DeliveryEvents } from '../core/sharding-context.js';
import type { PinRecord } from '../placements/placement-record.js';
import type { AllocationStrategy } from '../strategies/index.js';

export interface CoordinatorConfig {
  readonly typeName: string;
  readonly numberOfShards: number;
  readonly role: string | undefined;
  readonly strategy: AllocationStrategy;
  /** Called when a region registers for the first time (a new candidate may be the target of a pin). */
  readonly onRegionAdded?: () => void;
  /** What the coordinator reports as it happens (metrics). */
  readonly events?: CoordinatorEvents;
  /** Nodes that take no new shards (issue 12); default NO_CORDONS. */
  readonly cordons?: CordonView;
  /** A shard's pin as listed (stored, not expired at `now`), for explain; default none. */
  readonly listedPlacement?: (shardId: number, now: number) => PinRecord | undefined;
  /** Probes a node's address (Transport.probe): a downed member confirmed dead needs no removal margin. */
  readonly probe?: (to: NodeAddress) => Promise<ProbeResult>;
}

/** Events a coordinator reports; each must be cheap and must not throw. */
export interface CoordinatorEvents extends DeliveryEvents {
  /** A hand-off of `typeName` ended with the shard stopped, `seconds` after it started. */
  onHandOffCompleted?(typeName: string, seconds: number): void;
  /** The coordinator of `typeName` ran a rebalance round (whether or not it moved anything). */
  onRebalanceRound?(typeName: string): void;
}

/** Statistics of a type's coordinator, on the node that runs it. */
export interface CoordinatorStats {
  /** Non-proxy regions registered. */
  readonly regions: number;
  readonly proxies: number;
  readonly allocatedShards: number;
  /** True once every expected region registered (or the warm-up ended). */
  readonly warm: boolean;
  readonly allocations: number;
  /** Strategy results that were not a current candidate (or threw) and were replaced by a candidate. */
  readonly invalidAllocations: number;
  readonly rebalanceRounds: number;
  readonly rebalanceInProgress: number;
  readonly handOffsStarted: number;
  readonly handOffsCompleted: number;
  readonly handOffsTimedOut: number;
  /** Shards the strategy has no home for now (a require pin no candidate satisfies), waiting for a change. */
  readonly waitingShards: number;
  /** Entity state held for shards between their old host's stop and their new home's start. */
  readonly handOffStateBytes: number;
}

/** Which node runs the coordinator of a type: the cluster's singleton placement, the oldest Up member with the role. */
export function coordinatorNode(members: ReadonlyArray<MemberInfo>, role: string | undefined): MemberInfo | undefined {
  return oldestUpMember(members, role);
}
