// The sender rules as a pure function (gossip-guard.ts): which changes of a received state pass, which are
// held back and whom to ask, how row versions are bounded, and that this node's own row is never taken.
import { describe, expect, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import { keyOf, type GossipState, type MemberRecord } from '../../src/cluster/membership/gossip.js';
import { admitGossip, LEADER, MAX_ROW_STEP, type GuardContext } from '../../src/cluster/membership/gossip-guard.js';
import type { MemberStatus } from '../../src/cluster/member.js';
import type { ObserverRow } from '../../src/cluster/membership/reachability-table.js';

const address = (port: number): NodeAddress => new NodeAddress('sys', 'h', port);
const rec = (port: number, status: MemberStatus = 'up'): MemberRecord => ({
  address: address(port),
  incarnation: 'i',
  status,
  appVersion: '1',
  roles: [],
  upNumber: port,
});
const key = (port: number): string => keyOf(rec(port));

function state(
  records: MemberRecord[],
  rows: Array<[number, number, number[]]> = [],
  tombstones: Array<[number, number]> = [],
): GossipState {
  const reachability = new Map<string, ObserverRow>(
    rows.map(([o, version, subjects]) => [key(o), { version, subjects: new Set(subjects.map(key)) }]),
  );
  return {
    members: new Map(records.map((r) => [keyOf(r), r])),
    seen: new Set(records.map(keyOf)),
    tombstones: new Map(tombstones.map(([p, at]) => [key(p), at])),
    reachability,
  };
}

/** Node 2 receives from `sender`; node 1 leads. */
function ctx(sender: number, overrides: Partial<GuardContext> = {}): GuardContext {
  return {
    selfKey: key(2),
    sender: address(sender),
    isLeader: (k) => k === key(1),
    isUnreachable: () => false,
    relayedRows: false,
    ...overrides,
  };
}

const local = state([rec(1), rec(2), rec(3), rec(4)]);

describe('admitGossip', () => {
  it('passes a downing from the leader, holds one relayed by another member back and asks the leader', () => {
    const incoming = state([rec(1), rec(2), rec(3, 'down'), rec(4)]);
    expect(admitGossip(local, incoming, ctx(1)).heldBack).toBe(0);
    const relayed = admitGossip(local, incoming, ctx(4));
    expect(relayed.state.members.get(key(3))?.status).toBe('up');
    expect(relayed.state.seen.size).toBe(0);
    expect([...relayed.askAuthors]).toEqual([[LEADER, new Set([key(3)])]]);
  });

  it("takes this node's own downing only from its leader, and never a leave it did not make", () => {
    expect(admitGossip(local, state([rec(2, 'down')]), ctx(3)).state.members.get(key(2))?.status).toBe('up');
    expect(admitGossip(local, state([rec(2, 'leaving')]), ctx(1)).heldBack).toBe(0);
    const leave = admitGossip(local, state([rec(2, 'leaving')]), ctx(3));
    expect(leave.state.members.get(key(2))?.status).toBe('up');
    expect(leave.askAuthors.size).toBe(0);
  });

  it("lets the leader take a member's own leave from that member, and ask the member when relayed", () => {
    const asLeader = ctx(3, { selfKey: key(1) });
    expect(admitGossip(local, state([rec(3, 'leaving')]), asLeader).heldBack).toBe(0);
    expect([...admitGossip(local, state([rec(3, 'leaving')]), ctx(4, { selfKey: key(1) })).askAuthors]).toEqual([
      [key(3), new Set([key(3)])],
    ]);
  });

  it('relays what a join allows and harmless forward moves, not an invented member beyond joining', () => {
    const joining = { ...rec(9, 'joining'), upNumber: 0 };
    expect(admitGossip(local, state([...local.members.values(), joining]), ctx(4)).heldBack).toBe(0);
    const fakeUp = admitGossip(local, state([rec(9, 'up')]), ctx(4));
    expect(fakeUp.state.members.has(key(9))).toBe(false);
    expect(admitGossip(local, state([rec(9, 'up')]), ctx(1)).heldBack).toBe(0);
    const withJoining = state([rec(1), rec(2), rec(3), { ...rec(4, 'joining'), upNumber: 0 }]);
    expect(admitGossip(withJoining, state([rec(4, 'up')]), ctx(3)).heldBack).toBe(0);
  });

  it('takes tombstones of live members only from the leader', () => {
    const incoming = state(
      [rec(1), rec(2)],
      [],
      [
        [3, 5],
        [4, 5],
      ],
    );
    expect(admitGossip(local, incoming, ctx(4)).state.tombstones.size).toBe(0);
    expect(admitGossip(local, incoming, ctx(1)).state.tombstones.size).toBe(2);
    expect(
      admitGossip(state([rec(1), rec(2), rec(3, 'removed')]), state([rec(2)], [], [[3, 5]]), ctx(4)).state.tombstones
        .size,
    ).toBe(1);
  });

  it("takes a row from its observer, holds a relayed one back in a small cluster, and never takes this node's own", () => {
    expect(admitGossip(local, state([rec(3)], [[3, 1, [4]]]), ctx(3)).heldBack).toBe(0);
    const relayed = admitGossip(local, state([rec(3)], [[3, 1, [4]]]), ctx(4));
    expect(relayed.state.reachability?.has(key(3))).toBe(false);
    expect([...relayed.askAuthors]).toEqual([[key(3), new Set([key(3)])]]);
    expect(admitGossip(local, state([rec(3)], [[3, 1, [4]]]), ctx(4, { relayedRows: true })).heldBack).toBe(0);
    expect(
      admitGossip(local, state([rec(3)], [[3, 1, [4]]]), ctx(4, { isUnreachable: (k) => k === key(3) })).heldBack,
    ).toBe(0);
    const own = admitGossip(local, state([rec(2)], [[2, 7, [1, 3, 4]]]), ctx(1));
    expect(own.state.reachability?.has(key(2))).toBe(false);
    expect(own.ownRowClaim).toBe(7);
  });

  it('bounds how far one message moves a row version, even from its observer', () => {
    const held = state([rec(1), rec(2), rec(3)], [[3, 10, []]]);
    expect(admitGossip(held, state([rec(3)], [[3, 10 + MAX_ROW_STEP, [1]]]), ctx(3)).heldBack).toBe(0);
    const far = admitGossip(held, state([rec(3)], [[3, Number.MAX_SAFE_INTEGER, [1, 2]]]), ctx(3));
    expect(far.state.reachability?.get(key(3))?.version).toBe(10);
    expect(admitGossip(held, state([rec(2)], [[2, Number.MAX_SAFE_INTEGER, [1]]]), ctx(1)).ownRowClaim).toBeUndefined();
  });
});
