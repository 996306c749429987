// Node attributes: validated in the config, parsed strictly (bounded) at the protocol gate, optional for
// older peers, carried by Join and gossip, kept by the merge, and visible on every member's view.
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import { MAX_ATTRIBUTES, parseAttributeAssignment } from '../../src/cluster/attributes.js';
import { resolveClusterConfig } from '../../src/cluster/membership/config.js';
import { fromWire, keyOf, mergeRecord, toWire, type MemberRecord } from '../../src/cluster/membership/gossip.js';
import { MemoryNetwork } from '../../src/cluster/transport/memory-transport.js';
import { ActorTsError } from '../../src/errors.js';
import { parseMessage } from '../../src/protocol.js';
import { address, advanceUntil, allUp, createNode, type TestNode } from './cluster-harness.js';

const member = { address: 'sys@h:1', incarnation: 'i', status: 'up', appVersion: '1.0.0', roles: [], upNumber: 1 };
const gossipOf = (m: Record<string, unknown>) => ({ type: 'Gossip', gossip: { members: [m], seen: [] } });
const manyAttributes = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));

describe('attributes at the protocol gate', () => {
  it('accepts members and joins with and without attributes', () => {
    const withZone = { ...member, attributes: { zone: 'eu-west', rack: 'r-1.a_2' } };
    const parsed = parseMessage(gossipOf(withZone));
    expect(parsed?.type === 'Gossip' && parsed.gossip.members[0]?.attributes).toEqual({
      rack: 'r-1.a_2',
      zone: 'eu-west',
    });
    const old = parseMessage(gossipOf(member));
    expect(old?.type === 'Gossip' && 'attributes' in old.gossip.members[0]!).toBe(false);
    expect(
      parseMessage({ type: 'Join', incarnation: 'i', appVersion: '1', roles: [], attributes: { zone: 'b' } }),
    ).toEqual({
      type: 'Join',
      incarnation: 'i',
      appVersion: '1',
      roles: [],
      attributes: { zone: 'b' },
    });
    expect(parseMessage(gossipOf({ ...member, attributes: manyAttributes(MAX_ATTRIBUTES) }))).toBeDefined();
  });

  it.each([
    ['more than 32 attributes', manyAttributes(MAX_ATTRIBUTES + 1)],
    ['a key outside the alphabet', { 'zo ne': 'a' }],
    ['an empty key', { '': 'a' }],
    ['an empty value', { zone: '' }],
    ['a value outside the alphabet', { zone: 'a/b' }],
    ['a value over 64 characters', { zone: 'v'.repeat(65) }],
    ['a value that is not a string', { zone: 7 }],
    ['an array', ['zone=a']],
    ['null', null],
  ])('drops a member (and a join) with %s', (_what, attributes) => {
    expect(parseMessage(gossipOf({ ...member, attributes }))).toBeUndefined();
    expect(parseMessage({ type: 'Join', incarnation: 'i', appVersion: '1', roles: [], attributes })).toBeUndefined();
  });

  it('keeps a __proto__ key a plain entry', () => {
    const raw = JSON.parse('{"__proto__":"x","zone":"a"}') as Record<string, string>;
    const parsed = parseMessage(gossipOf({ ...member, attributes: raw }));
    const attributes = parsed?.type === 'Gossip' ? parsed.gossip.members[0]?.attributes : undefined;
    expect(Object.getPrototypeOf(attributes)).toBe(Object.prototype);
    expect(Object.keys(attributes ?? {})).toEqual(['__proto__', 'zone']);
  });
});

describe('attributes in the config and the CLI form', () => {
  it('validates and sorts the configured attributes', () => {
    expect(resolveClusterConfig({ attributes: { zone: 'b', rack: '1' } }).attributes).toEqual({ rack: '1', zone: 'b' });
    expect(Object.keys(resolveClusterConfig({ attributes: { zone: 'b', rack: '1' } }).attributes)).toEqual([
      'rack',
      'zone',
    ]);
    expect(resolveClusterConfig({}).attributes).toEqual({});
    expect(() => resolveClusterConfig({ attributes: { zone: 'a b' } })).toThrow(ActorTsError);
    expect(() => resolveClusterConfig({ attributes: manyAttributes(33) })).toThrow(/at most 32/);
  });

  it('parses KEY=VALUE strictly', () => {
    expect(parseAttributeAssignment('zone=eu-west')).toEqual(['zone', 'eu-west']);
    for (const bad of ['zone', 'zone=', '=a', 'zone=a=b', 'zo ne=a', `zone=${'v'.repeat(65)}`])
      expect(() => parseAttributeAssignment(bad), bad).toThrow();
  });
});

describe('attributes in gossip state', () => {
  const record = (attributes?: Record<string, string>): MemberRecord => ({
    address: new NodeAddress('sys', 'h', 1),
    incarnation: 'i',
    status: 'up',
    appVersion: '1',
    roles: [],
    upNumber: 1,
    ...(attributes ? { attributes } : {}),
  });

  it('round-trips through the wire form', () => {
    const r = record({ zone: 'a' });
    const back = fromWire(toWire({ members: new Map([[keyOf(r), r]]), seen: new Set(), tombstones: new Map() }));
    expect(back.members.get(keyOf(r))?.attributes).toEqual({ zone: 'a' });
  });

  it('keeps the attributes whichever copy wins the merge, in any order', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('joining', 'up', 'leaving', 'down'),
        fc.constantFrom('joining', 'up', 'leaving', 'down'),
        (sa, sb) => {
          const a = { ...record({ zone: 'a' }), status: sa } as MemberRecord;
          const b = { ...record(), status: sb } as MemberRecord;
          expect(mergeRecord(a, b).attributes).toEqual({ zone: 'a' });
          expect(mergeRecord(b, a).attributes).toEqual({ zone: 'a' });
        },
      ),
    );
  });
});

describe('attributes across a cluster', () => {
  let nodes: TestNode[] = [];
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => {
    for (const n of nodes) n.cluster.shutdown();
    nodes = [];
    vi.useRealTimers();
  });

  it('shows every member with its attributes on every node (the seed forms; the others join)', async () => {
    const network = new MemoryNetwork({ seed: 3 });
    const zones = ['a', 'b', 'b'];
    nodes = zones.map((zone, i) => createNode(network, i + 1, { attributes: { zone } }));
    nodes.push(createNode(network, 4));
    for (const node of nodes) node.cluster.start();
    await advanceUntil(() => allUp(nodes), 'all four up everywhere');
    for (const observer of nodes) {
      const seen = Object.fromEntries(observer.cluster.members().map((m) => [m.address.port, m.attributes]));
      expect(seen).toEqual({
        [address(1).port]: { zone: 'a' },
        [address(2).port]: { zone: 'b' },
        [address(3).port]: { zone: 'b' },
        [address(4).port]: undefined,
      });
    }
  });
});
