// Explain cannot drift from allocation: over random members (zones, reachability, status), cordons and one
// pin (none, an address, a selector; prefer or require), explain's decision for a shard without a home says
// `waiting` exactly when the external strategy gives it none, and once the strategy's choice is its home,
// the decision says `placement` exactly when the pin allows that home, `fallback` exactly when there is no pin.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ClusterView, MemberInfo, MemberStatus } from '../../src/cluster/member.js';
import { chooseHome } from '../../src/sharding/coordinator/allocation.js';
import { explainShard } from '../../src/sharding/coordinator/insight.js';
import { CoordinatorState } from '../../src/sharding/coordinator/state.js';
import type { CordonView } from '../../src/sharding/placements/cordon-view.js';
import {
  LeastShardAllocationStrategy,
  PlacementPin,
  externalAllocationStrategy,
  type PinLike,
} from '../../src/sharding/strategies/index.js';
import { isPinAware } from '../../src/sharding/strategies/pin-aware.js';
import { homeMatches } from '../../src/sharding/strategies/pin-matching.js';
import { node } from '../strategies/fixtures.js';
import { memberInfo } from '../support/members.js';

const SHARD = 0;

const memberArb = fc.record({
  zone: fc.constantFrom('a', 'b', 'c'),
  status: fc.constantFrom<MemberStatus>('up', 'up', 'up', 'leaving', 'joining'),
  reachable: fc.boolean(),
  cordoned: fc.boolean(),
  shards: fc.nat(3),
});

const pinArb = fc.option(
  fc.record({
    target: fc.oneof(
      fc.nat(6).map((n) => ({ address: n + 1 })),
      fc.constantFrom('zone=a', 'zone=b', 'zone=c', 'zone=d').map((selector) => ({ selector })),
    ),
    mode: fc.constantFrom('prefer' as const, 'require' as const),
  }),
  { nil: undefined },
);

describe('explain agrees with allocation', () => {
  it('waiting iff no home from the strategy; then placement iff the pin allows the home, fallback iff no pin', () => {
    fc.assert(
      fc.property(fc.array(memberArb, { minLength: 1, maxLength: 5 }), pinArb, (specs, pinSpec) => {
        const members: MemberInfo[] = specs.map((spec, i) => ({
          ...memberInfo({ address: node(i + 1), upNumber: i + 1, status: spec.status, reachable: spec.reachable }),
          attributes: { zone: spec.zone },
        }));
        const cordoned = new Set(specs.flatMap((spec, i) => (spec.cordoned ? [node(i + 1).toString()] : [])));
        const cordons: CordonView = {
          isCordoned: (address) => cordoned.has(address),
          list: () => [...cordoned].map((address) => ({ address })),
        };
        const view: ClusterView = { members: () => members };
        const pins = new Map<number, PinLike>();
        if (pinSpec !== undefined) {
          const target =
            'address' in pinSpec.target ? node(pinSpec.target.address).toString() : pinSpec.target.selector;
          pins.set(SHARD, PlacementPin.of(target, { mode: pinSpec.mode }));
        }
        const strategy = externalAllocationStrategy(
          new LeastShardAllocationStrategy({ cluster: view }),
          () => ({ explicitPlacements: pins }),
          { cluster: view },
        );
        if (!isPinAware(strategy)) throw new Error('the external strategy must be pin-aware');
        const state = new CoordinatorState(() => 0);
        // Every member registered a region holding a few other shards; allocation offers Up, uncordoned ones.
        let next = 100;
        for (const [i, spec] of specs.entries()) {
          const key = node(i + 1).toString();
          state.apply({ type: 'RegionRegistered', region: key });
          for (let s = 0; s < spec.shards; s++) state.apply({ type: 'ShardAllocated', shardId: next++, region: key });
        }
        const candidates = members
          .filter((m) => m.status === 'up' && !cordons.isCordoned(m.address.toString()))
          .map((m) => m.address);
        const explain = () =>
          explainShard(SHARD, { state, members, candidates, cordons, pins: strategy.pinContext(), listed: undefined });

        const before = explain();
        const choice = chooseHome(strategy, SHARD, candidates, state.shardMap());
        expect(before.home).toBeNull();
        expect(['unallocated', 'waiting']).toContain(before.decision);
        if (candidates.length > 0) expect(before.decision === 'waiting').toBe(choice === undefined);
        if (choice === undefined) return;
        expect(choice.problem).toBeUndefined();

        state.apply({ type: 'ShardAllocated', shardId: SHARD, region: choice.region });
        const after = explain();
        const pin = pins.get(SHARD) as PlacementPin | undefined;
        const allowed = pin !== undefined && homeMatches(pin, choice.region, strategy.pinContext().view);
        expect(after.home).toBe(choice.region);
        expect(after.decision === 'fallback').toBe(pin === undefined);
        expect(after.decision === 'placement').toBe(allowed);
        if (pin !== undefined && !allowed) expect(after.decision).toBe('placement-unavailable');
        const homeRow = after.nodes.find((n) => n.address === choice.region);
        expect(homeRow?.matches ?? null).toBe(pin === undefined ? null : allowed);
        expect(homeRow?.cordoned).toBe(cordoned.has(choice.region));
      }),
      { numRuns: 500 },
    );
  });
});
