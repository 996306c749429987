// Property: least-shard's phase 1 takes from regions in the exact reverse of the order allocate prefers
// them in (least suitable first), for random region sets: statuses, loads, ages (ties included) and
// candidate orders, observed through the public allocate and rebalance only.
import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import type { NodeAddress } from '../../src/cluster/address.js';
import type { MemberStatus } from '../../src/cluster/member.js';
import { describeRegions, membersByAddress, mostSuitable } from '../../src/sharding/strategies/allocation-strategy.js';
import { LeastShardAllocationStrategy, leastSuitableFirst } from '../../src/sharding/strategies/least-shard.js';
import { node, TestView, type MemberSpec } from './fixtures.js';

const pool: NodeAddress[] = Array.from({ length: 12 }, (_, i) => node(i + 1));
// Statuses that pass the rebalance gate: joining members and unreachable ones stop any rebalance.
const GATE_OPEN: readonly MemberStatus[] = ['up', 'leaving', 'exiting', 'down'];

const regionArb = fc.record({
  shards: fc.nat({ max: 25 }),
  upNumber: fc.integer({ min: 1, max: 4 }),
  status: fc.constantFrom(...GATE_OPEN),
  listed: fc.boolean(),
});

/** Allocate's order of the candidates, read off the strategy: the one it picks, then among the rest, ... */
function allocateOrder(
  strategy: LeastShardAllocationStrategy,
  candidates: ReadonlyArray<NodeAddress>,
  current: ReadonlyMap<string, ReadonlySet<number>>,
): NodeAddress[] {
  const remaining = [...candidates];
  const order: NodeAddress[] = [];
  while (remaining.length > 0) {
    const best = strategy.allocate(0, remaining, current);
    order.push(best);
    remaining.splice(remaining.indexOf(best), 1);
  }
  return order;
}

describe('LeastShardAllocationStrategy phase 1 order', () => {
  it('takes the excess of regions in the exact reverse of allocate order, up to the limit', () => {
    fc.assert(
      fc.property(
        fc.array(regionArb, { minLength: 1, maxLength: pool.length }),
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 0, max: 1_000 }),
        (regions, limit, rotation) => {
          const addresses = pool.slice(0, regions.length);
          const specs: MemberSpec[] = regions.map((r, i) => ({
            address: addresses[i] as NodeAddress,
            upNumber: r.upNumber,
            status: r.status,
          }));
          const current = new Map<string, Set<number>>();
          let next = 0;
          regions.forEach((r, i) => {
            if (r.shards === 0 && !r.listed) return;
            // Ids dealt from the top down so allocation order (oldest first) is not id order.
            current.set(String(addresses[i]), new Set(Array.from({ length: r.shards }, () => 10_000 - next++)));
          });
          // Candidate order must not matter: rotate it.
          const candidates = addresses.map((_, i) => addresses[(i + rotation) % addresses.length] as NodeAddress);
          const strategy = new LeastShardAllocationStrategy({
            absoluteLimit: limit,
            relativeLimit: 1,
            cluster: new TestView(specs),
          });

          const total = regions.reduce((sum, r) => sum + r.shards, 0);
          const optimal = Math.ceil(total / regions.length);
          const expected = allocateOrder(strategy, candidates, current)
            .reverse()
            .flatMap((address) => {
              const shards = [...(current.get(String(address)) ?? [])];
              return shards.slice(0, Math.max(0, shards.length - optimal));
            })
            .slice(0, limit);
          const moves = strategy.rebalance(current, candidates, new Set());
          // Phase 2 answers only when phase 1 has nothing; its order is not the subject here.
          if (expected.length > 0) expect([...moves]).toEqual(expected);
          else
            for (const shardId of moves)
              expect(regions.some((_, i) => current.get(String(addresses[i]))?.has(shardId))).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('orders any region set, app versions and reachability included, as repeated allocation reversed', () => {
    const versions = ['1.0.0', '1.2.0', '1.10.0', '2.0.0-RC1'];
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            shards: fc.nat({ max: 6 }),
            upNumber: fc.integer({ min: 1, max: 3 }),
            status: fc.constantFrom<MemberStatus>('up', 'weakly-up', 'leaving', 'exiting', 'down'),
            version: fc.constantFrom(...versions),
            reachable: fc.boolean(),
            known: fc.boolean(),
          }),
          { minLength: 1, maxLength: pool.length },
        ),
        (regions) => {
          const addresses = pool.slice(0, regions.length);
          const view = new TestView(
            regions.flatMap((r, i) =>
              r.known
                ? [
                    {
                      address: addresses[i] as NodeAddress,
                      upNumber: r.upNumber,
                      status: r.status,
                      appVersion: r.version,
                      reachable: r.reachable,
                    },
                  ]
                : [],
            ),
          );
          const current = new Map(
            regions.map((r, i) => [
              String(addresses[i]),
              new Set(Array.from({ length: r.shards }, (_, k) => i * 100 + k)),
            ]),
          );
          const described = describeRegions(addresses, current, membersByAddress(view));
          const byAllocation: string[] = [];
          const rest = [...described];
          while (rest.length > 0) {
            const best = mostSuitable(rest);
            byAllocation.push(best.key);
            rest.splice(rest.indexOf(best), 1);
          }
          expect(leastSuitableFirst(described).map((r) => r.key)).toEqual(byAllocation.reverse());
        },
      ),
      { numRuns: 500 },
    );
  });
});
