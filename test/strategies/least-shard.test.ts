// LeastShardAllocationStrategy: the allocate ordering, the rebalance gate, the limit formula and both phases.
import { describe, it, expect } from 'vitest';
import { LeastShardAllocationStrategy } from '../../src/sharding/strategies/least-shard.js';
import { healthyView, node, nodeShards, range, shardMap, sorted, TestView, type MemberSpec } from './fixtures.js';

const [a, b, c, d] = [node(1), node(2), node(3), node(4)];
const lifted = { absoluteLimit: 1_000_000, relativeLimit: 1 };
const none = new Set<number>();

describe('LeastShardAllocationStrategy.allocate', () => {
  const allocateWith = (specs: MemberSpec[], shards: Map<string, Set<number>>) =>
    new LeastShardAllocationStrategy({ cluster: new TestView(specs) }).allocate(0, [a, b], shards);
  const bBusier = shardMap([[b, range(0, 5)]]);

  it('prefers a reachable member over an unreachable one with fewer shards', () => {
    expect(allocateWith([{ address: a, reachable: false }, { address: b }], bBusier)).toBe(b);
  });

  it.each(['leaving', 'exiting', 'down'] as const)('prefers an up member over a %s one with fewer shards', (status) => {
    expect(allocateWith([{ address: a, status }, { address: b }], bBusier)).toBe(b);
  });

  it('prefers reachable over not-leaving', () => {
    expect(
      allocateWith(
        [
          { address: a, reachable: false },
          { address: b, status: 'leaving' },
        ],
        new Map(),
      ),
    ).toBe(b);
  });

  it('prefers the highest app version, compared numerically, over fewer shards', () => {
    expect(
      allocateWith(
        [
          { address: a, appVersion: '1.9.0' },
          { address: b, appVersion: '1.10.0' },
        ],
        bBusier,
      ),
    ).toBe(b);
  });

  it('prefers not-leaving over a higher app version', () => {
    const specs: MemberSpec[] = [
      { address: a, appVersion: '2.0.0', status: 'leaving' },
      { address: b, appVersion: '1.0.0' },
    ];
    expect(allocateWith(specs, new Map())).toBe(b);
  });

  it('prefers fewer shards, then the oldest member, then the lowest address', () => {
    const specs: MemberSpec[] = [
      { address: a, upNumber: 1 },
      { address: b, upNumber: 2 },
    ];
    expect(allocateWith(specs, nodeShards([1, 2], [3]))).toBe(b);
    const older: MemberSpec[] = [
      { address: a, upNumber: 7 },
      { address: b, upNumber: 3 },
    ];
    expect(allocateWith(older, nodeShards([1], [2]))).toBe(b);
    const twins: MemberSpec[] = [
      { address: b, upNumber: 1 },
      { address: a, upNumber: 1 },
    ];
    expect(new LeastShardAllocationStrategy({ cluster: new TestView(twins) }).allocate(0, [b, a], new Map())).toBe(a);
  });

  it('without a view picks the fewest shards, counting missing candidates as empty', () => {
    const strategy = new LeastShardAllocationStrategy();
    expect(strategy.allocate(9, [a, b, c], nodeShards([1], [2]))).toBe(c);
    expect(strategy.allocate(9, [c, b, a], nodeShards([1], [2], [3, 4]))).toBe(a);
  });

  it('rejects bad arguments without touching anything', () => {
    const strategy = new LeastShardAllocationStrategy();
    expect(() => strategy.allocate(0, [], new Map())).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    expect(() => strategy.allocate(-1, [a], new Map())).toThrow(/non-negative integer/);
    expect(() => strategy.allocate(1.5, [a], new Map())).toThrow(/non-negative integer/);
  });
});

