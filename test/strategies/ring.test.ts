// RingAllocationStrategy by example: one assignment of the shard range (ring homes, the walk past a full
// node), a restart on the same address, a node that leaves and comes back, the rate limit and the
// settled-cluster rule shared with least-shard, its health ranking, options, as external's fallback, and explain.
import { describe, expect, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import { RingAllocationStrategy as FromRoot } from '../../src/index.js';
import { MAX_NUMBER_OF_SHARDS } from '../../src/sharding/core/sharded-type.js';
import { coordinatorInsight } from '../../src/sharding/coordinator/insight.js';
import { stateWith } from '../sharding/coordinator-fakes.js';
import {
  LeastShardAllocationStrategy,
  PlacementPin,
  RingAllocationStrategy,
  externalAllocationStrategy,
  fallbackStrategy,
  type AllocationStrategy,
} from '../../src/sharding/strategies/index.js';
import { buildRing, ringHome } from '../../src/sharding/strategies/hash-ring.js';
import { TestView, healthyView, node, range, shardMap } from './fixtures.js';
import { PlacementSim } from './placement-sim.js';

const [a, b, c, d] = [node(1), node(2), node(3), node(4)];
const none = new Set<number>();

/** The node a shard's walk starts at: its ring home among `members`, no bound considered. */
function ringHomeOf(shardId: number, members: NodeAddress[]): string {
  const ring = buildRing(members.map(String), 128);
  return ring.keys[ringHome(ring, shardId)] as string;
}

/** The shard's home in the assignment of `members` (default range 1000). */
function homeOf(shardId: number, members: NodeAddress[]): string {
  return new RingAllocationStrategy().allocate(shardId, members, new Map()).toString();
}

describe('RingAllocationStrategy.allocate', () => {
  it('is exported from the package root', () => {
    expect(FromRoot).toBe(RingAllocationStrategy);
  });

  it('spreads shards over every node and answers the same home whatever the loads', () => {
    const strategy = new RingAllocationStrategy();
    const homes = range(0, 300).map((shardId) => homeOf(shardId, [a, b, c]));
    for (const member of [a, b, c])
      expect(homes.filter((home) => home === member.toString()).length).toBeGreaterThan(60);
    // The assignment covers the whole range: the shards already allocated do not change it.
    const loaded = shardMap([
      [a, range(1000, 30)],
      [b, range(2000, 30)],
      [c, range(3000, 30)],
    ]);
    for (const shardId of range(0, 50))
      expect(strategy.allocate(shardId, [a, b, c], loaded).toString()).toBe(homes[shardId]);
  });

  it('gives no node more than its bound of the range, walking a shard past a full ring home', () => {
    // 40 shards on 3 nodes with loadBound 1: at most max(ceil(13.3), floor(13.3)) = 14 each.
    const strategy = new RingAllocationStrategy({ numberOfShards: 40, loadBound: 1 });
    const homes = range(0, 40).map((shardId) => strategy.allocate(shardId, [a, b, c], new Map()).toString());
    const counts = new Map<string, number>();
    for (const home of homes) counts.set(home, (counts.get(home) ?? 0) + 1);
    for (const count of counts.values()) expect(count).toBeLessThanOrEqual(14);
    const walked = range(0, 40).filter((shardId) => homes[shardId] !== ringHomeOf(shardId, [a, b, c]));
    expect(walked.length).toBeGreaterThan(0);
    // A shard is walked on only past a ring home the bound has filled.
    for (const shardId of walked) expect(counts.get(ringHomeOf(shardId, [a, b, c]))).toBe(14);
    // Ids beyond the range go to their plain ring home.
    for (const shardId of range(40, 60))
      expect(strategy.allocate(shardId, [a, b, c], new Map()).toString()).toBe(ringHomeOf(shardId, [a, b, c]));
  });

  it('hashes a member by its address: a restart on the same address (a new instance) is the same ring position', () => {
    const strategy = new RingAllocationStrategy();
    const restarted = NodeAddress.parse(b.toString());
    const before = range(0, 100).map((shardId) => strategy.allocate(shardId, [a, b, c], new Map()).toString());
    const after = range(0, 100).map((shardId) =>
      new RingAllocationStrategy().allocate(shardId, [c, restarted, a], new Map()).toString(),
    );
    expect(after).toEqual(before);
  });

  it('gives new shards to healthy, up-to-date nodes first, as least-shard ranks them (load aside)', () => {
    const view = new TestView([
      { address: a, upNumber: 1, reachable: false },
      { address: b, upNumber: 2, status: 'leaving' },
      { address: c, upNumber: 3, appVersion: '1.0.0' },
      { address: d, upNumber: 4, appVersion: '1.10.0' },
    ]);
    const strategy = new RingAllocationStrategy({ cluster: view });
    for (const shardId of range(0, 30)) expect(strategy.allocate(shardId, [a, b, c, d], new Map())).toBe(d);
    view.set([
      { address: a, upNumber: 1, reachable: false },
      { address: b, upNumber: 2, status: 'leaving' },
      { address: c, upNumber: 3 },
      { address: d, upNumber: 4 },
    ]);
    const homes = new Set(
      range(0, 60).map((shardId) => strategy.allocate(shardId, [a, b, c, d], new Map()).toString()),
    );
    expect(homes).toEqual(new Set([c.toString(), d.toString()]));
  });

  it('computes the bound as max(ceil(range / nodes), floor(loadBound * range / nodes)), without float drift', () => {
    expect(new RingAllocationStrategy().boundFor(3)).toBe(416);
    expect(new RingAllocationStrategy().boundFor(100)).toBe(12);
    expect(new RingAllocationStrategy({ numberOfShards: 10, loadBound: 1.1 }).boundFor(1)).toBe(11);
    expect(new RingAllocationStrategy({ numberOfShards: 9, loadBound: 1 }).boundFor(3)).toBe(3);
    expect(new RingAllocationStrategy({ numberOfShards: 10 }).boundFor(4)).toBe(3);
  });

  it.each([
    [{ virtualNodes: 0 }, 'virtualNodes'],
    [{ virtualNodes: 1.5 }, 'virtualNodes'],
    [{ virtualNodes: 5000 }, 'virtualNodes'],
    [{ numberOfShards: 0 }, 'numberOfShards'],
    [{ numberOfShards: 2.5 }, 'numberOfShards'],
    [{ numberOfShards: 2_000_000 }, 'numberOfShards'],
    [{ loadBound: 0.99 }, 'loadBound'],
    [{ loadBound: Number.NaN }, 'loadBound'],
    [{ loadBound: Number.POSITIVE_INFINITY }, 'loadBound'],
    [{ absoluteLimit: -1 }, 'absoluteLimit'],
  ])('refuses %o', (options, name) => {
    expect(() => new RingAllocationStrategy(options)).toThrow(
      expect.objectContaining({ code: 'invalid_argument', message: expect.stringContaining(name) }),
    );
  });

  it("covers the entity type's shard range when built by name (node --fallback ring), 1000 by default", () => {
    const built = fallbackStrategy('ring', undefined, 100);
    expect(built).toBeInstanceOf(RingAllocationStrategy);
    expect((built as RingAllocationStrategy).numberOfShards).toBe(100);
    expect((fallbackStrategy('ring', undefined) as RingAllocationStrategy).numberOfShards).toBe(1000);
  });

  it("takes any entity type's range, up to the largest numberOfShards a type may have", () => {
    expect(new RingAllocationStrategy({ numberOfShards: MAX_NUMBER_OF_SHARDS }).numberOfShards).toBe(
      MAX_NUMBER_OF_SHARDS,
    );
    expect(() => new RingAllocationStrategy({ numberOfShards: MAX_NUMBER_OF_SHARDS + 1 })).toThrow(
      expect.objectContaining({ code: 'invalid_argument' }),
    );
  });

  it('rejects bad arguments', () => {
    const strategy = new RingAllocationStrategy();
    expect(() => strategy.allocate(1, [], new Map())).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    expect(() => strategy.allocate(-1, [a], new Map())).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
  });
});

describe('RingAllocationStrategy.rebalance', () => {
  function settled(strategyOf: (sim: PlacementSim) => AllocationStrategy, members: NodeAddress[], shards: number) {
    const sim = new PlacementSim(members);
    const strategy = strategyOf(sim);
    for (const shardId of range(0, shards)) sim.allocate(strategy, shardId);
    sim.settle(strategy);
    return { sim, strategy };
  }

  it('gives a node that leaves and comes back every shard it had (least-shard does not)', () => {
    const ring = settled((sim) => new RingAllocationStrategy({ cluster: sim.view }), [a, b, c], 300);
    const least = settled((sim) => new LeastShardAllocationStrategy({ cluster: sim.view }), [a, b, c], 300);
    for (const { sim, strategy } of [ring, least]) {
      const before = new Map(sim.homes);
      sim.removeNode(strategy, b);
      sim.settle(strategy);
      sim.addNode(b);
      sim.settle(strategy);
      sim.moves = [...before].filter(([shardId, home]) => sim.homes.get(shardId) !== home).length;
    }
    expect(ring.sim.moves).toBe(0);
    expect(least.sim.moves).toBeGreaterThan(0);
  });

  it('proposes exactly the shards away from their home in the assignment, whatever the loads', () => {
    const strategy = new RingAllocationStrategy({ absoluteLimit: 100, relativeLimit: 1 });
    const onA = range(0, 60);
    const picks = strategy.rebalance(shardMap([[a, onA]]), [a, b, c], none);
    expect(picks).toEqual(new Set(onA.filter((shardId) => homeOf(shardId, [a, b, c]) !== a.toString())));
    expect(strategy.toString()).toBe('RingAllocationStrategy(128, 1.25, 1000)');
  });

  it('is rate-limited like least-shard: at most max(1, min(floor(0.1 * allocated), 20)), one round at a time', () => {
    const { sim, strategy } = settled((s) => new RingAllocationStrategy({ cluster: s.view }), [a, b, c], 1000);
    sim.addNode(d);
    expect(strategy.rebalance(sim.shards, sim.candidates, none).size).toBe(20);
    expect(strategy.rebalance(sim.shards, sim.candidates, new Set([1])).size).toBe(0);
    const small = settled((s) => new RingAllocationStrategy({ cluster: s.view }), [a, b, c], 30);
    small.sim.addNode(d);
    expect(small.strategy.rebalance(small.sim.shards, small.sim.candidates, none).size).toBe(3);
  });

  it('waits for a settled cluster: nothing while a member is joining or unreachable', () => {
    const view = healthyView([a, b, c]);
    const strategy = new RingAllocationStrategy({ cluster: view });
    const allOnA = shardMap([[a, range(0, 30)]]);
    expect(strategy.rebalance(allOnA, [a, b, c], none).size).toBeGreaterThan(0);
    view.set([
      { address: a, upNumber: 1 },
      { address: b, upNumber: 2 },
      { address: c, upNumber: 3 },
      { address: d, status: 'joining' },
    ]);
    expect(strategy.rebalance(allOnA, [a, b, c], none).size).toBe(0);
    view.set([
      { address: a, upNumber: 1 },
      { address: b, upNumber: 2, reachable: false },
      { address: c, upNumber: 3 },
    ]);
    expect(strategy.rebalance(allOnA, [a, b, c], none).size).toBe(0);
  });
});

describe('RingAllocationStrategy under the pins (externalAllocationStrategy fallback)', () => {
  it('pins win; the ring places the rest by its assignment, and never proposes a pinned shard', () => {
    const unpinned = range(0, 200).filter((shardId) => homeOf(shardId, [a, b]) === a.toString())[0] as number;
    const pinnedIds = range(0, 200).filter((shardId) => homeOf(shardId, [a, b]) === b.toString());
    const pins = new Map(pinnedIds.map((shardId) => [shardId, PlacementPin.of(a)] as const));
    const strategy = externalAllocationStrategy(new RingAllocationStrategy(), () => ({ explicitPlacements: pins }));
    expect(strategy.allocate(pinnedIds[0] as number, [a, b], new Map())).toEqual(a);
    // The pinned shards on a do not push the rest elsewhere: the assignment is a function of the members.
    const loads = shardMap([[a, pinnedIds]]);
    expect(strategy.allocate(unpinned, [a, b], loads)).toEqual(a);
    expect(strategy.rebalance(loads, [a, b], none).size).toBe(0);
  });
});

describe('explain with the ring as fallback', () => {
  function explain(
    strategy: AllocationStrategy,
    homes: ReadonlyArray<readonly [number, NodeAddress]>,
    shardId: number,
  ): string {
    const state = stateWith(
      [a, b, c].map(String),
      [...homes].map(([id, home]) => [id, home.toString()] as const),
    );
    const answer = coordinatorInsight({ numberOfShards: 100_000, strategy }, state, {
      candidates: () => [a, b, c],
      members: () => healthyView([a, b, c]).members(),
      now: () => 0,
    })({
      type: 'ExplainShard',
      typeName: 'T',
      requestId: 1,
      shardId,
    });
    if (answer.type !== 'ShardExplained' || answer.explanation === null) throw new Error('no explanation');
    return answer.explanation.message;
  }
  const external = (fallback: AllocationStrategy): AllocationStrategy =>
    externalAllocationStrategy(fallback, () => ({ explicitPlacements: new Map() }));

  it("gives the home in the assignment, and why, as the fallback's reason", () => {
    const home = NodeAddress.parse(homeOf(7, [a, b, c]));
    expect(ringHomeOf(7, [a, b, c])).toBe(home.toString());
    expect(explain(external(new RingAllocationStrategy()), [[7, home]], 7)).toBe(
      `shard 7 has no pin: the fallback strategy placed it on ${home} (assigned here: its ring home).`,
    );
    const other = [a, b, c].find((n) => !n.equals(home)) as NodeAddress;
    expect(explain(external(new RingAllocationStrategy()), [[7, other]], 7)).toContain(
      `(assigned to ${home}, its ring home: it moves there at a rebalance round)`,
    );
  });

  it('says when the bound walked a shard past its full ring home', () => {
    const strategy = new RingAllocationStrategy({ numberOfShards: 40, loadBound: 1 });
    const walked = range(0, 40).find(
      (id) => strategy.allocate(id, [a, b, c], new Map()).toString() !== ringHomeOf(id, [a, b, c]),
    ) as number;
    const home = strategy.allocate(walked, [a, b, c], new Map());
    expect(explain(external(strategy), [[walked, home]], walked)).toContain(
      `(assigned here: the next node clockwise under the bound of 14 (its ring home ${ringHomeOf(walked, [a, b, c])} is full))`,
    );
  });

  it('adds nothing for a fallback that gives no reason (least-shard)', () => {
    expect(explain(external(new LeastShardAllocationStrategy()), [[7, a]], 7)).toBe(
      `shard 7 has no pin: the fallback strategy placed it on ${a}.`,
    );
  });
});
