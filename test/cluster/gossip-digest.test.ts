// What keeps gossip small at scale: the status hash (equal exactly when the content and tombstones are),
// the seen marks as a bitset (a round trip, and refused when it cannot be the hashed content's), and deltas
// (merging a change's delta gives the change, whatever else the receiver holds).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  keyOf,
  mergeGossip,
  stateDigest,
  updateMembers,
  type GossipState,
} from '../../src/cluster/membership/gossip.js';
import {
  deltaOf,
  isUrgent,
  knowsMoreSeen,
  onlyRowOf,
  seenBits,
  sortedKeys,
  statusHash,
  withSeenBits,
} from '../../src/cluster/membership/gossip-digest.js';
import { parseMessage } from '../../src/protocol.js';
import { record, stateArb } from './gossip-arbitraries.js';

const withSeen = (state: GossipState, pick: (i: number) => boolean): GossipState => ({
  ...state,
  seen: new Set(sortedKeys(state.members).filter((_, i) => pick(i))),
});

describe('gossip status hash', () => {
  it('is equal exactly when content and tombstones are, whoever has seen the state', () => {
    fc.assert(
      fc.property(stateArb, stateArb, fc.func(fc.boolean()), (a, b, pick) => {
        const same =
          stateDigest(a) === stateDigest(b) &&
          [...a.tombstones.keys()].sort().join() === [...b.tombstones.keys()].sort().join();
        expect(statusHash(a) === statusHash(b)).toBe(same);
        expect(statusHash(withSeen(a, pick))).toBe(statusHash(a));
      }),
    );
  });
});

describe('seen marks as a bitset', () => {
  it('round-trips, and adds only what the other side has seen', () => {
    fc.assert(
      fc.property(stateArb, fc.func(fc.boolean()), fc.func(fc.boolean()), (state, pickA, pickB) => {
        const a = withSeen(state, pickA);
        const b = withSeen(state, pickB);
        const merged = withSeenBits(a, seenBits(b));
        expect(merged).toBeDefined();
        expect([...merged!.seen].sort()).toEqual([...new Set([...a.seen, ...b.seen])].sort());
        // Nothing new: the same object, so no commit and no event follows.
        expect(withSeenBits(merged!, seenBits(b))).toBe(merged);
        expect(knowsMoreSeen(a, seenBits(b))).toBe([...a.seen].some((key) => !b.seen.has(key)));
      }),
    );
  });

  it('refuses marks that cannot be over the hashed content: wrong length, or a bit past the last member', () => {
    const members = new Map([1, 2, 3].map((port) => [keyOf(record(port, 'up')), record(port, 'up')] as const));
    const state: GossipState = { members, seen: new Set(), tombstones: new Map() };
    expect(withSeenBits(state, new Uint8Array([0b111]))?.seen.size).toBe(3);
    expect(withSeenBits(state, new Uint8Array([0b1000]))).toBeUndefined();
    expect(withSeenBits(state, new Uint8Array([1, 0]))).toBeUndefined();
    expect(withSeenBits(state, new Uint8Array([]))).toBeUndefined();
  });
});

