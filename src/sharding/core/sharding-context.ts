// What a region and a coordinator need from the node they run on: who it is, its settings and membership,
// and how to reach other nodes' regions and coordinators.
import type { NodeAddress } from '../../cluster/address.js';
import type { Membership } from '../../cluster/member.js';
import type { Scheduler } from '../../cluster/scheduler.js';
import type { ShardingConfig } from './config.js';
import type { HostOutcome } from './entity-api.js';
import type { GroupCommit } from '../../entity-store/group-commit.js';
import type { ReplyTo, ShardingMessage } from '../protocol/messages.js';

export interface ShardingContext {
  readonly self: NodeAddress;
  readonly selfKey: string;
  readonly config: ShardingConfig;
  readonly membership: Membership;
  /** The clock and timers of the node's regions, coordinators and entities (ClusterShardingOptions.scheduler). */
  readonly scheduler: Scheduler;
  /** Sends over the transport, or dispatches locally (asynchronously) when `to` is this node. Never throws. */
  send(to: string, message: ShardingMessage): void;
  /** What was sent to `to` this tick goes to the network now (Transport.flush); absent: nothing is held back. */
  flush?(to: string): void;
  /**
   * The protocol version `to` reads messages at (what the latest handshake with it agreed; this release's for
   * this node); absent: this release's for every node (one build throughout).
   */
  protocolWith?(to: string): number;
  /** What regions report as it happens (metrics); absent when nobody listens. */
  readonly events?: DeliveryEvents | undefined;
  /** Delivers an entity's answer to the asking node. */
  reply(replyTo: ReplyTo, outcome: HostOutcome): void;
  /** The node's entity store, for durable types; absent: a durable type is refused at init. */
  readonly entityStore?: EntityStoreContext | undefined;
}

/** The node's entity store as durable types use it: its group commit, and what they report (metrics). */
export interface EntityStoreContext {
  readonly commit: GroupCommit;
  /** An entity's row of `typeName` was read in `durationMs` (restore latency). */
  readonly onRestored?: (typeName: string, durationMs: number) => void;
  /** A commit of `typeName` was refused: a later host claimed its shard. */
  readonly onFenced?: (typeName: string, shardId: number) => void;
}

/** What regions and coordinators report about moving state and reliable sends (metrics); cheap, never throwing. */
export interface DeliveryEvents {
  /** A reliable send of `typeName` passed its deadline; `delivered`: some copy had left this node. */
  onSendTimeout?(typeName: string, delivered: boolean): void;
  /** `count` entities' states of `typeName` met `outcome` at a hand-off. */
  onEntitySnapshots?(
    typeName: string,
    outcome: 'shipped' | 'restored' | 'too_large' | 'failed' | 'lost',
    count: number,
  ): void;
  /**
   * A failover phase this node took part in, for the failed member (its address): the coordinator's removal
   * and re-homing (coordinator/membership.ts's FailoverReport), and the first answer to one of this node's asks or sends
   * from a shard that member hosted (`first-message`, region/home-cache.ts keeps the former homes).
   */
  onFailoverStep?(member: string, phase: 'removed' | 're-homed' | 'first-message'): void;
}
