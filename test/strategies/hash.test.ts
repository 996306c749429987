// HashAllocationStrategy: home = sortedCandidates[shardId % n]; rebalance moves shards whose home changed.
import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { HashAllocationStrategy } from '../../src/sharding/strategies/hash.js';
import { node, range, shardMap, sorted } from './fixtures.js';

const [a, b, c, d] = [node(1), node(2), node(3), node(4)];
const none = new Set<number>();

describe('HashAllocationStrategy.allocate', () => {
  const strategy = new HashAllocationStrategy();

  it('indexes the candidates sorted by address string, whatever order they come in', () => {
    expect(range(0, 6).map((shard) => strategy.allocate(shard, [c, a, b], new Map()))).toEqual([a, b, c, a, b, c]);
  });

  it('sorts by string, so app@10.0.0.10 comes before app@10.0.0.2', () => {
    expect(strategy.allocate(0, [b, node(10)], new Map())).toEqual(node(10));
  });

  it('ignores the current load and duplicate candidates', () => {
    const loaded = shardMap([[a, range(0, 100)]]);
    expect(strategy.allocate(3, [a, b, a, c], loaded)).toBe(a);
    expect(strategy.allocate(4, [a, b, a, c], loaded)).toBe(b);
  });

  it('rejects bad arguments', () => {
    expect(() => strategy.allocate(1, [], new Map())).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    expect(() => strategy.allocate(-3, [a], new Map())).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
  });
});

describe('HashAllocationStrategy.rebalance', () => {
  const strategy = new HashAllocationStrategy();

  it('moves nothing when every shard is at its hash home', () => {
    const shards = shardMap([
      [a, [0, 3, 6]],
      [b, [1, 4]],
      [c, [2, 5]],
    ]);
    expect(strategy.rebalance(shards, [a, b, c], none).size).toBe(0);
  });

  it('moves the shards whose hash home changed when a node joins', () => {
    const shards = shardMap([
      [a, [0, 3, 6]],
      [b, [1, 4]],
      [c, [2, 5]],
    ]);
    // With d: 0,4 -> a; 1,5 -> b; 2,6 -> c; 3 -> d.
    expect(sorted(strategy.rebalance(shards, [a, b, c, d], none))).toEqual([3, 4, 5, 6]);
  });

  it('moves shards away from nodes that are no longer candidates', () => {
    const shards = shardMap([
      [a, [0, 2]],
      [b, [1, 3]],
    ]);
    expect(sorted(strategy.rebalance(shards, [a], none))).toEqual([1, 3]);
  });

  it('never returns a shard whose hand-off is already in progress', () => {
    const shards = shardMap([[a, [0, 1, 2, 3]]]);
    expect(sorted(strategy.rebalance(shards, [a, b], new Set([1])))).toEqual([3]);
  });

  it('does nothing without candidates', () => {
    expect(strategy.rebalance(shardMap([[a, [1]]]), [], none).size).toBe(0);
  });

  it('after one rebalance and re-allocation every shard sits at its hash home', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.nat({ max: 500 }), { maxLength: 60 }),
        fc.subarray([a, b, c, d], { minLength: 1 }),
        fc.subarray([a, b, c, d], { minLength: 1 }),
        (shardIds, before, after) => {
          const current = new Map<string, Set<number>>();
          for (const shardId of shardIds) {
            const home = strategy.allocate(shardId, before, current).toString();
            current.set(home, (current.get(home) ?? new Set()).add(shardId));
          }
          const moves = strategy.rebalance(current, after, none);
          for (const shards of current.values()) for (const shardId of moves) shards.delete(shardId);
          for (const shardId of moves) {
            const home = strategy.allocate(shardId, after, current).toString();
            current.set(home, (current.get(home) ?? new Set()).add(shardId));
          }
          expect(strategy.rebalance(current, after, none).size).toBe(0);
          for (const [home, shards] of current) {
            for (const shardId of shards) expect(strategy.allocate(shardId, after, current).toString()).toBe(home);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
