// The contract with actor-ts: our strategies, through asActorTsStrategy, are actor-ts AllocationStrategies over
// actor-ts's own NodeAddress objects. The shapes below are written out from pathosDev/actor-ts (commit d219e970):
// src/cluster/sharding/AllocationStrategy.ts and src/cluster/NodeAddress.ts, instance side only (what a strategy
// sees). The type-level checks fail to compile when our exports drift from them; the behaviour checks run
// allocate and rebalance as actor-ts's coordinator calls them.
import { describe, expect, expectTypeOf, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import { ActorTsError } from '../../src/errors.js';
import { asActorTsStrategy, type ActorTsAllocationStrategy } from '../../src/sharding/strategies/actor-ts.js';
import { externalAllocationStrategy } from '../../src/sharding/strategies/external.js';
import { HashAllocationStrategy } from '../../src/sharding/strategies/hash.js';
import { LeastShardAllocationStrategy } from '../../src/sharding/strategies/least-shard.js';
import { PlacementPin } from '../../src/sharding/placements/placement-pin.js';

/** actor-ts's NodeAddress as a strategy sees it (its constructor, statics and toJSON left out). */
class ActorTsNodeAddress {
  constructor(
    readonly systemName: string,
    readonly host: string,
    readonly port: number,
    readonly incarnation?: string,
  ) {}
  toString(): string {
    return `${this.systemName}@${this.host}:${this.port}`;
  }
  equals(other: ActorTsNodeAddress): boolean {
    return this.systemName === other.systemName && this.host === other.host && this.port === other.port;
  }
  compareTo(other: ActorTsNodeAddress): number {
    return this.toString().localeCompare(other.toString());
  }
}

/** actor-ts's AllocationStrategy, word for word in its types. */
interface ActorTsStrategy {
  allocate(
    shardId: number,
    candidates: ReadonlyArray<ActorTsNodeAddress>,
    currentShards: ReadonlyMap<string, ReadonlySet<number>>,
  ): ActorTsNodeAddress;
  rebalance(
    currentShards: ReadonlyMap<string, ReadonlySet<number>>,
    candidates: ReadonlyArray<ActorTsNodeAddress>,
    rebalanceInProgress: ReadonlySet<number>,
  ): Set<number>;
}

/** What actor-ts's coordinator does with an answer: find the region whose node `equals` it. */
function coordinatorAccepts(answer: ActorTsNodeAddress, candidates: ReadonlyArray<ActorTsNodeAddress>): boolean {
  return candidates.some((candidate) => candidate.equals(answer));
}

const [a, b, c] = [1, 2, 3].map((n) => new ActorTsNodeAddress('app', `10.0.0.${n}`, 7700, `incarnation-${n}`)) as [
  ActorTsNodeAddress,
  ActorTsNodeAddress,
  ActorTsNodeAddress,
];
const shards = (entries: ReadonlyArray<readonly [ActorTsNodeAddress, number[]]>): Map<string, Set<number>> =>
  new Map(entries.map(([address, ids]) => [address.toString(), new Set(ids)]));

describe('asActorTsStrategy: types', () => {
  it('makes the external, least-shard and hash strategies assignable to actor-ts AllocationStrategy', () => {
    const pins = { explicitPlacements: new Map<number, PlacementPin>() };
    const external: ActorTsStrategy = asActorTsStrategy(
      externalAllocationStrategy(new LeastShardAllocationStrategy(), () => pins),
    );
    const least: ActorTsStrategy = asActorTsStrategy(new LeastShardAllocationStrategy());
    const hash: ActorTsStrategy = asActorTsStrategy(new HashAllocationStrategy());
    expectTypeOf(asActorTsStrategy<ActorTsNodeAddress>(new HashAllocationStrategy())).toExtend<ActorTsStrategy>();
    expectTypeOf<ActorTsAllocationStrategy<ActorTsNodeAddress>>().toExtend<ActorTsStrategy>();
    // allocate answers the candidates' own type (never undefined), rebalance a mutable Set.
    expectTypeOf(least.allocate).returns.toEqualTypeOf<ActorTsNodeAddress>();
    expectTypeOf(hash.rebalance).returns.toEqualTypeOf<Set<number>>();
    expect([external, least, hash].every((s) => typeof s.allocate === 'function')).toBe(true);
  });

  it('is needed: our own strategy is not an actor-ts one (rebalance answers a ReadonlySet)', () => {
    // @ts-expect-error -- actor-ts wants Set<number> from rebalance, and a home from allocate, never undefined.
    const raw: ActorTsStrategy = externalAllocationStrategy(new HashAllocationStrategy(), () => ({
      explicitPlacements: new Map(),
    }));
    expect(raw).toBeDefined();
  });

  it('lets our NodeAddress stand where actor-ts reads an address: systemName, host, port, equals, compareTo', () => {
    type AddressAsStrategiesUseIt = Pick<
      ActorTsNodeAddress,
      'systemName' | 'host' | 'port' | 'toString' | 'equals' | 'compareTo'
    >;
    expectTypeOf<NodeAddress>().toExtend<AddressAsStrategiesUseIt>();
    const ours: AddressAsStrategiesUseIt = NodeAddress.parse('app@10.0.0.1:7700');
    expect(ours.equals(a)).toBe(true);
    expect(ours.compareTo(b)).toBeLessThan(0);
  });
});

describe('asActorTsStrategy: behaviour', () => {
  it('returns one of the candidates it was given, the very object, for every built-in strategy', () => {
    const pins = { explicitPlacements: new Map([[5, PlacementPin.of('app@10.0.0.3:7700')]]) };
    const strategies = [
      asActorTsStrategy<ActorTsNodeAddress>(new HashAllocationStrategy()),
      asActorTsStrategy<ActorTsNodeAddress>(new LeastShardAllocationStrategy()),
      asActorTsStrategy<ActorTsNodeAddress>(externalAllocationStrategy(new LeastShardAllocationStrategy(), () => pins)),
    ];
    const candidates = [a, b, c];
    const current = shards([
      [a, [1, 2]],
      [b, [3]],
    ]);
    for (const strategy of strategies) {
      for (const shardId of [0, 4, 5, 11]) {
        const answer = strategy.allocate(shardId, candidates, current);
        expect(candidates).toContain(answer);
        expect(coordinatorAccepts(answer, candidates)).toBe(true);
      }
    }
    // The external strategy honours the pin, the least-shard one picks the empty node: both are c.
    expect(strategies[2]?.allocate(5, candidates, current)).toBe(c);
    expect(strategies[1]?.allocate(9, candidates, current)).toBe(c);
  });

  it('places a shard whose require pin no candidate satisfies on the least-loaded candidate, and says so', () => {
    const warnings: Array<{ message: string; details: object }> = [];
    const pins = { explicitPlacements: new Map([[7, PlacementPin.of('zone=eu-west', { mode: 'require' })]]) };
    const inner = externalAllocationStrategy(new HashAllocationStrategy(), () => pins);
    // Our strategy alone has no home for it...
    expect(
      inner.allocate(
        7,
        [a, b, c].map((x) => NodeAddress.parse(x.toString())),
        new Map(),
      ),
    ).toBeUndefined();
    // ...actor-ts gets one, the node with the fewest shards.
    const strategy = asActorTsStrategy<ActorTsNodeAddress>(inner, {
      onWarning: (message, details) => warnings.push({ message, details }),
    });
    const answer = strategy.allocate(
      7,
      [a, b, c],
      shards([
        [a, [1, 2]],
        [b, [3]],
        [c, [4, 5]],
      ]),
    );
    expect(answer).toBe(b);
    expect(warnings).toEqual([
      { message: expect.stringMatching(/require pin/), details: { shardId: 7, home: b.toString() } },
    ]);
  });

  it('leaves a shard whose require pin nothing satisfies where it is, and moves it once a node matches', () => {
    const pins = { explicitPlacements: new Map([[7, PlacementPin.of('app@10.0.0.3:7700', { mode: 'require' })]]) };
    const inner = externalAllocationStrategy(new HashAllocationStrategy(), () => pins);
    const current = shards([
      [a, [7]],
      [b, []],
    ]);
    const ours = [a, b].map((x) => NodeAddress.parse(x.toString()));
    // Alone, our strategy hands it off (it would then wait without a home)...
    expect(inner.rebalance(current, ours, new Set()).has(7)).toBe(true);
    // ...under actor-ts it would only land on a or b again, every round: it stays.
    const strategy = asActorTsStrategy<ActorTsNodeAddress>(inner);
    expect(strategy.rebalance(current, [a, b], new Set()).has(7)).toBe(false);
    // With c a candidate the pin can be honoured: it moves, and allocate sends it to c.
    expect(strategy.rebalance(current, [a, b, c], new Set()).has(7)).toBe(true);
    expect(strategy.allocate(7, [a, b, c], current)).toBe(c);
  });

  it('breaks a load tie by the candidates own compareTo', () => {
    const pins = { explicitPlacements: new Map([[7, PlacementPin.of('zone=eu-west', { mode: 'require' })]]) };
    const strategy = asActorTsStrategy<ActorTsNodeAddress>(
      externalAllocationStrategy(new HashAllocationStrategy(), () => pins),
    );
    expect(strategy.allocate(7, [c, b, a], new Map())).toBe(a);
  });

  it('rebalances to a fresh mutable Set, passing actor-ts shard maps through', () => {
    const strategy = asActorTsStrategy<ActorTsNodeAddress>(new HashAllocationStrategy());
    // Hash homes over sorted [a, b]: even shards on a, odd on b; shard 2 on b and 3 on a are misplaced.
    const moves = strategy.rebalance(
      shards([
        [a, [0, 3]],
        [b, [1, 2]],
      ]),
      [a, b],
      new Set([3]),
    );
    expect(moves).toBeInstanceOf(Set);
    expect([...moves]).toEqual([2]);
    moves.add(99);
    expect(
      strategy.rebalance(
        shards([
          [a, [0]],
          [b, [1]],
        ]),
        [a, b],
        new Set(),
      ),
    ).toEqual(new Set());
  });

  it('rejects a non-strategy at once, and an address our NodeAddress cannot hold when it is used', () => {
    expect(() => asActorTsStrategy({} as never)).toThrow(ActorTsError);
    const strategy = asActorTsStrategy<ActorTsNodeAddress>(new HashAllocationStrategy());
    // actor-ts's in-memory transport allows ports above 65535; a TCP address never has one.
    expect(() => strategy.allocate(0, [new ActorTsNodeAddress('app', 'h', 70_000)], new Map())).toThrow(
      expect.objectContaining({ code: 'invalid_address' }),
    );
  });
});
