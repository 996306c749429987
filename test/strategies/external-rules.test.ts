// externalAllocationStrategy with placement rules: selectors over attributes and roles, prefer vs require as
// members appear, disappear and become unreachable, expiry on an injected clock, and pinned shards spread
// over several matching nodes the way the fallback spreads shards.
import { describe, expect, it } from 'vitest';
import * as fc from 'fast-check';
import type { NodeAddress } from '../../src/cluster/address.js';
import type { ClusterView, MemberInfo } from '../../src/cluster/member.js';
import type { AllocationStrategy } from '../../src/sharding/strategies/allocation-strategy.js';
import { externalAllocationStrategy } from '../../src/sharding/strategies/external.js';
import { LeastShardAllocationStrategy } from '../../src/sharding/strategies/least-shard.js';
import { PlacementPin } from '../../src/sharding/placements/placement-pin.js';
import { node, shardMap } from './fixtures.js';

type Member = MemberInfo & { readonly attributes?: Readonly<Record<string, string>> };

/** A view of members with attributes, changeable between calls. */
class AttributeView implements ClusterView {
  constructor(public current: Member[]) {}
  members(): ReadonlyArray<MemberInfo> {
    return this.current;
  }
}

function m(
  n: number,
  attributes: Record<string, string>,
  extra: Partial<Pick<MemberInfo, 'reachable' | 'status' | 'roles'>> = {},
): Member {
  return {
    address: node(n),
    status: 'up',
    appVersion: '1.0.0',
    upNumber: n,
    reachable: true,
    roles: [],
    attributes,
    ...extra,
  };
}

function setup(
  members: Member[],
  pins: Map<number, PlacementPin>,
  clock = { now: 1_000 },
  fallback: AllocationStrategy = new LeastShardAllocationStrategy(),
) {
  const view = new AttributeView(members);
  const warnings: Array<Record<string, unknown>> = [];
  const strategy = externalAllocationStrategy(fallback, () => ({ explicitPlacements: pins }), {
    cluster: view,
    now: () => clock.now,
    onWarning: (_message, details) => warnings.push(details as Record<string, unknown>),
  });
  return { strategy, view, warnings, clock };
}

const none = new Set<number>();
const zoneB = (options: { mode?: 'prefer' | 'require'; expiresAt?: number } = {}) => PlacementPin.of('zone=b', options);

