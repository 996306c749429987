// Leader election, convergence and the leader's status transitions as pure functions.
import { describe, expect, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import { keyOf, type GossipState, type MemberRecord } from '../../src/cluster/membership/gossip.js';
import { isConverged, leaderActions, leaderOf } from '../../src/cluster/membership/leader-actions.js';
import type { MemberStatus } from '../../src/cluster/member.js';

function record(port: number, status: MemberStatus, upNumber = 0): MemberRecord {
  return { address: new NodeAddress('sys', 'h', port), incarnation: 'i', status, appVersion: '1', roles: [], upNumber };
}

function state(records: MemberRecord[], seenPorts: number[] = records.map((r) => r.address.port)): GossipState {
  return {
    members: new Map(records.map((r) => [keyOf(r), r])),
    seen: new Set(records.filter((r) => seenPorts.includes(r.address.port)).map(keyOf)),
    tombstones: new Map(),
  };
}

const key = (port: number): string => `sys@h:${port}#i`;
const none = new Set<string>();

describe('leader actions', () => {
  it('elects the lowest reachable up member, falling back to joining, then exiting members', () => {
    const s = state([record(3, 'up', 1), record(2, 'up', 2), record(1, 'joining')]);
    expect(leaderOf(s, none)?.address.port).toBe(2);
    expect(leaderOf(s, new Set([key(2)]))?.address.port).toBe(3);
    expect(leaderOf(state([record(5, 'joining'), record(4, 'joining')]), none)?.address.port).toBe(4);
    expect(leaderOf(state([record(5, 'exiting', 1)]), none)?.address.port).toBe(5);
  });

  it('needs every live member to have seen the state, ignoring down/removed and unreachable exiting members', () => {
    const records = [record(1, 'up', 1), record(2, 'up', 2), record(3, 'down', 3), record(4, 'exiting', 4)];
    expect(isConverged(state(records, [1, 2, 4]), none)).toBe(true);
    expect(isConverged(state(records, [1, 4]), none)).toBe(false);
    expect(isConverged(state(records, [1, 2]), new Set([key(4)]))).toBe(true);
    expect(isConverged(state(records, [1, 2, 4]), new Set([key(2)]))).toBe(false);
  });

  it('moves each member one step on convergence and numbers new Up members in address order', () => {
    const s = state([
      record(1, 'up', 1),
      record(5, 'joining'),
      record(4, 'weakly-up'),
      record(2, 'leaving', 2),
      record(3, 'exiting', 3),
      record(6, 'down', 0),
    ]);
    const changes = Object.fromEntries(
      leaderActions({
        state: s,
        selfKey: key(1),
        unreachable: none,
        nowMs: 0,
        joiningSinceMs: new Map(),
        weaklyUpAfterMs: 0,
      }).map((r) => [r.address.port, `${r.status}/${r.upNumber}`]),
    );
    expect(changes).toEqual({ 2: 'exiting/2', 3: 'removed/3', 4: 'up/4', 5: 'up/5', 6: 'removed/0' });
  });

  it('does nothing when self is not the leader or the state has not converged', () => {
    const s = state([record(1, 'up', 1), record(2, 'joining')], [1]);
    const input = {
      state: s,
      unreachable: none,
      nowMs: 0,
      joiningSinceMs: new Map<string, number>(),
      weaklyUpAfterMs: 0,
    };
    expect(leaderActions({ ...input, selfKey: key(1) })).toEqual([]);
    expect(
      leaderActions({ ...input, state: state([record(1, 'up', 1), record(2, 'joining')]), selfKey: key(2) }),
    ).toEqual([]);
  });

  it('makes long-joining members weakly-up while an unreachable member blocks convergence', () => {
    const s = state([record(1, 'up', 1), record(2, 'up', 2), record(3, 'joining')]);
    const input = {
      state: s,
      selfKey: key(1),
      unreachable: new Set([key(2)]),
      joiningSinceMs: new Map([[key(3), 0]]),
      weaklyUpAfterMs: 7_000,
    };
    expect(leaderActions({ ...input, nowMs: 6_999 })).toEqual([]);
    expect(leaderActions({ ...input, nowMs: 7_000 }).map((r) => `${r.address.port}:${r.status}`)).toEqual([
      '3:weakly-up',
    ]);
    expect(leaderActions({ ...input, nowMs: 7_000, weaklyUpAfterMs: 0 })).toEqual([]);
  });
});
