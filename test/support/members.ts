// Member records and fixed memberships for tests and simulations: one way to write a MemberInfo with the
// defaults a healthy member has, and a Membership over a member list that something else controls.
import { NodeAddress } from '../../src/cluster/address.js';
import type { MemberInfo, MemberStatus, Membership } from '../../src/cluster/member.js';

/** `test@127.0.0.1:<port>`, the address the in-process harnesses give their nodes. */
export function testAddress(port: number): NodeAddress {
  return NodeAddress.parse(`test@127.0.0.1:${port}`);
}

export interface MemberRecord {
  readonly address: NodeAddress;
  readonly status?: MemberStatus;
  readonly appVersion?: string;
  readonly upNumber?: number;
  readonly reachable?: boolean;
  /** Left out of the record when not given, as a member from a node that predates roles. */
  readonly roles?: ReadonlyArray<string>;
}

/** A member record: Up, reachable, version 1.0.0 and upNumber 1 unless the record says otherwise. */
export function memberInfo(record: MemberRecord): MemberInfo {
  return {
    address: record.address,
    status: record.status ?? 'up',
    appVersion: record.appVersion ?? '1.0.0',
    upNumber: record.upNumber ?? 1,
    reachable: record.reachable ?? true,
    ...(record.roles === undefined ? {} : { roles: record.roles }),
  };
}

/** A membership that reads `members()` on every call and never fires events or leave tasks. */
export function staticMembership(self: NodeAddress, members: () => ReadonlyArray<MemberInfo>): Membership {
  return {
    self,
    members,
    onChange: () => () => undefined,
    onLeaving: () => () => undefined,
  };
}
