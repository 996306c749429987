// A fixed membership for simulated clusters: every node Up and reachable from the start. Enough for
// PlacementReplication, which only needs to know whom to replicate with.
import type { NodeAddress } from '../../src/cluster/address.js';
import type { MemberInfo, Membership } from '../../src/cluster/member.js';

export function staticMembership(self: NodeAddress, all: readonly NodeAddress[]): Membership {
  const members: MemberInfo[] = all.map((address, i) => ({
    address,
    status: 'up',
    appVersion: '1.0.0',
    upNumber: i + 1,
    reachable: true,
  }));
  return {
    self,
    members: () => members,
    onChange: () => () => undefined,
    onLeaving: () => () => undefined,
  };
}
