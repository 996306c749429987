// Which members a node heartbeats (Pekko's HeartbeatNodeRing): the live members sorted by address form a
// ring, and each node monitors the `monitoredByNrOfMembers` members after it, so every member is monitored
// by that many others (all others in a smaller cluster) and heartbeat traffic per node stays constant as the
// cluster grows. A join or a removal changes only the monitors of the members next to it on the ring.
// Members the gossiped table says are unreachable stay monitored (so they can come back) but are not
// counted: the walk goes on until it has that many reachable ones, so a member whose nearest monitors went
// away still has monitors.
import type { NodeAddress } from '../address.js';
import { compareAddresses } from '../member-order.js';

export interface RingMember {
  readonly key: string;
  readonly address: NodeAddress;
}

/** The ring order: by address, then key (two incarnations of one address while the old one is being downed). */
export function ringOrder(members: ReadonlyArray<RingMember>): RingMember[] {
  return [...members].sort(
    (a, b) => compareAddresses(a.address, b.address) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
  );
}

/**
 * The keys `self` heartbeats: walking the ring from `self`, the first `monitoredByNrOfMembers` reachable
 * members, plus the unreachable ones passed on the way (while fewer than that many were taken).
 */
export function heartbeatTargets(
  members: ReadonlyArray<RingMember>,
  selfKey: string,
  monitoredByNrOfMembers: number,
  unreachable: ReadonlySet<string> = new Set(),
): string[] {
  return targetsOnRing(ringOrder(members), selfKey, monitoredByNrOfMembers, unreachable);
}

/** `heartbeatTargets` on a ring already in `ringOrder` (callers that keep the ring between changes). */
export function targetsOnRing(
  ring: ReadonlyArray<RingMember>,
  selfKey: string,
  monitoredByNrOfMembers: number,
  unreachable: ReadonlySet<string> = new Set(),
): string[] {
  const start = ring.findIndex((m) => m.key === selfKey);
  if (start < 0) return [];
  const targets: string[] = [];
  let wanted = monitoredByNrOfMembers;
  for (let step = 1; step < ring.length && wanted > 0; step++) {
    const next = ring[(start + step) % ring.length]!;
    if (!unreachable.has(next.key)) {
      targets.push(next.key);
      wanted--;
    } else if (targets.length < monitoredByNrOfMembers) {
      targets.push(next.key);
    }
  }
  return targets;
}

/** For each member, the members that heartbeat it (the inverse of `heartbeatTargets`, all reachable). */
export function monitorsOf(members: ReadonlyArray<RingMember>, monitoredByNrOfMembers: number): Map<string, string[]> {
  const monitors = new Map<string, string[]>(members.map((m) => [m.key, []]));
  for (const m of members) {
    for (const target of heartbeatTargets(members, m.key, monitoredByNrOfMembers)) monitors.get(target)?.push(m.key);
  }
  return monitors;
}
