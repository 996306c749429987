// externalAllocationStrategy: explicit placements first, the fallback otherwise, warnings deduped.
import { describe, it, expect } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import type { AllocationStrategy, ShardAllocations } from '../../src/sharding/strategies/allocation-strategy.js';
import { externalAllocationStrategy } from '../../src/sharding/strategies/external.js';
import type { ExternalAllocationState } from '../../src/sharding/placements/placement-pin.js';
import { HashAllocationStrategy } from '../../src/sharding/strategies/hash.js';
import { LeastShardAllocationStrategy } from '../../src/sharding/strategies/least-shard.js';
import { node, range, shardMap, sorted, TestView } from './fixtures.js';

const [a, b, c] = [node(1), node(2), node(3)];
const none = new Set<number>();

/** A fallback that records what it was asked and answers with fixed choices. */
class ScriptedFallback implements AllocationStrategy {
  allocations: Array<{ shardId: number; candidates: string[] }> = [];
  rebalanceCalls: Array<{ currentShards: ShardAllocations; candidates: string[] }> = [];
  constructor(
    private readonly pick: (candidates: ReadonlyArray<NodeAddress>) => NodeAddress = (candidates) => candidates[0]!,
    private readonly suggest: ReadonlySet<number> = new Set(),
  ) {}
  allocate(shardId: number, candidates: ReadonlyArray<NodeAddress>): NodeAddress {
    this.allocations.push({ shardId, candidates: candidates.map(String) });
    return this.pick(candidates);
  }
  rebalance(currentShards: ShardAllocations, candidates: ReadonlyArray<NodeAddress>): ReadonlySet<number> {
    this.rebalanceCalls.push({ currentShards, candidates: candidates.map(String) });
    return this.suggest;
  }
}

/** Placement state the tests can change, counting reads. */
class Placements {
  reads = 0;
  private map = new Map<number, NodeAddress>();
  readonly getState = (): ExternalAllocationState => {
    this.reads++;
    return { explicitPlacements: this.map };
  };
  set(shardId: number, target: NodeAddress | string): this {
    this.map = new Map(this.map).set(shardId, typeof target === 'string' ? NodeAddress.parse(target) : target);
    return this;
  }
  remove(shardId: number): this {
    this.map = new Map(this.map);
    this.map.delete(shardId);
    return this;
  }
}

interface Warning {
  readonly message: string;
  readonly details: Record<string, unknown>;
}

function setup(options: { fallback?: AllocationStrategy; cluster?: TestView } = {}) {
  const placements = new Placements();
  const warnings: Warning[] = [];
  const fallback = options.fallback ?? new ScriptedFallback();
  const strategy = externalAllocationStrategy(fallback, placements.getState, {
    cluster: options.cluster,
    onWarning: (message, details) => warnings.push({ message, details: details as Record<string, unknown> }),
  });
  return { strategy, placements, warnings };
}

