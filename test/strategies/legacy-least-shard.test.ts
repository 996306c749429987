// LegacyLeastShardAllocationStrategy: Akka/Pekko's threshold-based rebalance, kept for parity.
import { describe, it, expect } from 'vitest';
import { LegacyLeastShardAllocationStrategy } from '../../src/sharding/strategies/legacy-least-shard.js';
import { node, nodeShards, range, shardMap, sorted, TestView, type MemberSpec } from './fixtures.js';

const [a, b, c] = [node(1), node(2), node(3)];
const none = new Set<number>();

describe('LegacyLeastShardAllocationStrategy options', () => {
  it('defaults to rebalanceThreshold 1 and maxSimultaneousRebalance 3', () => {
    const strategy = new LegacyLeastShardAllocationStrategy();
    expect([strategy.rebalanceThreshold, strategy.maxSimultaneousRebalance]).toEqual([1, 3]);
  });

  it.each([
    { rebalanceThreshold: 0 },
    { rebalanceThreshold: 1.5 },
    { maxSimultaneousRebalance: 0 },
    { maxSimultaneousRebalance: -2 },
  ])('rejects %j', (options) => {
    expect(() => new LegacyLeastShardAllocationStrategy(options)).toThrow(
      expect.objectContaining({ code: 'invalid_argument' }),
    );
  });
});

describe('LegacyLeastShardAllocationStrategy', () => {
  it('allocates like the modern strategy: fewest shards among healthy nodes', () => {
    const strategy = new LegacyLeastShardAllocationStrategy();
    expect(strategy.allocate(7, [a, b, c], nodeShards([1, 2], [3]))).toBe(c);
    const view = new TestView([{ address: a }, { address: b, reachable: false }]);
    expect(new LegacyLeastShardAllocationStrategy({ cluster: view }).allocate(7, [a, b], shardMap([[a, [1]]]))).toBe(a);
  });

  it('with the defaults moves one shard per round, the lowest id of the most loaded node', () => {
    const shards = shardMap([
      [a, [9, 4, 7, 5]],
      [b, []],
    ]);
    expect(new LegacyLeastShardAllocationStrategy().rebalance(shards, [a, b], none)).toEqual(new Set([4]));
  });

  it('moves min(difference - threshold, threshold, room) shards', () => {
    const shards = shardMap([[a, range(0, 10)]]);
    // difference 10, threshold 3: min(7, 3, 3) = 3.
    const strategy = new LegacyLeastShardAllocationStrategy({ rebalanceThreshold: 3 });
    expect(sorted(strategy.rebalance(shards, [a, b], none))).toEqual([0, 1, 2]);
    // One hand-off already running leaves room for 2; the running one is not picked again.
    expect(sorted(strategy.rebalance(shards, [a, b], new Set([0])))).toEqual([1, 2]);
    // difference 4, threshold 3: min(1, 3, 3) = 1.
    expect(
      sorted(
        strategy.rebalance(
          shardMap([
            [a, range(0, 5)],
            [b, [20]],
          ]),
          [a, b],
          none,
        ),
      ),
    ).toEqual([0]);
  });

  it('does nothing while the difference is within the threshold', () => {
    expect(
      new LegacyLeastShardAllocationStrategy().rebalance(
        shardMap([
          [a, [1, 2]],
          [b, [3]],
        ]),
        [a, b],
        none,
      ).size,
    ).toBe(0);
  });

  it('does nothing once maxSimultaneousRebalance hand-offs are in progress', () => {
    const shards = shardMap([[a, range(0, 10)]]);
    const strategy = new LegacyLeastShardAllocationStrategy({ maxSimultaneousRebalance: 2 });
    expect(strategy.rebalance(shards, [a, b], new Set([0])).size).toBe(1);
    expect(strategy.rebalance(shards, [a, b], new Set([0, 1])).size).toBe(0);
  });

  it('measures the difference against the most suitable node, not a leaving one', () => {
    const specs: MemberSpec[] = [{ address: a }, { address: b, status: 'leaving' }, { address: c }];
    const shards = shardMap([
      [a, [1, 2, 3]],
      [c, [4, 5]],
    ]);
    const strategy = new LegacyLeastShardAllocationStrategy({ cluster: new TestView(specs) });
    // b (leaving, 0 shards) is not where shards would go; c (2) is, and 3 - 2 is within the threshold.
    expect(strategy.rebalance(shards, [a, b, c], none).size).toBe(0);
  });

  it('does nothing while the cluster is unsettled', () => {
    const shards = shardMap([[a, range(0, 10)]]);
    const unreachable = new TestView([{ address: a }, { address: b, reachable: false }]);
    expect(new LegacyLeastShardAllocationStrategy({ cluster: unreachable }).rebalance(shards, [a, b], none).size).toBe(
      0,
    );
    const versions = new TestView([
      { address: a, appVersion: '2' },
      { address: b, appVersion: '3' },
    ]);
    expect(new LegacyLeastShardAllocationStrategy({ cluster: versions }).rebalance(shards, [a, b], none).size).toBe(0);
    expect(new LegacyLeastShardAllocationStrategy().rebalance(shards, [], none).size).toBe(0);
  });
});
