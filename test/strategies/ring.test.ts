// RingAllocationStrategy by example: ring homes and the walk past a full node, a restart on the same
// address, a node that leaves and comes back, the rate limit and the settled-cluster rule shared with
// least-shard, its health ranking, options, as external's fallback (pins counted as load), and explain.
import { describe, expect, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import { RingAllocationStrategy as FromRoot } from '../../src/index.js';
import { coordinatorInsight } from '../../src/sharding/coordinator/insight.js';
import { stateWith } from '../sharding/coordinator-fakes.js';
import {
  LeastShardAllocationStrategy,
  PlacementPin,
  RingAllocationStrategy,
  externalAllocationStrategy,
  type AllocationStrategy,
} from '../../src/sharding/strategies/index.js';
import { TestView, healthyView, node, range, shardMap } from './fixtures.js';
import { PlacementSim } from './placement-sim.js';

const [a, b, c, d] = [node(1), node(2), node(3), node(4)];
const none = new Set<number>();

/** The node a shard's walk starts at: its ring home among `members`, whatever their loads. */
function ringHomeOf(shardId: number, members: NodeAddress[]): string {
  return new RingAllocationStrategy().allocate(shardId, members, new Map()).toString();
}

describe('RingAllocationStrategy.allocate', () => {
  it('is exported from the package root', () => {
    expect(FromRoot).toBe(RingAllocationStrategy);
  });

  it('spreads shards over every node and, under the bound, answers the ring home whatever the loads', () => {
    const strategy = new RingAllocationStrategy();
    const homes = range(0, 300).map((shardId) => ringHomeOf(shardId, [a, b, c]));
    for (const member of [a, b, c])
      expect(homes.filter((home) => home === member.toString()).length).toBeGreaterThan(60);
    // 90 shards on 3 nodes: bound ceil(1.25 * 91 / 3) = 38; a node with 30 still takes its ring-home shards.
    const loaded = shardMap([
      [a, range(1000, 30)],
      [b, range(2000, 30)],
      [c, range(3000, 30)],
    ]);
    for (const shardId of range(0, 50))
      expect(strategy.allocate(shardId, [a, b, c], loaded).toString()).toBe(homes[shardId]);
  });

  it('walks past a node at its bound to the next node clockwise: the ring home the shard has without that node', () => {
    const strategy = new RingAllocationStrategy();
    for (const shardId of range(0, 40)) {
      const home = ringHomeOf(shardId, [a, b, c]);
      const full = [a, b, c].find((n) => n.toString() === home) as NodeAddress;
      const others = [a, b, c].filter((n) => n !== full);
      // 10 shards on the ring home, none elsewhere: bound ceil(1.25 * 11 / 3) = 5.
      const loads = shardMap([[full, range(1000, 10)]]);
      const choice = strategy.allocate(shardId, [a, b, c], loads).toString();
      expect(choice).not.toBe(home);
      expect(choice).toBe(ringHomeOf(shardId, others));
    }
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

  it('computes the bound as ceil(loadBound * allocated / nodes), without float drift', () => {
    expect(new RingAllocationStrategy().boundFor(1000, 3)).toBe(417);
    expect(new RingAllocationStrategy({ loadBound: 1.1 }).boundFor(10, 1)).toBe(11);
    expect(new RingAllocationStrategy({ loadBound: 1 }).boundFor(9, 3)).toBe(3);
  });

  it.each([
    [{ virtualNodes: 0 }, 'virtualNodes'],
    [{ virtualNodes: 1.5 }, 'virtualNodes'],
    [{ virtualNodes: 5000 }, 'virtualNodes'],
    [{ loadBound: 0.99 }, 'loadBound'],
    [{ loadBound: Number.NaN }, 'loadBound'],
    [{ loadBound: Number.POSITIVE_INFINITY }, 'loadBound'],
    [{ absoluteLimit: -1 }, 'absoluteLimit'],
  ])('refuses %o', (options, name) => {
    expect(() => new RingAllocationStrategy(options)).toThrow(
      expect.objectContaining({ code: 'invalid_argument', message: expect.stringContaining(name) }),
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

  it('moves a shard only to its ring home, and only while that keeps the home within the bound', () => {
    const strategy = new RingAllocationStrategy();
    // Every shard on a, whose ring home is b or c: bound ceil(1.25 * 30 / 3) = 13 per home.
    const away = range(0, 200)
      .filter((shardId) => ringHomeOf(shardId, [a, b, c]) !== a.toString())
      .slice(0, 30);
    const picks = new RingAllocationStrategy({ absoluteLimit: 100, relativeLimit: 1 }).rebalance(
      shardMap([[a, away]]),
      [a, b, c],
      none,
    );
    const arriving = new Map<string, number>();
    for (const shardId of picks) {
      const home = ringHomeOf(shardId, [a, b, c]);
      arriving.set(home, (arriving.get(home) ?? 0) + 1);
    }
    for (const count of arriving.values()) expect(count).toBeLessThanOrEqual(13);
    // a holds 30 > 13: what does not go home is shed (walked on by allocate), so a ends within the bound.
    expect(30 - picks.size).toBeLessThanOrEqual(13);
    expect(strategy.toString()).toBe('RingAllocationStrategy(128, 1.25)');
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
  it('pins win; the ring places the rest and counts the pinned shards in the loads', () => {
    const unpinned = range(0, 200).filter((shardId) => ringHomeOf(shardId, [a, b]) === a.toString())[0] as number;
    const pins = new Map(range(1000, 6).map((shardId) => [shardId, PlacementPin.of(a)] as const));
    const strategy = externalAllocationStrategy(new RingAllocationStrategy(), () => ({ explicitPlacements: pins }));
    expect(strategy.allocate(1003, [a, b], new Map())).toEqual(a);
    // a holds its 6 pinned shards: bound ceil(1.25 * 7 / 2) = 5, so a is full and the shard goes to b.
    const loads = shardMap([[a, range(1000, 6)]]);
    expect(strategy.allocate(unpinned, [a, b], loads)).toEqual(b);
    expect(strategy.allocate(unpinned, [a, b], new Map())).toEqual(a);
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
    const answer = coordinatorInsight({ typeName: 'T', numberOfShards: 100_000, role: undefined, strategy }, state, {
      candidates: () => [a, b, c],
      members: () => healthyView([a, b, c]).members(),
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

  it("gives the ring home, under its bound, as the fallback's reason", () => {
    const home = NodeAddress.parse(ringHomeOf(7, [a, b, c]));
    expect(explain(external(new RingAllocationStrategy()), [[7, home]], 7)).toBe(
      `shard 7 has no pin: the fallback strategy placed it on ${home} (ring home, under its bound).`,
    );
  });

  it('says why a shard is off its ring home: the home at its bound, or a move to come', () => {
    const home = NodeAddress.parse(ringHomeOf(7, [a, b, c]));
    const other = [a, b, c].find((n) => !n.equals(home)) as NodeAddress;
    const full = range(1000, 9).map((id) => [id, home] as const);
    expect(explain(external(new RingAllocationStrategy()), [[7, other], ...full], 7)).toContain(
      `(its ring home ${home} is at its bound of 5: the next node clockwise under its bound)`,
    );
    expect(explain(external(new RingAllocationStrategy()), [[7, other]], 7)).toContain(
      `(its ring home ${home} is under its bound of 1: it moves there at a rebalance round)`,
    );
  });

  it('adds nothing for a fallback that gives no reason (least-shard)', () => {
    expect(explain(external(new LeastShardAllocationStrategy()), [[7, a]], 7)).toBe(
      `shard 7 has no pin: the fallback strategy placed it on ${a}.`,
    );
  });
});
