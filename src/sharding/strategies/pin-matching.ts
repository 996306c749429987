// Which nodes a pin allows, as the external strategy sees the cluster: reachability and member facts
// (roles, attributes) from the view, taken once per allocate or rebalance call.
import type { NodeAddress } from '../../cluster/address.js';
import type { ClusterView, MemberInfo } from '../../cluster/member.js';
import { targetMatches, type PlacementNode } from '../placements/placement-target.js';
import type { PlacementPin } from '../placements/placement-pin.js';

/** Why a pin's target cannot take its shard right now. */
export type PlacementProblem = 'not a candidate' | 'unreachable' | 'no matching node';

/** One reading of the view; without a view every candidate is reachable and no member facts are known. */
export interface ClusterReading {
  /** Addresses that are reachable and still members; undefined without a view (all are). */
  readonly reachable: ReadonlySet<string> | undefined;
  readonly members: ReadonlyMap<string, PlacementNode>;
}

const NO_MEMBERS: ReadonlyMap<string, PlacementNode> = new Map();

export function readView(cluster: ClusterView | undefined): ClusterReading {
  if (cluster === undefined) return { reachable: undefined, members: NO_MEMBERS };
  const reachable = new Set<string>();
  const members = new Map<string, MemberInfo>();
  for (const member of cluster.members()) {
    const key = member.address.toString();
    members.set(key, member);
    // A downed or removed member will not come back to take a shard, whatever its last heartbeat said.
    if (member.reachable && member.status !== 'down' && member.status !== 'removed') reachable.add(key);
  }
  return { reachable, members };
}

/**
 * Whether the node at `key` is a home the pin allows. An address pin names its node; a selector needs the
 * node's roles and attributes, so a node the view does not list (or no view at all) matches no selector.
 */
export function homeMatches(pin: PlacementPin, key: string, view: ClusterReading): boolean {
  if (pin.target.kind === 'address') return key === pin.target.canonical;
  const member = view.members.get(key);
  return member !== undefined && targetMatches(pin.target, member);
}

/** The candidates the pin allows that are reachable, in candidate order, without duplicates. */
export function matchingCandidates(
  pin: PlacementPin,
  candidates: ReadonlyArray<NodeAddress>,
  view: ClusterReading,
): NodeAddress[] {
  const out: NodeAddress[] = [];
  const seen = new Set<string>();
  for (const candidate of candidates) {
    const key = candidate.toString();
    if (seen.has(key) || !isReachable(key, view) || !homeMatches(pin, key, view)) continue;
    seen.add(key);
    out.push(candidate);
    // An address names one node: no need to look further.
    if (pin.target.kind === 'address') break;
  }
  return out;
}

/**
 * Why no candidate can take the pinned shard. A target address the view does not list counts as
 * unreachable: it cannot be vouched for yet, and the pin applies once it is a reachable candidate.
 */
export function problemOf(pin: PlacementPin, isCandidate: (key: string) => boolean): PlacementProblem {
  if (pin.target.kind === 'selector') return 'no matching node';
  if (!isCandidate(pin.target.canonical)) return 'not a candidate';
  return 'unreachable';
}

export function isReachable(key: string, view: ClusterReading): boolean {
  return view.reachable === undefined || view.reachable.has(key);
}

/** The reachable candidates, or all of them when none is reachable (a prefer pin never strands a shard). */
export function reachablePool(
  candidates: ReadonlyArray<NodeAddress>,
  view: ClusterReading,
): ReadonlyArray<NodeAddress> {
  if (view.reachable === undefined) return candidates;
  const reachable = view.reachable;
  const pool = candidates.filter((candidate) => reachable.has(candidate.toString()));
  return pool.length > 0 ? pool : candidates;
}