describe('externalAllocationStrategy.allocate', () => {
  it('returns the explicit target when it is a candidate, as the candidate instance', () => {
    const { strategy, placements, warnings } = setup();
    placements.set(42, `actor-ts://${b.toString()}`);
    const home = strategy.allocate(42, [a, b, c], new Map());
    expect(home).toBe(b);
    expect(warnings).toEqual([]);
  });

  it('asks the fallback, with every candidate, for a shard without a placement', () => {
    const fallback = new ScriptedFallback((candidates) => candidates[2]!);
    const { strategy, placements, warnings } = setup({ fallback });
    placements.set(1, b);
    expect(strategy.allocate(7, [a, b, c], new Map())).toBe(c);
    expect(fallback.allocations).toEqual([{ shardId: 7, candidates: [a, b, c].map(String) }]);
    expect(warnings).toEqual([]);
  });

  it('falls back with a warning naming shard, target and "not a candidate"', () => {
    const fallback = new ScriptedFallback((candidates) => candidates[1]!);
    const { strategy, placements, warnings } = setup({ fallback });
    placements.set(42, c);
    expect(strategy.allocate(42, [a, b], new Map())).toBe(b);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toContain('shard 42');
    expect(warnings[0]?.message).toContain(c.toString());
    expect(warnings[0]?.details).toMatchObject({
      shardId: 42,
      target: c.toString(),
      reason: 'not a candidate',
      allocatedTo: b.toString(),
    });
  });

  it('falls back among the reachable candidates only, with an "unreachable" warning', () => {
    const fallback = new ScriptedFallback();
    const cluster = new TestView([{ address: a, reachable: false }, { address: b, reachable: false }, { address: c }]);
    const { strategy, placements, warnings } = setup({ fallback, cluster });
    placements.set(42, b);
    expect(strategy.allocate(42, [a, b, c], new Map())).toBe(c);
    expect(fallback.allocations[0]?.candidates).toEqual([c.toString()]);
    expect(warnings[0]?.details).toMatchObject({ shardId: 42, target: b.toString(), reason: 'unreachable' });
  });

  it('treats a target the view does not list, or a downed one, as unreachable', () => {
    const cluster = new TestView([{ address: a }, { address: c, status: 'down' }]);
    const { strategy, placements, warnings } = setup({ cluster });
    placements.set(1, b).set(2, c);
    expect(strategy.allocate(1, [a, b, c], new Map())).toBe(a);
    expect(strategy.allocate(2, [a, b, c], new Map())).toBe(a);
    expect(warnings.map((w) => w.details['reason'])).toEqual(['unreachable', 'unreachable']);
  });

  it('gives the fallback every candidate when none is reachable', () => {
    const fallback = new ScriptedFallback();
    const cluster = new TestView([
      { address: a, reachable: false },
      { address: b, reachable: false },
    ]);
    const { strategy } = setup({ fallback, cluster });
    expect(strategy.allocate(3, [a, b], new Map())).toBe(a);
    expect(fallback.allocations[0]?.candidates).toEqual([a, b].map(String));
  });

  it('reads the placement state exactly once per call', () => {
    const { strategy, placements } = setup({ fallback: new LeastShardAllocationStrategy() });
    placements.set(1, a);
    strategy.allocate(1, [a, b], new Map());
    strategy.allocate(2, [a, b], new Map());
    expect(placements.reads).toBe(2);
    strategy.rebalance(shardMap([[b, [1, 2, 3]]]), [a, b], none);
    expect(placements.reads).toBe(3);
  });

  it('never returns a non-candidate even when the fallback does, and says so', () => {
    const { strategy, warnings } = setup({ fallback: new ScriptedFallback(() => node(9)) });
    expect(strategy.allocate(5, [a, b], new Map())).toBe(a);
    expect(warnings[0]?.message).toMatch(/not a candidate/);
    expect(warnings[0]?.details).toMatchObject({ shardId: 5, returned: node(9).toString() });
  });

  it('keeps allocating when the warning sink throws', () => {
    const placements = new Placements().set(1, c);
    const strategy = externalAllocationStrategy(new HashAllocationStrategy(), placements.getState, {
      onWarning: () => {
        throw new Error('logger down');
      },
    });
    expect([a, b]).toContain(strategy.allocate(1, [a, b], new Map()));
  });

  it('rejects bad arguments', () => {
    const getState = (): ExternalAllocationState => ({ explicitPlacements: new Map() });
    expect(() => externalAllocationStrategy(undefined as unknown as AllocationStrategy, getState)).toThrow(
      expect.objectContaining({ code: 'invalid_argument' }),
    );
    expect(() =>
      externalAllocationStrategy(new HashAllocationStrategy(), 'state' as unknown as () => ExternalAllocationState),
    ).toThrow(/getState/);
    const strategy = externalAllocationStrategy(new HashAllocationStrategy(), getState);
    expect(() => strategy.allocate(1, [], new Map())).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    expect(() => strategy.allocate(-1, [a], new Map())).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
  });
});

describe('externalAllocationStrategy warnings dedupe', () => {
  it('reports a situation once, and again only after it changed', () => {
    const cluster = new TestView([{ address: a }, { address: b, reachable: false }]);
    const { strategy, placements, warnings } = setup({ cluster });
    placements.set(42, b);
    for (let i = 0; i < 5; i++) strategy.allocate(42, [a, b], new Map());
    expect(warnings).toHaveLength(1);

    // Another reason for the same target is a new situation.
    strategy.allocate(42, [a], new Map());
    expect(warnings.map((w) => w.details['reason'])).toEqual(['unreachable', 'not a candidate']);

    // Honoured once, then broken again: reported again.
    cluster.set([{ address: a }, { address: b }]);
    expect(strategy.allocate(42, [a, b], new Map())).toBe(b);
    cluster.set([{ address: a }, { address: b, reachable: false }]);
    strategy.allocate(42, [a, b], new Map());
    expect(warnings).toHaveLength(3);
  });

  it('forgets a situation when the placement is removed or retargeted', () => {
    const { strategy, placements, warnings } = setup();
    placements.set(1, c);
    strategy.allocate(1, [a, b], new Map());
    placements.remove(1);
    strategy.rebalance(new Map(), [a, b], none);
    placements.set(1, c);
    strategy.allocate(1, [a, b], new Map());
    expect(warnings).toHaveLength(2);

    placements.set(1, node(5));
    strategy.allocate(1, [a, b], new Map());
    expect(warnings.map((w) => w.details['target'])).toEqual([c, c, node(5)].map(String));
  });

  it('shares one record between allocate and rebalance for the same situation', () => {
    const { strategy, placements, warnings } = setup();
    placements.set(4, c);
    strategy.allocate(4, [a, b], new Map());
    strategy.rebalance(shardMap([[a, [4]]]), [a, b], none);
    strategy.rebalance(shardMap([[a, [4]]]), [a, b], none);
    expect(warnings).toHaveLength(1);
  });
});