describe('gossip deltas', () => {
  it('merged into any state that had `before`, give what merging `after` gives', () => {
    fc.assert(
      fc.property(stateArb, stateArb, stateArb, (base, change, other) => {
        const before = base;
        const after = mergeGossip(before, change, 'x');
        const receiver = mergeGossip(other, before, 'y');
        const viaDelta = mergeGossip(receiver, deltaOf(before, after), 'y');
        const viaFull = mergeGossip(receiver, after, 'y');
        expect(stateDigest(viaDelta)).toBe(stateDigest(viaFull));
        expect([...viaDelta.tombstones.keys()].sort()).toEqual([...viaFull.tombstones.keys()].sort());
        expect(deltaOf(before, after).seen.size).toBe(0);
      }),
    );
  });

  it('is empty for no change, and holds only the changed records', () => {
    const members = new Map(
      [1, 2, 3].map((port) => [keyOf(record(port, 'up', port)), record(port, 'up', port)] as const),
    );
    const state: GossipState = { members, seen: new Set(), tombstones: new Map() };
    expect(deltaOf(state, state).members.size).toBe(0);
    const changed = updateMembers(state, [{ ...record(2, 'up', 2), status: 'leaving' }], 'x');
    expect([...deltaOf(state, changed).members.values()].map((r) => [r.address.port, r.status])).toEqual([
      [2, 'leaving'],
    ]);
  });

  it('calls a leave, a downing, a reachability row or a tombstone urgent, and a join or a move to Up not', () => {
    const members = new Map([1, 2].map((port) => [keyOf(record(port, 'up', port)), record(port, 'up', port)] as const));
    const state: GossipState = { members, seen: new Set(), tombstones: new Map() };
    const change = (r: ReturnType<typeof record>): GossipState => updateMembers(state, [r], 'x');
    expect(isUrgent(state, change(record(3, 'joining')))).toBe(false);
    expect(isUrgent(state, change(record(3, 'up', 3)))).toBe(false);
    expect(isUrgent(state, change(record(2, 'leaving', 2)))).toBe(true);
    expect(isUrgent(state, change({ ...record(2, 'down', 2), downedAtMs: 5 }))).toBe(true);
    const k1 = keyOf(record(1, 'up'));
    const k2 = keyOf(record(2, 'up'));
    expect(isUrgent(state, { ...state, reachability: new Map([[k1, { version: 1, subjects: new Set([k2]) }]]) })).toBe(
      true,
    );
    expect(isUrgent(state, { ...state, tombstones: new Map([['gone#i', 1]]) })).toBe(true);
  });
});

describe("a change that is one observer's row alone", () => {
  const members = new Map(
    [1, 2, 3].map((port) => [keyOf(record(port, 'up', port)), record(port, 'up', port)] as const),
  );
  const state: GossipState = { members, seen: new Set(), tombstones: new Map() };
  const [k1, k2, k3] = [...members.keys()] as [string, string, string];
  const row = (version: number, ...subjects: string[]) => ({ version, subjects: new Set(subjects) });
  const withRows = (...rows: Array<[string, ReturnType<typeof row>]>): GossipState => ({
    ...state,
    reachability: new Map(rows),
  });

  it("is the author's own row when nothing else changed", () => {
    expect(onlyRowOf(state, withRows([k1, row(1, k3)]), k1)).toBe(true);
    expect(onlyRowOf(withRows([k1, row(1, k3)]), withRows([k1, row(2)]), k1)).toBe(true);
  });

  it("is not when another observer's row, a record or a tombstone changed too, or nothing did", () => {
    expect(onlyRowOf(state, withRows([k2, row(1, k3)]), k1)).toBe(false);
    expect(onlyRowOf(state, withRows([k1, row(1, k3)], [k2, row(1, k3)]), k1)).toBe(false);
    const downed = updateMembers(withRows([k1, row(1, k3)]), [{ ...record(3, 'down', 3), downedAtMs: 5 }], 'x');
    expect(onlyRowOf(state, downed, k1)).toBe(false);
    expect(onlyRowOf(state, { ...withRows([k1, row(1, k3)]), tombstones: new Map([['gone#i', 1]]) }, k1)).toBe(false);
    expect(onlyRowOf(withRows([k1, row(1, k3)]), withRows([k1, row(1, k3)]), k1)).toBe(false);
  });
});

describe('GossipStatus on the wire', () => {
  const status = (fields: Record<string, unknown>): unknown =>
    parseMessage({ type: 'GossipStatus', hash: 'abc', seen: new Uint8Array([1]), ...fields });

  it('accepts a hash and a bitset', () => {
    expect(status({})).toMatchObject({ type: 'GossipStatus', hash: 'abc' });
  });

  it.each<[string, Record<string, unknown>]>([
    ['an empty hash', { hash: '' }],
    ['an oversized hash', { hash: 'x'.repeat(65) }],
    ['a hash that is not text', { hash: 7 }],
    ['seen marks that are not bytes', { seen: [1, 0, 1] }],
    ['seen marks for more than 10,000 members', { seen: new Uint8Array(1_251) }],
  ])('drops %s', (_, fields) => {
    expect(status(fields)).toBeUndefined();
  });
});