describe('LeastShardAllocationStrategy options', () => {
  it('defaults to absoluteLimit 20 and relativeLimit 0.1', () => {
    const strategy = new LeastShardAllocationStrategy();
    expect([strategy.absoluteLimit, strategy.relativeLimit]).toEqual([20, 0.1]);
  });

  it.each([
    { absoluteLimit: -1 },
    { absoluteLimit: 2.5 },
    { absoluteLimit: Number.NaN },
    { relativeLimit: -0.1 },
    { relativeLimit: Number.NaN },
  ])('rejects %j', (options) => {
    expect(() => new LeastShardAllocationStrategy(options)).toThrow(
      expect.objectContaining({ code: 'invalid_argument' }),
    );
  });

  it('computes limit = max(1, min(floor(relativeLimit * shards), absoluteLimit))', () => {
    const strategy = new LeastShardAllocationStrategy();
    expect(strategy.limitFor(5)).toBe(1);
    expect(strategy.limitFor(100)).toBe(10);
    expect(strategy.limitFor(159)).toBe(15);
    expect(strategy.limitFor(10_000)).toBe(20);
    expect(new LeastShardAllocationStrategy({ absoluteLimit: 0 }).limitFor(1000)).toBe(1);
  });
});

describe('LeastShardAllocationStrategy.rebalance gate', () => {
  const unbalanced = shardMap([[a, range(0, 10)]]);
  const rebalanceWith = (specs: MemberSpec[]) =>
    new LeastShardAllocationStrategy({ cluster: new TestView(specs) }).rebalance(unbalanced, [a, b], none);

  it('moves shards when the cluster is settled (control case)', () => {
    expect(rebalanceWith([{ address: a }, { address: b }]).size).toBeGreaterThan(0);
  });

  it('does nothing without candidates or without shards', () => {
    const strategy = new LeastShardAllocationStrategy();
    expect(strategy.rebalance(unbalanced, [], none).size).toBe(0);
    expect(strategy.rebalance(shardMap([[a, []]]), [a, b], none).size).toBe(0);
  });

  it('does nothing while any rebalance is in progress', () => {
    expect(new LeastShardAllocationStrategy().rebalance(unbalanced, [a, b], new Set([99])).size).toBe(0);
  });

  it('does nothing when app versions differ', () => {
    expect(
      rebalanceWith([
        { address: a, appVersion: '1.0.0' },
        { address: b, appVersion: '1.1.0' },
      ]).size,
    ).toBe(0);
  });

  it('does nothing when any member is unreachable, even one that is not a candidate', () => {
    expect(rebalanceWith([{ address: a }, { address: b }, { address: c, reachable: false }]).size).toBe(0);
  });

  it.each(['joining', 'weakly-up'] as const)('does nothing while a member is %s', (status) => {
    expect(rebalanceWith([{ address: a }, { address: b }, { address: c, status }]).size).toBe(0);
  });

  it('does nothing when the view does not know a candidate yet', () => {
    expect(rebalanceWith([{ address: a }]).size).toBe(0);
  });

  it('counts every candidate as healthy without a view', () => {
    expect(new LeastShardAllocationStrategy().rebalance(unbalanced, [a, b], none)).toEqual(new Set([0]));
  });
});

