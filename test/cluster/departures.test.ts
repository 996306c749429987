// Departures: what a node remembers of members that left its view after reaching Up (removed, or pruned into a
// tombstone), for a new coordinator to date the margin of older members gone from the view. Pure: states in,
// departures out; then a cluster on an in-memory network and fake time, whose commits feed it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import { Departures } from '../../src/cluster/membership/departures.js';
import { keyOf, pruneMembers, type GossipState, type MemberRecord } from '../../src/cluster/membership/gossip.js';
import { MEMBER_STATUSES, type MemberStatus } from '../../src/cluster/member.js';
import { MemoryNetwork } from '../../src/cluster/transport/memory-transport.js';
import { useFakeTime } from '../support/fake-time.js';
import { address, advanceUntil, allUp, createNode, statusOf, type TestNode } from './cluster-harness.js';

function record(port: number, status: MemberStatus, upNumber: number, downedAtMs?: number): MemberRecord {
  const base = { address: new NodeAddress('sys', 'h', port), incarnation: 'i', status, appVersion: '1', roles: [] };
  return downedAtMs === undefined ? { ...base, upNumber } : { ...base, upNumber, downedAtMs };
}

function state(records: MemberRecord[], tombstones: Array<[string, number]> = []): GossipState {
  return { members: new Map(records.map((r) => [keyOf(r), r])), seen: new Set(), tombstones: new Map(tombstones) };
}

const DAY = 86_400_000;

describe('Departures', () => {
  it('records a member when it is removed, with its decision time, and once only', () => {
    const departures = new Departures(DAY);
    const before = state([record(1, 'up', 1), record(2, 'down', 2, 500)]);
    const removed = state([record(1, 'up', 1), record(2, 'removed', 2, 500)]);
    departures.observe(before, removed, 1_000);
    departures.observe(removed, state([record(1, 'up', 1), record(2, 'removed', 2, 500), record(3, 'up', 3)]), 9_000);
    expect(departures.list()).toEqual([
      { address: new NodeAddress('sys', 'h', 2), upNumber: 2, downedAtMs: 500, removedAtMs: 1_000 },
    ]);
  });

  it('records a member pruned into a tombstone, dated when this node saw it go', () => {
    const departures = new Departures(DAY);
    const before = state([record(1, 'up', 1), record(2, 'leaving', 2)]);
    departures.observe(before, pruneMembers(before, [keyOf(record(2, 'leaving', 2))], 7_000, 0, 'x'), 8_000);
    expect(departures.list()).toEqual([{ address: new NodeAddress('sys', 'h', 2), upNumber: 2, removedAtMs: 8_000 }]);
  });

  it('ignores members that never reached Up, and states whose member map did not change', () => {
    const departures = new Departures(DAY);
    departures.observe(state([record(4, 'joining', 0)]), state([record(4, 'removed', 0)]), 1);
    const same = state([record(5, 'removed', 5)]);
    departures.observe(same, { ...same, seen: new Set(['x']) }, 2);
    expect(departures.list()).toEqual([]);
  });

  it('forgets departures older than it keeps them, and the oldest past its limit', () => {
    const departures = new Departures(1_000, 2);
    const gone = (port: number, at: number): void =>
      departures.observe(state([]), state([record(port, 'removed', port)]), at);
    gone(1, 0);
    gone(2, 500);
    gone(3, 600);
    expect(departures.list().map((d) => d.upNumber)).toEqual([2, 3]);
    // 4 is over the limit of 2 (2 goes), and 3 is older than 1,000 ms.
    gone(4, 1_650);
    expect(departures.list().map((d) => d.upNumber)).toEqual([4]);
  });

  it('over any sequence of states: exactly the members seen gone after reaching Up, dated when first seen', () => {
    const statuses = fc.constantFrom(...MEMBER_STATUSES);
    const member = fc.record({ port: fc.integer({ min: 1, max: 6 }), status: statuses, up: fc.integer({ max: 6 }) });
    const step = fc.array(member, { maxLength: 6 });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 8 }), (steps) => {
        const departures = new Departures(DAY);
        let previous = state([]);
        const firstGoneAt = new Map<string, number>();
        steps.forEach((records, at) => {
          const next = state(records.map((r) => record(r.port, r.status, r.up)));
          departures.observe(previous, next, at);
          const gone = [
            ...[...previous.members].filter(([key, r]) => !next.members.has(key) && r.upNumber > 0),
            ...[...next.members].filter(([, r]) => r.status === 'removed' && r.upNumber > 0),
          ];
          for (const [key] of gone) if (!firstGoneAt.has(key)) firstGoneAt.set(key, at);
          previous = next;
        });
        // Exactly the members seen gone after reaching Up, each dated when first seen gone (never earlier).
        const list = departures.list();
        expect(list.map((d) => [`sys@h:${d.address.port}#i`, d.removedAtMs]).sort()).toEqual([...firstGoneAt].sort());
        for (const d of list) expect(d.upNumber).toBeGreaterThan(0);
      }),
    );
  });
});

describe('Cluster.departed', () => {
  let nodes: TestNode[] = [];
  useFakeTime(() => {
    for (const n of nodes) n.cluster.shutdown();
    nodes = [];
  });

  it('keeps a crashed member downed and removed, with its decision time, after its record is pruned', async () => {
    const network = new MemoryNetwork({ signalConnectionLoss: true });
    nodes = [1, 2, 3].map((i) => createNode(network, i, { removedRetentionMs: 5_000 }));
    for (const node of nodes) node.cluster.start();
    await advanceUntil(() => allUp(nodes), 'all up');
    const [n1, , n3] = nodes as [TestNode, TestNode, TestNode];
    const upNumber = n1.cluster.members().find((m) => m.address.equals(address(3)))?.upNumber;
    expect(n1.cluster.departed()).toEqual([]);
    n3.cluster.shutdown();
    await n3.transport.close();
    await advanceUntil(() => statusOf(n1.cluster, address(3)) === undefined, 'removed on n1');
    const [gone] = n1.cluster.departed();
    if (gone?.downedAtMs === undefined) throw new Error(`no dated departure: ${JSON.stringify(gone)}`);
    expect(gone.address.equals(address(3))).toBe(true);
    expect(gone.upNumber).toBe(upNumber);
    expect(gone.removedAtMs).toBeGreaterThanOrEqual(gone.downedAtMs);
    // Pruned into a tombstone: the view and the gossip forget it, the departure stays.
    await advanceUntil(() => n1.cluster.gossipSize().tombstones === 1, 'pruned on n1', 20_000);
    expect(n1.cluster.departed()).toEqual([gone]);
  });
});
