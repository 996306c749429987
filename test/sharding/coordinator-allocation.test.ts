// Allocation alone: who is a candidate, the strategy's answer checked (and overruled by the least-loaded
// candidate when it is not a candidate or the strategy throws), its copy of the map, and rebalance choices.
import { describe, expect, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import { silentLogger } from '../../src/logging.js';
import {
  Allocator,
  allocationCandidates,
  chooseHome,
  leastLoaded,
  shardsToMove,
} from '../../src/sharding/coordinator/allocation.js';
import { Effects } from '../../src/sharding/coordinator/effects.js';
import type { AllocationStrategy, ShardAllocations } from '../../src/sharding/strategies/index.js';
import { address, member, stateWith, type Sent } from './coordinator-fakes.js';

const A = address(1);
const B = address(2);
const C = address(3);
const node = (key: string): NodeAddress => NodeAddress.parse(key);

function strategy(
  allocate: AllocationStrategy['allocate'],
  rebalance: AllocationStrategy['rebalance'] = () => new Set(),
): AllocationStrategy {
  return { allocate, rebalance };
}

describe('allocationCandidates', () => {
  it('keeps registered, non-leaving regions on Up members with the role', () => {
    const state = stateWith([A, B, C, address(4), address(5)], [], { proxies: [address(6)], leaving: [C] });
    const members = [
      member(1, 'up', { roles: ['r'] }),
      member(2, 'up', { roles: [] }),
      member(3, 'up', { roles: ['r'] }),
      member(4, 'leaving', { roles: ['r'] }),
      member(5, 'up', { roles: ['r'], reachable: false }),
      member(6, 'up', { roles: ['r'] }),
      member(7, 'up', { roles: ['r'] }),
    ];
    expect(allocationCandidates(members, 'r', state).map(String)).toEqual([A, address(5)]);
    expect(allocationCandidates(members, undefined, state).map(String)).toEqual([A, B, address(5)]);
  });
});

describe('chooseHome', () => {
  const shards: ShardAllocations = new Map([
    [A, new Set([1, 2])],
    [B, new Set([3])],
  ]);

  it("takes the strategy's candidate, as a NodeAddress or its string", () => {
    expect(
      chooseHome(
        strategy(() => node(A)),
        9,
        [node(A), node(B)],
        shards,
      ),
    ).toEqual({ region: A, problem: undefined });
    const asString = strategy(() => B as unknown as NodeAddress);
    expect(chooseHome(asString, 9, [node(A), node(B)], shards)).toEqual({ region: B, problem: undefined });
  });

  it('overrules a non-candidate or a throw with the least-loaded candidate, saying why', () => {
    const outsider = chooseHome(
      strategy(() => node(C)),
      9,
      [node(A), node(B)],
      shards,
    );
    expect(outsider).toEqual({ region: B, problem: `returned ${C}, which is not a current candidate` });
    const nothing = chooseHome(
      strategy(() => null as unknown as NodeAddress),
      9,
      [node(A), node(B)],
      shards,
    );
    expect(nothing?.problem).toBe('returned null, which is not a current candidate');
    const thrower = chooseHome(
      strategy(() => {
        throw new Error('boom');
      }),
      9,
      [node(A), node(B)],
      shards,
    );
    expect(thrower).toEqual({ region: B, problem: 'threw: boom' });
  });

  it('has no answer without candidates, nor when the strategy has no home now', () => {
    expect(
      chooseHome(
        strategy(() => node(A)),
        9,
        [],
        shards,
      ),
    ).toBeUndefined();
    // undefined is the strategy's "no home now" (a hard placement rule), not a wrong answer to overrule.
    expect(
      chooseHome(
        strategy(() => undefined),
        9,
        [node(A), node(B)],
        shards,
      ),
    ).toBeUndefined();
  });
});

describe('leastLoaded', () => {
  it('takes the candidate with fewest shards, the lowest address on ties, and refuses no candidates', () => {
    const shards = new Map([[A, new Set([1])]]);
    expect(leastLoaded([node(C), node(A), node(B)], shards)).toBe(B);
    expect(leastLoaded([node(A)], shards)).toBe(A);
    expect(() => leastLoaded([], shards)).toThrow(RangeError);
  });
});

describe('shardsToMove', () => {
  it("returns the strategy's choice, or its error; the shards in progress it gets are a copy", () => {
    const shards = new Map([[A, new Set([1])]]);
    const inProgress = new Set([7]);
    const chosen = shardsToMove(
      strategy(
        () => node(A),
        (_current, _candidates, moving) => {
          (moving as Set<number>).add(98);
          return new Set([1]);
        },
      ),
      [node(A)],
      shards,
      inProgress,
    );
    expect(chosen).toEqual({ shards: new Set([1]) });
    expect([...inProgress]).toEqual([7]);
    const failed = shardsToMove(
      strategy(
        () => node(A),
        () => {
          throw new Error('no');
        },
      ),
      [node(A)],
      shards,
      inProgress,
    );
    expect(failed).toEqual({ error: 'no' });
  });
});

describe('Allocator', () => {
  function allocator(
    allocate: AllocationStrategy['allocate'],
    rebalance?: AllocationStrategy['rebalance'],
    homes: Array<[number, string]> = [],
  ) {
    const state = stateWith([A, B], homes);
    const fx = new Effects(state);
    const subject = new Allocator({
      typeName: 'T',
      role: undefined,
      strategy: strategy(allocate, rebalance),
      state,
      logger: silentLogger(),
      members: () => [member(1), member(2)],
      states: { before: () => ({ chunks: [] }) },
    });
    // The sends an allocation records, in order.
    const sent: Sent[] = fx.sends;
    return { subject, state, sent, fx };
  }

  it('records the home, sends HostShard to it, and counts allocations and overruled answers', () => {
    const { subject, state, sent, fx } = allocator((shardId) => node(shardId === 1 ? B : C));
    expect(subject.allocate(fx, 1)).toBe(B);
    expect(subject.allocate(fx, 2)).toBe(A);
    expect(state.homeOf(1)).toBe(B);
    expect(state.pendingStarts()).toEqual([
      [1, B],
      [2, A],
    ]);
    expect(sent).toEqual([
      { to: B, message: { type: 'HostShard', typeName: 'T', shardId: 1 } },
      { to: A, message: { type: 'HostShard', typeName: 'T', shardId: 2 } },
    ]);
    expect(subject.counters).toEqual({ allocations: 2, invalidAllocations: 1 });
  });

  it('gives the strategy a copy: it sees no later change, and one it makes changes nothing here', () => {
    const given: Array<ReadonlyMap<string, ReadonlySet<number>>> = [];
    const seenOnA: number[][] = [];
    const { subject, state, fx } = allocator(
      (_shardId, _candidates, current) => {
        given.push(current);
        seenOnA.push([...(current.get(A) ?? [])]);
        (current.get(A) as Set<number>).clear(); // against its type
        return node(B);
      },
      undefined,
      [
        [1, A],
        [2, A],
      ],
    );
    subject.allocate(fx, 3);
    subject.allocate(fx, 4);
    expect(state.shardsOf(A)).toEqual([1, 2]);
    expect(state.shardsOf(B)).toEqual([3, 4]);
    // A's copy emptied by the first call is not handed out again; B's as given before the allocations stays so.
    expect(seenOnA).toEqual([
      [1, 2],
      [1, 2],
    ]);
    expect([...(given[0]?.get(B) ?? [])]).toEqual([]);
    expect([...(given[1]?.get(B) ?? [])]).toEqual([3]);
  });

  it('asks for rebalance only with allocated shards, and a throwing strategy moves nothing', () => {
    let calls = 0;
    const { subject, fx } = allocator(
      () => node(A),
      () => {
        calls++;
        throw new Error('broken');
      },
    );
    expect([...subject.shardsToRebalance()]).toEqual([]);
    expect(calls).toBe(0);
    subject.allocate(fx, 1);
    expect([...subject.shardsToRebalance()]).toEqual([]);
    expect(calls).toBe(1);
  });
});
