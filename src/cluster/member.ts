// What the rest of the runtime may know about a cluster member, and the read-only view strategies take.
import type { NodeAddress } from './address.js';

/** A member's lifecycle, in order: joining, weakly-up, up, then leaving, exiting, and down or removed. */
export type MemberStatus = 'joining' | 'weakly-up' | 'up' | 'leaving' | 'exiting' | 'down' | 'removed';

/** Statuses of members that no longer take part: they host nothing and are not monitored. */
export const GONE_STATUSES: ReadonlySet<MemberStatus> = new Set<MemberStatus>(['down', 'removed']);

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
}