describe('externalAllocationStrategy.rebalance', () => {
  it('moves a pinned shard whose home differs from its reachable target, and leaves honoured pins alone', () => {
    const { strategy, placements } = setup();
    placements.set(1, b).set(2, a);
    expect(strategy.rebalance(shardMap([[a, [1, 2, 3]]]), [a, b], none)).toEqual(new Set([1]));
  });

  it('keeps a shard in place while its target is unreachable or not a candidate, with a warning', () => {
    const cluster = new TestView([{ address: a }, { address: b, reachable: false }]);
    const { strategy, placements, warnings } = setup({ cluster });
    placements.set(1, b).set(2, c);
    expect(strategy.rebalance(shardMap([[a, [1, 2]]]), [a, b], none).size).toBe(0);
    expect(warnings.map((w) => [w.details['shardId'], w.details['reason'], w.details['stayingOn']])).toEqual([
      [1, 'unreachable', a.toString()],
      [2, 'not a candidate', a.toString()],
    ]);
    // Once the target is reachable the pin is honoured at the next rebalance.
    cluster.set([{ address: a }, { address: b }]);
    expect(strategy.rebalance(shardMap([[a, [1, 2]]]), [a, b], none)).toEqual(new Set([1]));
  });

  it('never returns a shard in progress, pinned or suggested', () => {
    const fallback = new ScriptedFallback(undefined, new Set([3, 4]));
    const { strategy, placements } = setup({ fallback });
    placements.set(1, b);
    expect(strategy.rebalance(shardMap([[a, [1, 3, 4]]]), [a, b], new Set([1, 3]))).toEqual(new Set([4]));
  });

  it('unites the fallback suggestions for unpinned shards only', () => {
    const fallback = new ScriptedFallback(undefined, new Set([1, 2, 5]));
    const { strategy, placements } = setup({ fallback });
    placements.set(1, a).set(2, b).set(3, b);
    // 1 sits at its pin; 2 and 3 move for their pins, not for the fallback; 5 is an unpinned suggestion.
    expect(sorted(strategy.rebalance(shardMap([[a, [1, 2, 3, 5]]]), [a, b], none))).toEqual([2, 3, 5]);
  });

  it('does not pass on a fallback suggestion for a pinned shard whose target is unusable', () => {
    const fallback = new ScriptedFallback(undefined, new Set([1]));
    const { strategy, placements } = setup({ fallback });
    placements.set(1, c);
    expect(strategy.rebalance(shardMap([[a, [1]]]), [a, b], none).size).toBe(0);
  });

  it('gives the fallback the reachable candidates and pinned shards as the youngest', () => {
    const fallback = new ScriptedFallback();
    const cluster = new TestView([{ address: a }, { address: b }, { address: c, reachable: false }]);
    const { strategy, placements } = setup({ fallback, cluster });
    placements.set(1, a).set(2, a);
    strategy.rebalance(
      shardMap([
        [a, [1, 4, 2, 5]],
        [b, [6]],
      ]),
      [a, b, c],
      none,
    );
    const call = fallback.rebalanceCalls[0];
    expect(call?.candidates).toEqual([a, b].map(String));
    expect([...(call?.currentShards.get(a.toString()) ?? [])]).toEqual([4, 5, 1, 2]);
    expect([...(call?.currentShards.get(b.toString()) ?? [])]).toEqual([6]);
  });

  it('lets a least-shard fallback move unpinned shards off a node whose oldest shards are pinned', () => {
    const fallback = new LeastShardAllocationStrategy({ absoluteLimit: 100, relativeLimit: 1 });
    const { strategy, placements } = setup({ fallback });
    placements.set(1, a).set(2, a).set(3, a);
    expect(strategy.rebalance(shardMap([[a, [1, 2, 3, 4, 5]]]), [a, b], none)).toEqual(new Set([4, 5]));
  });

  it('handles 10,000 shards, 100 nodes and 1,000 pins in one pass with correct results', () => {
    const nodes = Array.from({ length: 100 }, (_, i) => new NodeAddress('app', `node-${i}`, 7700));
    const current = new Map(nodes.map((address, i) => [address.toString(), new Set(range(i * 100, 100))]));
    const placements = new Placements();
    // Pin every 10th shard to the next node: 1,000 pins, all of them misplaced.
    for (let shardId = 0; shardId < 10_000; shardId += 10)
      placements.set(shardId, nodes[(Math.floor(shardId / 100) + 1) % 100]!);
    const fallback = new LeastShardAllocationStrategy();
    const strategy = externalAllocationStrategy(fallback, placements.getState);
    const before = placements.reads;
    const moves = strategy.rebalance(current, nodes, none);
    expect(placements.reads - before).toBe(1);
    expect(moves.size).toBe(1000);
    expect([...moves].every((shardId) => shardId % 10 === 0)).toBe(true);
  });
});
