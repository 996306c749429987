// The member vocabulary: what the rest of the runtime may know about a cluster member (its record, its status
// and what each status means, the majority rule), and the read-only view strategies take. The cluster owns it;
// every layer reads it, so a status means one thing everywhere.
import type { NodeAddress } from './address.js';

/** Every member status, in lifecycle order: joining, weakly-up, up, then leaving, exiting, and down or removed. */
export const MEMBER_STATUSES = ['joining', 'weakly-up', 'up', 'leaving', 'exiting', 'down', 'removed'] as const;
/** A member's place in its lifecycle (see MEMBER_STATUSES); the named sets below say what each one allows. */
export type MemberStatus = (typeof MEMBER_STATUSES)[number];

const statuses = (...list: MemberStatus[]): ReadonlySet<MemberStatus> => new Set(list);

/** Statuses of members that no longer take part: they host nothing and are not monitored. */
export const GONE_STATUSES = statuses('down', 'removed');
/** Arriving: known to the cluster, not yet serving. The last choice for new shards. */
export const ARRIVING_STATUSES = statuses('joining', 'weakly-up');
/** On its way out (or already out): the last choice for new shards. */
export const DEPARTING_STATUSES = statuses('leaving', 'exiting', 'down', 'removed');
/** Members whose regions may host shards (a new coordinator must hear from them before allocating). */
export const HOSTING_STATUSES = statuses('up', 'leaving', 'exiting');
/** Statuses in which a node has received the cluster's membership, so it knows its peers. */
export const JOINED_STATUSES = statuses('weakly-up', 'up', 'leaving', 'exiting');
/** Statuses in which a node may take writes that must reach the others: it joined and is not leaving. */
export const WRITING_STATUSES = statuses('joining', 'weakly-up', 'up');
/** Statuses that count towards a majority: members that are (or were) serving, not arriving or gone. */
export const COUNTED_STATUSES = statuses('weakly-up', 'up', 'leaving');

/**
 * The majority rule, the same for the downing decision and for refusing writes: a side keeps the cluster when
 * it holds more than half of the `counted` members, or exactly half and the lowest-ordered of them (addresses
 * compared with compareAddresses), so of two equal halves exactly one stays.
 */
export function holdsMajority(counted: number, side: number, sideHasLowest: boolean): boolean {
  return side * 2 > counted || (side > 0 && side * 2 === counted && sideHasLowest);
}

/**
 * The phases of a failed member's failover, in order, as a node records them (failover-timeline.ts) and the
 * metrics export them (`actor_ts_failover_phase_seconds{phase}`).
 */
export const FAILOVER_PHASES = [
  'detected',
  'suspected-confirmed',
  'decided',
  'removed',
  're-homed',
  'first-message',
] as const;
export type FailoverPhase = (typeof FAILOVER_PHASES)[number];

/** Whether a member with this status is down or removed. */
export function isGone(status: MemberStatus): boolean {
  return GONE_STATUSES.has(status);
}

/** One member as a node currently sees it: address, status, reachability, version, roles and attributes. */
export interface MemberInfo {
  readonly address: NodeAddress;
  readonly status: MemberStatus;
  readonly appVersion: string;
  /** Join order among members that reached Up: lower is older. */
  readonly upNumber: number;
  readonly reachable: boolean;
  /** Roles the member was started with; a sharded type with a role is hosted only on members that have it. */
  readonly roles?: ReadonlyArray<string>;
  /** Attributes the member was started with (`zone`, `rack`...); undefined from nodes that predate them. */
  readonly attributes?: Readonly<Record<string, string>>;
  /**
   * When the member was decided down: the deciding node's wall-clock ms (the earliest decision when several
   * nodes downed it). Undefined for members never downed, and for downings gossiped by nodes that predate it.
   */
  readonly downedAtMs?: number;
  /**
   * True when this node's own probes confirm that this record's process is gone: its address refused
   * CONFIRM_REFUSALS connects in a row, the latest within CONFIRMATION_FRESH_MS, with no sign of life from it
   * since (cluster/membership/death-confirmation.ts). Evidence about this record's process only (a new process
   * at the address is a record of its own); absent when there is none, and from a membership that does not probe.
   */
  readonly confirmedDead?: boolean;
}

/**
 * A member this node saw leave the view after it reached Up (removed, or pruned into a tombstone): what a new
 * coordinator needs to date the down-removal margin of an older member that is no longer in the view.
 */
export interface DepartedMember {
  readonly address: NodeAddress;
  /** Its Up number (MemberInfo.upNumber): which gap in the Up numbers it explains. */
  readonly upNumber: number;
  /** When its downing was decided (MemberInfo.downedAtMs); undefined for a graceful leave or an old peer's downing. */
  readonly downedAtMs?: number;
  /** When this node saw it removed or pruned (this node's clock): never before its removal or its downing. */
  readonly removedAtMs: number;
}

/** Read-only membership as a strategy sees it. */
export interface ClusterView {
  members(): ReadonlyArray<MemberInfo>;
}

/** Live membership as the sharding layer consumes it; implemented by the cluster. */
export interface Membership extends ClusterView {
  readonly self: NodeAddress;
  /** Fires after any change of the member set, a status, or reachability. Returns an unsubscribe function. */
  onChange(listener: () => void): () => void;
  /**
   * Registers work that must finish before this node leaves the cluster (graceful leave waits for every
   * task, bounded by the cluster's leave timeout). Returns an unregister function.
   */
  onLeaving(task: () => Promise<void>): () => void;
  /**
   * Members this node saw leave the view after reaching Up, oldest first (bounded, forgotten after the
   * tombstones' lifetime). Optional: a membership without it makes every such gap unknown (the safe side).
   */
  departed?(): ReadonlyArray<DepartedMember>;
}
