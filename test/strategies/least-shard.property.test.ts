// Property: with the per-round limits lifted, rebalance + re-allocation through the strategy evens
// out any allocation (up to 100 regions x 1,000 shards) to max - min <= 1 within 5 rounds.
import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import type { NodeAddress } from '../../src/cluster/address.js';
import { LeastShardAllocationStrategy } from '../../src/sharding/strategies/least-shard.js';
import type { AllocationStrategy } from '../../src/sharding/strategies/allocation-strategy.js';
import { NodeAddress as Address } from '../../src/cluster/address.js';

const candidatesPool: NodeAddress[] = Array.from({ length: 100 }, (_, i) => new Address('app', `node-${i}`, 7700));

interface RegionPlan {
  readonly count: number;
  /** An empty region may be absent from the map instead of mapped to an empty set. */
  readonly listed: boolean;
}

/** Shard ids 0..total-1, dealt out in a scrambled order so allocation order differs from id order. */
function buildAllocation(plans: ReadonlyArray<RegionPlan>, stride: number): Map<string, Set<number>> {
  const total = plans.reduce((sum, plan) => sum + plan.count, 0);
  const step = coprimeStep(total, stride);
  const current = new Map<string, Set<number>>();
  let next = 0;
  plans.forEach((plan, i) => {
    if (plan.count === 0 && !plan.listed) return;
    const shards = new Set<number>();
    for (let k = 0; k < plan.count; k++) shards.add((next++ * step) % Math.max(total, 1));
    current.set(candidatesPool[i]!.toString(), shards);
  });
  return current;
}

function coprimeStep(total: number, stride: number): number {
  const gcd = (x: number, y: number): number => (y === 0 ? x : gcd(y, x % y));
  let step = stride;
  while (total > 0 && gcd(step, total) !== 1) step++;
  return step;
}

function spread(current: ReadonlyMap<string, ReadonlySet<number>>, candidates: ReadonlyArray<NodeAddress>): number {
  const sizes = candidates.map((address) => current.get(address.toString())?.size ?? 0);
  return Math.max(...sizes) - Math.min(...sizes);
}

/** One coordinator round: hand off what rebalance chose, then allocate each shard through the strategy. */
function applyRound(
  strategy: AllocationStrategy,
  current: Map<string, Set<number>>,
  candidates: ReadonlyArray<NodeAddress>,
): { moved: number; strayHomes: number } {
  const moves = strategy.rebalance(current, candidates, new Set());
  for (const shards of current.values()) {
    for (const shardId of shards) if (moves.has(shardId)) shards.delete(shardId);
  }
  const candidateKeys = new Set(candidates.map(String));
  let strayHomes = 0;
  for (const shardId of moves) {
    // These strategies always answer (only a hard placement rule may say "no home now").
    const home = String(strategy.allocate(shardId, candidates, current));
    if (!candidateKeys.has(home)) strayHomes++;
    let shards = current.get(home);
    if (shards === undefined) current.set(home, (shards = new Set()));
    shards.add(shardId);
  }
  return { moved: moves.size, strayHomes };
}

describe('LeastShardAllocationStrategy convergence', () => {
  it('reaches max - min <= 1 within 5 rounds from any allocation, with limits lifted', () => {
    const plan = fc.record({ count: fc.nat({ max: 1000 }), listed: fc.boolean() });
    fc.assert(
      fc.property(
        fc.array(plan, { minLength: 1, maxLength: 100, size: 'max' }),
        fc.integer({ min: 1, max: 997 }),
        (plans, stride) => {
          const candidates = candidatesPool.slice(0, plans.length);
          const current = buildAllocation(plans, stride);
          const total = plans.reduce((sum, p) => sum + p.count, 0);
          const strategy = new LeastShardAllocationStrategy({ absoluteLimit: Infinity, relativeLimit: 1 });
          let rounds = 0;
          while (spread(current, candidates) > 1 && rounds < 5) {
            expect(applyRound(strategy, current, candidates).strayHomes).toBe(0);
            rounds++;
          }
          expect(spread(current, candidates)).toBeLessThanOrEqual(1);
          // Nothing lost or duplicated on the way.
          const all = [...current.values()].flatMap((shards) => [...shards]);
          expect(all.length).toBe(total);
          expect(new Set(all).size).toBe(total);
          // Once even, the strategy stops asking for moves.
          expect(strategy.rebalance(current, candidates, new Set()).size).toBe(0);
        },
      ),
      { numRuns: 200 },
    );
  });
});
