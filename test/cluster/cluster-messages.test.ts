// Validation of cluster messages at the protocol gate, and the member orderings nodes must agree on.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import type { MemberInfo } from '../../src/cluster/member.js';
import { compareAddresses, compareByAge, oldestUpMember } from '../../src/cluster/member-order.js';
import { MAX_ASK_KEYS } from '../../src/cluster/membership/messages.js';
import { parseMessage } from '../../src/protocol.js';

const member = { address: 'sys@h:1', incarnation: 'i', status: 'up', appVersion: '1.0.0', roles: ['a'], upNumber: 1 };

describe('cluster messages', () => {
  it("carry a heartbeat's clock fields when they are clocks, and drop any that is not without dropping the heartbeat", () => {
    const ack = { type: 'HeartbeatAck', sequence: 2, incarnation: 'i' };
    expect(parseMessage({ ...ack, echoMs: 1_700_000_000_000, atMs: 1_700_000_000_005, offsetMs: -3 })).toEqual({
      ...ack,
      echoMs: 1_700_000_000_000,
      atMs: 1_700_000_000_005,
      offsetMs: -3,
    });
    for (const hostile of ['soon', Number.POSITIVE_INFINITY, Number.NaN, 1e20, -1e20, { ms: 1 }, null]) {
      expect(parseMessage({ ...ack, echoMs: hostile, atMs: hostile, offsetMs: hostile })).toEqual(ack);
      expect(parseMessage({ type: 'Heartbeat', sequence: 1, incarnation: 'i', sentAtMs: hostile })).toEqual({
        type: 'Heartbeat',
        sequence: 1,
        incarnation: 'i',
      });
    }
  });

  it('ignore fields they do not know, at the top, in the gossip and in a member record (issue 35)', () => {
    const extra = fc.dictionary(
      fc.string({ minLength: 1, maxLength: 10 }).map((key) => `later_${key}`),
      fc.oneof(fc.integer(), fc.string({ maxLength: 16 }), fc.boolean()),
      { maxKeys: 3 },
    );
    const bytes = new Uint8Array([1, 2, 3]);
    const messages: Array<Record<string, unknown>> = [
      { type: 'Heartbeat', sequence: 1, incarnation: 'i' },
      { type: 'HeartbeatAck', sequence: 2, incarnation: 'i' },
      { type: 'PlacementUpdate', update: bytes },
      { type: 'PlacementSyncStep1', stateVector: bytes },
    ];
    fc.assert(
      fc.property(fc.constantFrom(...messages), extra, (message, fields) => {
        expect(parseMessage({ ...fields, ...message })).toEqual(parseMessage(message));
      }),
    );
    fc.assert(
      fc.property(extra, extra, extra, (top, inGossip, inMember) => {
        const gossip = { members: [{ ...inMember, ...member }], seen: ['sys@h:1#i'] };
        const later = parseMessage({ ...top, type: 'Gossip', gossip: { ...inGossip, ...gossip } });
        expect(later).toEqual(parseMessage({ type: 'Gossip', gossip: { members: [member], seen: ['sys@h:1#i'] } }));
      }),
    );
  });

  it('accepts well-formed messages of every cluster type', () => {
    expect(parseMessage({ type: 'Heartbeat', sequence: 1, incarnation: 'i' })).toEqual({
      type: 'Heartbeat',
      sequence: 1,
      incarnation: 'i',
    });
    expect(parseMessage({ type: 'HeartbeatAck', sequence: 0, incarnation: 'i' })?.type).toBe('HeartbeatAck');
    expect(parseMessage({ type: 'Join', incarnation: 'i', appVersion: '1', roles: [] })?.type).toBe('Join');
    expect(parseMessage({ type: 'Gossip', gossip: { members: [member], seen: ['sys@h:1#i'] } })).toEqual({
      type: 'Gossip',
      gossip: { members: [member], seen: ['sys@h:1#i'] },
    });
    const downed = { ...member, status: 'down', downedAtMs: 1_700_000_000_123 };
    expect(
      parseMessage({ type: 'Gossip', gossip: { members: [downed, { ...member, downedAtMs: 0 }], seen: [] } }),
    ).toEqual({
      type: 'Gossip',
      gossip: { members: [downed, { ...member, downedAtMs: 0 }], seen: [] },
    });
    // Older nodes send no downedAtMs (the members above): still well-formed, and none is made up.
    const old = parseMessage({ type: 'Gossip', gossip: { members: [member], seen: [] } });
    expect(old?.type === 'Gossip' && 'downedAtMs' in old.gossip.members[0]!).toBe(false);
    const tombstones = [['sys@h:2#old', 1_700_000_000_000]];
    expect(parseMessage({ type: 'Gossip', gossip: { members: [member], seen: [], tombstones } })).toEqual({
      type: 'Gossip',
      gossip: { members: [member], seen: [], tombstones },
    });
    // Reachability rows name members by index: [observer, version, subjects].
    const two = [member, { ...member, address: 'sys@h:2' }];
    const reachability = [
      [0, 3, [1]],
      [1, 1, []],
    ];
    expect(parseMessage({ type: 'Gossip', gossip: { members: two, seen: [], reachability } })).toEqual({
      type: 'Gossip',
      gossip: { members: two, seen: [], reachability },
    });
    expect(parseMessage({ type: 'GossipAsk', keys: ['sys@h:1#i'] })).toEqual({
      type: 'GossipAsk',
      keys: ['sys@h:1#i'],
    });
  });

  const two = [member, { ...member, address: 'sys@h:2' }];
  it.each([
    ['reachability that is not an array', { reachability: { 0: [1] } }],
    [
      'more reachability rows than members',
      {
        reachability: [
          [0, 1, []],
          [1, 1, []],
          [0, 2, []],
        ],
      },
    ],
    ['a row that is not a triple', { reachability: [[0, 1]] }],
    ['an observer index past the members', { reachability: [[2, 1, [0]]] }],
    ['a subject index past the members', { reachability: [[0, 1, [5]]] }],
    ['a negative subject index', { reachability: [[0, 1, [-1]]] }],
    ['a fractional version', { reachability: [[0, 1.5, [1]]] }],
    ['a version that is a string', { reachability: [[0, '1', [1]]] }],
    ['more subjects than members', { reachability: [[0, 1, [1, 1, 1]]] }],
  ])('rejects gossip with %s', (_name, extra) => {
    expect(parseMessage({ type: 'Gossip', gossip: { members: two, seen: [], ...extra } })).toBeUndefined();
  });

  it.each([
    ['a negative sequence', { type: 'Heartbeat', sequence: -1, incarnation: 'i' }],
    ['a missing incarnation', { type: 'HeartbeatAck', sequence: 1 }],
    ['roles that are not strings', { type: 'Join', incarnation: 'i', appVersion: '1', roles: [1] }],
    ['an invalid member address', { type: 'Gossip', gossip: { members: [{ ...member, address: 'nope' }], seen: [] } }],
    ['an unknown status', { type: 'Gossip', gossip: { members: [{ ...member, status: 'zombie' }], seen: [] } }],
    ['a fractional upNumber', { type: 'Gossip', gossip: { members: [{ ...member, upNumber: 1.5 }], seen: [] } }],
    ['a negative downedAtMs', { type: 'Gossip', gossip: { members: [{ ...member, downedAtMs: -1 }], seen: [] } }],
    ['a fractional downedAtMs', { type: 'Gossip', gossip: { members: [{ ...member, downedAtMs: 1.5 }], seen: [] } }],
    [
      'an infinite downedAtMs',
      { type: 'Gossip', gossip: { members: [{ ...member, downedAtMs: Infinity }], seen: [] } },
    ],
    ['a NaN downedAtMs', { type: 'Gossip', gossip: { members: [{ ...member, downedAtMs: NaN }], seen: [] } }],
    [
      'a downedAtMs that is a string',
      { type: 'Gossip', gossip: { members: [{ ...member, downedAtMs: '5' }], seen: [] } },
    ],
    ['a downedAtMs that is null', { type: 'Gossip', gossip: { members: [{ ...member, downedAtMs: null }], seen: [] } }],
    ['a seen list that is not an array', { type: 'Gossip', gossip: { members: [], seen: 'all' } }],
    ['tombstones that are not an array', { type: 'Gossip', gossip: { members: [], seen: [], tombstones: {} } }],
    ['a tombstone without a time', { type: 'Gossip', gossip: { members: [], seen: [], tombstones: [['k#1']] } }],
    [
      'a tombstone with a negative time',
      { type: 'Gossip', gossip: { members: [], seen: [], tombstones: [['k#1', -5]] } },
    ],
    ['a tombstone with an empty key', { type: 'Gossip', gossip: { members: [], seen: [], tombstones: [['', 5]] } }],
    ['an ask of no keys', { type: 'GossipAsk', keys: [] }],
    [
      'an ask of more keys than an answer is bounded by',
      { type: 'GossipAsk', keys: Array.from({ length: MAX_ASK_KEYS + 1 }, (_, i) => `sys@h:1#${i}`) },
    ],
    ['an ask whose key is not text', { type: 'GossipAsk', keys: [5] }],
  ])('rejects %s', (_name, value) => {
    expect(parseMessage(value)).toBeUndefined();
  });
});

describe('member order', () => {
  const a = (port: number, host = 'h'): NodeAddress => new NodeAddress('sys', host, port);
  const info = (port: number, status: MemberInfo['status'], upNumber: number, roles: string[] = []): MemberInfo => ({
    address: a(port),
    status,
    appVersion: '1',
    upNumber,
    reachable: true,
    roles,
  });

  it('orders addresses by host then numeric port', () => {
    expect(compareAddresses(a(9), a(10))).toBeLessThan(0);
    expect(compareAddresses(a(10, 'a'), a(9, 'b'))).toBeLessThan(0);
    expect(compareByAge(info(5, 'up', 1), info(1, 'up', 2))).toBeLessThan(0);
    expect(compareByAge(info(5, 'joining', 0), info(1, 'up', 9))).toBeGreaterThan(0);
  });

  it('finds the oldest Up member, optionally with a role', () => {
    const members = [info(1, 'leaving', 1), info(2, 'up', 3, ['x']), info(3, 'up', 2)];
    expect(oldestUpMember(members)?.address.port).toBe(3);
    expect(oldestUpMember(members, 'x')?.address.port).toBe(2);
    expect(oldestUpMember(members, 'none')).toBeUndefined();
  });
});
