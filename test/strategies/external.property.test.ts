// Properties of externalAllocationStrategy over random clusters, placements and fallbacks: allocate
// never leaves the candidates, rebalance never returns a shard in progress or one pinned to an
// unusable target, and usable pins are always honoured.
import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import type { NodeAddress } from '../../src/cluster/address.js';
import type { MemberStatus } from '../../src/cluster/member.js';
import type { AllocationStrategy } from '../../src/sharding/strategies/allocation-strategy.js';
import { externalAllocationStrategy } from '../../src/sharding/strategies/external.js';
import { HashAllocationStrategy } from '../../src/sharding/strategies/hash.js';
import { LeastShardAllocationStrategy } from '../../src/sharding/strategies/least-shard.js';
import { LegacyLeastShardAllocationStrategy } from '../../src/sharding/strategies/legacy-least-shard.js';
import { node, TestView, type MemberSpec } from './fixtures.js';

const POOL = [1, 2, 3, 4, 5, 6].map(node);
const SHARDS = 40;

/** A misbehaving fallback: answers outside its candidates and suggests every allocated shard. */
class RogueFallback implements AllocationStrategy {
  constructor(private readonly answer: NodeAddress) {}
  allocate(): NodeAddress {
    return this.answer;
  }
  rebalance(currentShards: ReadonlyMap<string, ReadonlySet<number>>): ReadonlySet<number> {
    return new Set([...currentShards.values()].flatMap((shards) => [...shards]));
  }
}

const nodeIndex = fc.nat({ max: POOL.length - 1 });
const memberArb = fc.record({
  present: fc.boolean(),
  reachable: fc.boolean(),
  status: fc.constantFrom<MemberStatus>('up', 'up', 'leaving', 'down', 'joining'),
});
const scenarioArb = fc.record({
  candidates: fc.subarray(POOL, { minLength: 1 }),
  view: fc.option(fc.array(memberArb, { minLength: POOL.length, maxLength: POOL.length }), { nil: undefined }),
  pins: fc.array(fc.tuple(fc.nat({ max: SHARDS - 1 }), nodeIndex), { maxLength: 30 }),
  homes: fc.array(fc.option(nodeIndex, { nil: undefined }), { minLength: SHARDS, maxLength: SHARDS }),
  inProgress: fc.uniqueArray(fc.nat({ max: SHARDS - 1 }), { maxLength: 10 }),
  fallback: fc.constantFrom('hash', 'least', 'legacy', 'rogue'),
  rogueAnswer: nodeIndex,
});
type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

function build(scenario: Scenario) {
  const view =
    scenario.view === undefined
      ? undefined
      : new TestView(
          scenario.view.flatMap((m, i): MemberSpec[] =>
            m.present ? [{ address: POOL[i]!, reachable: m.reachable, status: m.status, upNumber: i }] : [],
          ),
        );
  const fallbacks: Record<Scenario['fallback'], () => AllocationStrategy> = {
    hash: () => new HashAllocationStrategy(),
    least: () => new LeastShardAllocationStrategy({ cluster: view }),
    legacy: () => new LegacyLeastShardAllocationStrategy({ cluster: view }),
    rogue: () => new RogueFallback(POOL[scenario.rogueAnswer]!),
  };
  const pins = new Map<number, NodeAddress>(scenario.pins.map(([shardId, i]) => [shardId, POOL[i]!]));
  const current = new Map<string, Set<number>>();
  scenario.homes.forEach((home, shardId) => {
    if (home === undefined) return;
    const key = POOL[home]!.toString();
    current.set(key, (current.get(key) ?? new Set()).add(shardId));
  });
  const strategy = externalAllocationStrategy(fallbacks[scenario.fallback](), () => ({ explicitPlacements: pins }), {
    cluster: view,
    onWarning: () => undefined,
  });
  const usable = (target: NodeAddress): boolean => {
    if (!scenario.candidates.some((c) => c.equals(target))) return false;
    if (scenario.view === undefined) return true;
    const m = scenario.view[POOL.findIndex((p) => p.equals(target))];
    return m !== undefined && m.present && m.reachable && m.status !== 'down';
  };
  return { strategy, pins, current, usable, inProgress: new Set(scenario.inProgress) };
}

describe('externalAllocationStrategy properties', () => {
  it('allocate always returns a candidate, and the pin whenever the pin is usable', () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const { strategy, pins, current, usable } = build(scenario);
        for (let shardId = 0; shardId < SHARDS; shardId++) {
          const home = strategy.allocate(shardId, scenario.candidates, current);
          expect(scenario.candidates).toContain(home);
          const pin = pins.get(shardId);
          if (pin !== undefined && usable(pin)) expect(home?.equals(pin)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('rebalance never returns a shard in progress, nor one pinned to an unusable target, and moves every misplaced usable pin', () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const { strategy, pins, current, usable, inProgress } = build(scenario);
        const moves = strategy.rebalance(current, scenario.candidates, inProgress);
        for (const shardId of moves) {
          expect(inProgress.has(shardId)).toBe(false);
          const pin = pins.get(shardId);
          if (pin !== undefined) expect(usable(pin)).toBe(true);
        }
        for (const [home, shards] of current) {
          for (const shardId of shards) {
            const pin = pins.get(shardId);
            if (pin === undefined || inProgress.has(shardId)) continue;
            expect(moves.has(shardId)).toBe(usable(pin) && pin.toString() !== home);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
