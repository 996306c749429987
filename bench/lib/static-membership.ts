// A fixed membership for simulated clusters: every node Up and reachable from the start. Enough for
// PlacementReplication, which only needs to know whom to replicate with. Built from the tests' member records.
import type { NodeAddress } from '../../src/cluster/address.js';
import type { Membership } from '../../src/cluster/member.js';
import { memberInfo, staticMembership as membershipOf } from '../../test/support/members.js';

export function staticMembership(self: NodeAddress, all: readonly NodeAddress[]): Membership {
  const members = all.map((address, i) => memberInfo({ address, upNumber: i + 1 }));
  return membershipOf(self, () => members);
}