describe('selector pins in allocate', () => {
  it('spreads shards pinned to zone=b over the zone=b nodes only, least loaded first', () => {
    const pins = new Map([1, 2, 3, 4].map((s) => [s, zoneB()] as const));
    const { strategy } = setup([m(1, { zone: 'a' }), m(2, { zone: 'b' }), m(3, { zone: 'b' })], pins);
    const current = shardMap([
      [node(1), []],
      [node(2), []],
      [node(3), []],
    ]);
    for (const shardId of [1, 2, 3, 4]) {
      const home = strategy.allocate(shardId, [node(1), node(2), node(3)], current) as NodeAddress;
      current.get(home.toString())?.add(shardId);
    }
    expect([...(current.get(node(1).toString()) ?? [])]).toEqual([]);
    expect(current.get(node(2).toString())?.size).toBe(2);
    expect(current.get(node(3).toString())?.size).toBe(2);
  });

  it('prefer: with no matching node the fallback places it among the reachable nodes, with one warning', () => {
    const pins = new Map([[7, zoneB()]]);
    const { strategy, warnings } = setup([m(1, { zone: 'a' }), m(2, { zone: 'b' }, { reachable: false })], pins);
    const candidates = [node(1), node(2)];
    expect(strategy.allocate(7, candidates, new Map())?.toString()).toBe(node(1).toString());
    strategy.allocate(7, candidates, new Map());
    expect(warnings).toEqual([
      expect.objectContaining({ shardId: 7, target: 'zone=b', reason: 'no matching node', mode: 'prefer' }),
    ]);
  });

  it('require: no home while no matching node is reachable and up, then the first one that is', () => {
    const pins = new Map([[7, zoneB({ mode: 'require' })]]);
    const { strategy, view, warnings } = setup([m(1, { zone: 'a' })], pins);
    expect(strategy.allocate(7, [node(1)], new Map())).toBeUndefined();
    // Appears, but unreachable: still none.
    view.current = [m(1, { zone: 'a' }), m(2, { zone: 'b' }, { reachable: false })];
    expect(strategy.allocate(7, [node(1), node(2)], new Map())).toBeUndefined();
    // Reachable: that node.
    view.current = [m(1, { zone: 'a' }), m(2, { zone: 'b' })];
    expect(strategy.allocate(7, [node(1), node(2)], new Map())?.toString()).toBe(node(2).toString());
    // Downed, or gone from the view: none again.
    view.current = [m(1, { zone: 'a' }), m(2, { zone: 'b' }, { status: 'down' })];
    expect(strategy.allocate(7, [node(1), node(2)], new Map())).toBeUndefined();
    view.current = [m(1, { zone: 'a' })];
    expect(strategy.allocate(7, [node(1), node(2)], new Map())).toBeUndefined();
    expect(warnings.map((w) => [w['shardId'], w['reason'], w['mode']])).toEqual([
      [7, 'no matching node', 'require'],
      [7, 'no matching node', 'require'],
    ]);
  });

  it('require on an address: no home while that node is not a reachable candidate', () => {
    const pins = new Map([[3, PlacementPin.of(node(2), { mode: 'require' })]]);
    const { strategy, view } = setup([m(1, {}), m(2, {}, { reachable: false })], pins);
    expect(strategy.allocate(3, [node(1), node(2)], new Map())).toBeUndefined();
    expect(strategy.allocate(3, [node(1)], new Map())).toBeUndefined();
    view.current = [m(1, {}), m(2, {})];
    expect(strategy.allocate(3, [node(1), node(2)], new Map())?.toString()).toBe(node(2).toString());
  });

  it('role=NAME selects by role', () => {
    const pins = new Map([[1, PlacementPin.of('role=gpu', { mode: 'require' })]]);
    const { strategy } = setup([m(1, {}, { roles: ['web'] }), m(2, {}, { roles: ['gpu'] })], pins);
    expect(strategy.allocate(1, [node(1), node(2)], new Map())?.toString()).toBe(node(2).toString());
  });
});

describe('expiry', () => {
  it('steers allocation until its expiry on the injected clock, then not at all; nextChangeInMs counts down to it', () => {
    const pins = new Map([[5, zoneB({ mode: 'require', expiresAt: 10_000 })]]);
    const { strategy, clock } = setup([m(1, { zone: 'a' })], pins, { now: 4_000 });
    expect(strategy.allocate(5, [node(1)], new Map())).toBeUndefined();
    expect(strategy.nextChangeInMs?.()).toBe(6_000);
    clock.now = 9_999;
    expect(strategy.allocate(5, [node(1)], new Map())).toBeUndefined();
    expect(strategy.nextChangeInMs?.()).toBe(1);
    clock.now = 10_000;
    expect(strategy.allocate(5, [node(1)], new Map())?.toString()).toBe(node(1).toString());
    expect(strategy.nextChangeInMs?.()).toBeUndefined();
  });

  it('an expired pin no longer keeps its shard where it is, nor moves it', () => {
    const pins = new Map([[1, PlacementPin.of(node(2), { expiresAt: 2_000 })]]);
    const { strategy, clock } = setup([m(1, {}), m(2, {})], pins, { now: 1_000 });
    const current = shardMap([
      [node(1), [1]],
      [node(2), []],
    ]);
    expect([...strategy.rebalance(current, [node(1), node(2)], none)]).toEqual([1]);
    clock.now = 2_000;
    // The fallback sees a balanced cluster (1 and 0 shards): nothing to move.
    expect([...strategy.rebalance(current, [node(1), node(2)], none)]).toEqual([]);
  });
});