describe('LeastShardAllocationStrategy.rebalance phases', () => {
  it('phase 1 takes the oldest shards in allocation order, not the lowest ids', () => {
    const shards = shardMap([[a, [50, 3, 70, 1, 9, 4]]]);
    // 6 shards over 2 regions: optimal 3, so a's three oldest go.
    expect(new LeastShardAllocationStrategy(lifted).rebalance(shards, [a, b], none)).toEqual(new Set([50, 3, 70]));
  });

  it('phase 1 takes every excess from every region above optimal', () => {
    // 18 shards over 4 regions: optimal 5; a is 5 over, b 2 over.
    const shards = shardMap([
      [c, [100]],
      [b, range(10, 7)],
      [a, range(20, 10)],
    ]);
    const moves = new LeastShardAllocationStrategy(lifted).rebalance(shards, [a, b, c, d], none);
    expect(sorted(moves)).toEqual([...range(10, 2), ...range(20, 5)]);
  });

  it('phase 1 fills the limit from the most loaded region first', () => {
    const shards = shardMap([
      [b, range(10, 7)],
      [a, range(20, 10)],
      [c, [100]],
    ]);
    const strategy = new LeastShardAllocationStrategy({ absoluteLimit: 6, relativeLimit: 1 });
    expect(sorted(strategy.rebalance(shards, [c, b, a, d], none))).toEqual([10, ...range(20, 5)]);
  });

  it('phase 1 takes from the youngest of equally loaded regions first (highest upNumber), not by address', () => {
    // d joined last with nothing; a, b, c hold 4 each: optimal 3, one excess shard each. Ages do not follow
    // addresses: c is the oldest, then a, then b (the youngest of the three).
    const view = new TestView([
      { address: a, upNumber: 2 },
      { address: b, upNumber: 3 },
      { address: c, upNumber: 1 },
      { address: d, upNumber: 4 },
    ]);
    const shards = shardMap([
      [a, range(10, 4)],
      [b, range(20, 4)],
      [c, range(30, 4)],
    ]);
    const all = new LeastShardAllocationStrategy({ ...lifted, cluster: view }).rebalance(shards, [a, b, c, d], none);
    expect([...all]).toEqual([20, 10, 30]);
    const one = new LeastShardAllocationStrategy({ absoluteLimit: 1, relativeLimit: 1, cluster: view });
    expect([...one.rebalance(shards, [a, b, c, d], none)]).toEqual([20]);
  });

  it('phase 1 takes from a leaving region before a more loaded up one', () => {
    const view = new TestView([
      { address: a, upNumber: 1 },
      { address: b, upNumber: 2, status: 'leaving' },
      { address: c, upNumber: 3 },
    ]);
    // 15 shards over 3 regions: optimal 5; a is 4 over, b 1 over.
    const shards = shardMap([
      [a, range(10, 9)],
      [b, range(20, 6)],
    ]);
    const strategy = new LeastShardAllocationStrategy({ absoluteLimit: 2, relativeLimit: 1, cluster: view });
    expect([...strategy.rebalance(shards, [a, b, c], none)]).toEqual([20, 10]);
  });

  it('phase 1 without a view takes equally loaded regions from the highest address down', () => {
    const shards = shardMap([
      [a, range(10, 3)],
      [b, range(20, 3)],
    ]);
    const strategy = new LeastShardAllocationStrategy({ absoluteLimit: 1, relativeLimit: 1 });
    expect([...strategy.rebalance(shards, [a, b, c], none)]).toEqual([20]);
  });

  it('phase 1 applies the default limits (10% of shards, at most 20)', () => {
    const shards = shardMap([[a, range(0, 100)]]);
    expect(new LeastShardAllocationStrategy().rebalance(shards, [a, b], none)).toEqual(new Set(range(0, 10)));
    const many = shardMap([[a, range(0, 1000)]]);
    expect(new LeastShardAllocationStrategy().rebalance(many, [a, b], none)).toEqual(new Set(range(0, 20)));
  });

  it('phase 2 takes the oldest shard of regions at optimal when some region is 2 or more below', () => {
    // 13 shards over 4 regions: optimal 4, nobody above it; d holds 1, so it lacks (4 - 1) - 1 = 2.
    const shards = shardMap([
      [a, [5, 1, 2, 3]],
      [b, [15, 11, 12, 13]],
      [c, [25, 21, 22, 23]],
      [d, [30]],
    ]);
    expect(new LeastShardAllocationStrategy(lifted).rebalance(shards, [a, b, c, d], none)).toEqual(new Set([5, 15]));
    const capped = new LeastShardAllocationStrategy({ absoluteLimit: 1, relativeLimit: 1 });
    expect(capped.rebalance(shards, [a, b, c, d], none)).toEqual(new Set([5]));
  });

  it('phase 2 does nothing when every region is within one of optimal', () => {
    const shards = shardMap([
      [a, range(0, 4)],
      [b, range(10, 4)],
      [c, range(20, 3)],
    ]);
    expect(new LeastShardAllocationStrategy(lifted).rebalance(shards, [a, b, c], none).size).toBe(0);
  });

  it('neither counts nor picks shards on nodes that are not candidates', () => {
    const shards = shardMap([
      [c, range(100, 50)],
      [a, [1, 2]],
      [b, [3, 4]],
    ]);
    expect(new LeastShardAllocationStrategy(lifted).rebalance(shards, [a, b], none).size).toBe(0);
  });

  it('works with a healthy view exactly as without one', () => {
    const shards = shardMap([
      [a, range(0, 40)],
      [b, range(40, 2)],
    ]);
    const plain = new LeastShardAllocationStrategy().rebalance(shards, [a, b, c], none);
    const viewed = new LeastShardAllocationStrategy({ cluster: healthyView([a, b, c]) }).rebalance(
      shards,
      [a, b, c],
      none,
    );
    expect(viewed).toEqual(plain);
    expect(plain).toEqual(new Set(range(0, 4)));
  });
});
