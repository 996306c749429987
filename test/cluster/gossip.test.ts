// Membership gossip merge: a join-semilattice, so any delivery order converges; and the seen-set rules.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import {
  contentDigest,
  fromWire,
  keyOf,
  mergeGossip,
  mergeRecord,
  pruneMembers,
  stateDigest,
  toWire,
  updateMembers,
  type GossipState,
  type MemberRecord,
} from '../../src/cluster/membership/gossip.js';
import { parseMessage } from '../../src/protocol.js';
import { record, recordArb, stateArb, STATUSES } from './gossip-arbitraries.js';

const digest = (s: GossipState): string =>
  `${stateDigest(s)}\n${[...s.tombstones]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, at]) => `${key}@${at}`)
    .join(',')}`;

describe('gossip merge', () => {
  it('is commutative, associative and idempotent on member content and the reachability table', () => {
    fc.assert(
      fc.property(stateArb, stateArb, stateArb, (a, b, c) => {
        expect(digest(mergeGossip(a, b, 'x'))).toBe(digest(mergeGossip(b, a, 'x')));
        expect(digest(mergeGossip(mergeGossip(a, b, 'x'), c, 'x'))).toBe(
          digest(mergeGossip(a, mergeGossip(b, c, 'x'), 'x')),
        );
        expect(digest(mergeGossip(a, a, 'x'))).toBe(digest(a));
      }),
    );
  });

  it('never moves a status backwards', () => {
    const merged = mergeRecord(record(1, 'down'), record(1, 'up', 3));
    expect(merged.status).toBe('down');
    expect(merged.upNumber).toBe(3);
    expect(mergeRecord(record(1, 'up', 2), record(1, 'up', 5)).upNumber).toBe(2);
  });

  it('keeps the earliest down decision whichever record carries it, and gossips it', () => {
    const downedByA = { ...record(1, 'down', 3), downedAtMs: 2_000 };
    const downedByB = { ...record(1, 'down', 3), downedAtMs: 1_500 };
    const removed = record(1, 'removed', 3);
    expect(mergeRecord(downedByA, downedByB).downedAtMs).toBe(1_500);
    expect(mergeRecord(downedByB, downedByA).downedAtMs).toBe(1_500);
    // A later status from a node that did not see the decision keeps the decision's time.
    expect(mergeRecord(removed, downedByA)).toEqual({ ...removed, downedAtMs: 2_000 });
    expect(mergeRecord(record(1, 'up', 3), record(1, 'up', 3)).downedAtMs).toBeUndefined();
    const state = (r: MemberRecord, seen = 'A'): GossipState => ({
      members: new Map([[keyOf(r), r]]),
      seen: new Set([seen]),
      tombstones: new Map(),
    });
    // A record differing only in downedAtMs is new content for the side that had the later time.
    expect([...mergeGossip(state(downedByA, 'A'), state(downedByB, 'B'), 'self').seen].sort()).toEqual(['B', 'self']);
    expect(fromWire(toWire(state(downedByB))).members.get(keyOf(downedByB))?.downedAtMs).toBe(1_500);
    expect('downedAtMs' in toWire(state(removed)).members[0]!).toBe(false);
  });

  it('keeps seen only for unchanged content', () => {
    const a: GossipState = {
      members: new Map([['k', record(1, 'up', 1)]]),
      seen: new Set(['A', 'B']),
      tombstones: new Map(),
    };
    const same: GossipState = { members: a.members, seen: new Set(['C']), tombstones: new Map() };
    expect([...mergeGossip(a, same, 'self').seen].sort()).toEqual(['A', 'B', 'C', 'self']);
    const newer: GossipState = {
      members: new Map([['k', record(1, 'leaving', 1)]]),
      seen: new Set(['C']),
      tombstones: new Map(),
    };
    expect([...mergeGossip(a, newer, 'self').seen].sort()).toEqual(['C', 'self']);
    const other: GossipState = {
      members: new Map([['j', record(2, 'up', 2)]]),
      seen: new Set(['D']),
      tombstones: new Map(),
    };
    expect([...mergeGossip(a, other, 'self').seen]).toEqual(['self']);
  });

  it('resets seen on an own change, and leaves the state alone when nothing changes', () => {
    const r = record(1, 'up', 1);
    const state: GossipState = {
      members: new Map([[keyOf(r), r]]),
      seen: new Set(['A', 'self']),
      tombstones: new Map(),
    };
    expect(updateMembers(state, [r], 'self')).toBe(state);
    const changed = updateMembers(state, [{ ...r, status: 'leaving' }], 'self');
    expect([...changed.seen]).toEqual(['self']);
    expect(changed.members.get(keyOf(r))?.status).toBe('leaving');
  });

  it('lets a tombstone win over its record in any order, and never brings the record back', () => {
    const r = record(1, 'up', 1);
    const withRecord: GossipState = { members: new Map([[keyOf(r), r]]), seen: new Set(['A']), tombstones: new Map() };
    const withTombstone: GossipState = {
      members: new Map(),
      seen: new Set(['B']),
      tombstones: new Map([[keyOf(r), 5]]),
    };
    for (const merged of [
      mergeGossip(withRecord, withTombstone, 'self'),
      mergeGossip(withTombstone, withRecord, 'self'),
    ]) {
      expect(merged.members.has(keyOf(r))).toBe(false);
      expect(merged.tombstones.get(keyOf(r))).toBe(5);
    }
    expect(updateMembers(withTombstone, [r], 'self')).toBe(withTombstone);
  });

  it('prunes records into tombstones (only self has seen the result) and expires old tombstones', () => {
    const r = record(1, 'removed', 1);
    const keep = record(2, 'up', 2);
    const state: GossipState = {
      members: new Map([
        [keyOf(r), r],
        [keyOf(keep), keep],
      ]),
      seen: new Set(['A', 'self']),
      tombstones: new Map([
        ['old#x', 10],
        ['recent#y', 900],
      ]),
    };
    const pruned = pruneMembers(state, [keyOf(r), 'unknown#z'], 1_000, 500, 'self');
    expect([...pruned.members.keys()]).toEqual([keyOf(keep)]);
    expect([...pruned.seen]).toEqual(['self']);
    expect(Object.fromEntries(pruned.tombstones)).toEqual({ 'recent#y': 900, [keyOf(r)]: 1_000 });
    const expiredOnly = pruneMembers(pruned, [], 2_000, 950, 'self');
    expect(expiredOnly.members).toBe(pruned.members);
    expect([...expiredOnly.tombstones.keys()]).toEqual([keyOf(r)]);
    expect(pruneMembers(expiredOnly, [], 2_000, 950, 'self')).toBe(expiredOnly);
  });

  it('round-trips through the wire form', () => {
    const r = { ...record(1, 'up', 1), roles: ['dad'] };
    const state: GossipState = {
      members: new Map([[keyOf(r), r]]),
      seen: new Set([keyOf(r)]),
      tombstones: new Map([['gone#1', 7]]),
    };
    const back = fromWire(toWire(state));
    expect(digest(back)).toBe(digest(state));
    expect(back.members.get(keyOf(r))?.roles).toEqual(['dad']);
    expect([...back.seen]).toEqual([keyOf(r)]);
    expect([...back.tombstones]).toEqual([['gone#1', 7]]);
  });

  it('round-trips any state (reachability table included) through the wire form, as parsed at the gate', () => {
    fc.assert(
      fc.property(stateArb, (state) => {
        const wire = toWire(state);
        const parsed = parseMessage({ type: 'Gossip', gossip: wire });
        expect(parsed?.type).toBe('Gossip');
        expect(digest(fromWire(parsed?.type === 'Gossip' ? parsed.gossip : wire))).toBe(digest(state));
      }),
    );
  });

  it('resets seen when only the reachability table changed, and spreads it like a status change', () => {
    const a = record(1, 'up', 1);
    const b = record(2, 'up', 2);
    const members = new Map([
      [keyOf(a), a],
      [keyOf(b), b],
    ]);
    const local: GossipState = { members, seen: new Set([keyOf(a), keyOf(b)]), tombstones: new Map() };
    const incoming: GossipState = {
      members,
      seen: new Set(),
      tombstones: new Map(),
      reachability: new Map([[keyOf(b), { version: 1, subjects: new Set([keyOf(a)]) }]]),
    };
    const merged = mergeGossip(local, incoming, keyOf(a));
    // Same members, new row: what local's seen set vouched for is no longer the content.
    expect([...merged.seen]).toEqual([keyOf(a)]);
    expect(merged.reachability?.get(keyOf(b))?.subjects.has(keyOf(a))).toBe(true);
    expect([...mergeGossip(incoming, local, keyOf(a)).seen]).toEqual([keyOf(a)]);
    const fromLocalOnly = mergeGossip(local, { ...local, seen: new Set() }, keyOf(a));
    expect(stateDigest(fromLocalOnly)).toBe(stateDigest(local));
    expect(stateDigest(merged)).not.toBe(stateDigest(local));
  });
});