describe('rebalance with rules', () => {
  it('require hands a shard off a non-matching node at once, even when no matching node exists; prefer leaves it', () => {
    const pins = new Map([
      [1, zoneB({ mode: 'require' })],
      [2, zoneB()],
    ]);
    const { strategy, warnings } = setup([m(1, { zone: 'a' }), m(2, { zone: 'a' })], pins);
    const current = shardMap([
      [node(1), [1, 2]],
      [node(2), []],
    ]);
    expect([...strategy.rebalance(current, [node(1), node(2)], none)].sort()).toEqual([1]);
    expect(warnings.map((w) => [w['shardId'], w['handedOffFrom'] ?? w['stayingOn']])).toEqual([
      [1, node(1).toString()],
      [2, node(1).toString()],
    ]);
  });

  it('moves a pinned shard off a non-matching node when a matching node is reachable', () => {
    const pins = new Map([[1, zoneB()]]);
    const { strategy } = setup([m(1, { zone: 'a' }), m(2, { zone: 'b' })], pins);
    expect([
      ...strategy.rebalance(
        shardMap([
          [node(1), [1]],
          [node(2), []],
        ]),
        [node(1), node(2)],
        none,
      ),
    ]).toEqual([1]);
  });

  it('never moves a pinned shard off a matching node to relieve the cluster, only to even out the matching nodes', () => {
    const pins = new Map([10, 11, 12, 13].map((s) => [s, zoneB()] as const));
    const { strategy } = setup([m(1, { zone: 'a' }), m(2, { zone: 'b' }), m(3, { zone: 'b' })], pins);
    const candidates = [node(1), node(2), node(3)];
    // zone=b nodes evenly loaded, zone=a empty: the pinned shards stay.
    expect([
      ...strategy.rebalance(
        shardMap([
          [node(1), []],
          [node(2), [10, 11]],
          [node(3), [12, 13]],
        ]),
        candidates,
        none,
      ),
    ]).toEqual([]);
    // Uneven among the zone=b nodes: some move, and only pinned ones.
    const moves = strategy.rebalance(
      shardMap([
        [node(1), []],
        [node(2), [10, 11, 12, 13]],
        [node(3), []],
      ]),
      candidates,
      none,
    );
    expect(moves.size).toBeGreaterThan(0);
    for (const shardId of moves) expect(pins.has(shardId)).toBe(true);
  });

  it('converges: pinned shards end on matching nodes, evenly, and rebalancing stops (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 3 }),
        fc.array(fc.nat({ max: 6 }), { minLength: 1, maxLength: 30 }),
        fc.boolean(),
        (zoneBNodes, zoneANodes, initialHomes, require) => {
          const members: Member[] = [];
          for (let i = 1; i <= zoneANodes; i++) members.push(m(i, { zone: 'a' }));
          for (let i = 1; i <= zoneBNodes; i++) members.push(m(zoneANodes + i, { zone: 'b' }));
          const candidates = members.map((x) => x.address);
          const pins = new Map(
            initialHomes.map((_, shardId) => [shardId, zoneB({ mode: require ? 'require' : 'prefer' })] as const),
          );
          const { strategy } = setup(members, pins);
          const current = new Map(candidates.map((c) => [c.toString(), new Set<number>()]));
          initialHomes.forEach((home, shardId) =>
            current.get((candidates[home % candidates.length] as NodeAddress).toString())?.add(shardId),
          );
          let rounds = 0;
          for (; rounds < 200; rounds++) {
            const moves = strategy.rebalance(current, candidates, none);
            if (moves.size === 0) break;
            for (const shards of current.values()) for (const shardId of moves) shards.delete(shardId);
            for (const shardId of moves) {
              const home = strategy.allocate(shardId, candidates, current) as NodeAddress;
              current.get(home.toString())?.add(shardId);
            }
          }
          expect(rounds).toBeLessThan(200);
          const bCounts = members
            .filter((x) => x.attributes?.['zone'] === 'b')
            .map((x) => current.get(x.address.toString())?.size ?? 0);
          expect(bCounts.reduce((a, b) => a + b, 0)).toBe(initialHomes.length);
          expect(Math.max(...bCounts) - Math.min(...bCounts)).toBeLessThanOrEqual(1);
        },
      ),
      { numRuns: 150 },
    );
  });
});
