// The coordinator's side of a drain, unit by unit: the cordons it honours (the store's, plus a drained
// region whose cordon has not replicated yet, for a bounded time), the plan of moves (spread by the
// strategy, null where a hard rule leaves no home), candidates without cordoned regions, and the wire
// checks of the drain messages.
import { describe, expect, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import type { MemberInfo } from '../../src/cluster/member.js';
import { allocationCandidates } from '../../src/sharding/coordinator/allocation.js';
import { CoordinatorCordons, DRAIN_EXCLUSION_MS, planDrain } from '../../src/sharding/coordinator/operator-requests.js';
import type { CordonView } from '../../src/sharding/placements/cordon-view.js';
import { parseShardingMessage } from '../../src/sharding/protocol/messages.js';
import { LeastShardAllocationStrategy } from '../../src/sharding/strategies/index.js';
import type { AllocationStrategy } from '../../src/sharding/strategies/index.js';

const A = 'app@127.0.0.1:7001';
const B = 'app@127.0.0.1:7002';
const C = 'app@127.0.0.1:7003';

function settableView(): CordonView & { set: Set<string> } {
  const set = new Set<string>();
  return { set, isCordoned: (address) => set.has(address), list: () => [...set].map((address) => ({ address })) };
}

describe('CoordinatorCordons', () => {
  it('excludes a drained region until the store shows its cordon, then lets the store decide (uncordon included)', () => {
    const view = settableView();
    let now = 0;
    const cordons = new CoordinatorCordons(view, () => now);
    cordons.exclude(B);
    expect(cordons.isCordoned(B)).toBe(true);
    expect(cordons.list()).toEqual([{ address: B }]);
    view.set.add(B);
    expect(cordons.isCordoned(B)).toBe(true);
    view.set.delete(B);
    expect(cordons.isCordoned(B)).toBe(false);
    now += 1;
    expect(cordons.isCordoned(A)).toBe(false);
  });

  it('lets the exclusion lapse when the cordon never shows up', () => {
    let now = 1_000;
    const cordons = new CoordinatorCordons(settableView(), () => now);
    cordons.exclude(B);
    now += DRAIN_EXCLUSION_MS - 1;
    expect(cordons.isCordoned(B)).toBe(true);
    now += 1;
    expect(cordons.isCordoned(B)).toBe(false);
    expect(cordons.list()).toEqual([]);
  });
});

describe('allocationCandidates with cordons', () => {
  it('leaves cordoned regions out', () => {
    const members = [A, B, C].map(
      (address, i) =>
        ({
          address: NodeAddress.parse(address),
          status: 'up',
          upNumber: i,
          reachable: true,
          appVersion: '1',
          roles: [],
        }) as unknown as MemberInfo,
    );
    const registry = { isRegion: () => true, isShuttingDown: () => false };
    const view = settableView();
    view.set.add(B);
    expect(allocationCandidates(members, undefined, registry, view).map(String)).toEqual([A, C]);
    expect(allocationCandidates(members, undefined, registry).map(String)).toEqual([A, B, C]);
  });
});

describe('planDrain', () => {
  const candidates = [A, C].map((address) => NodeAddress.parse(address));

  it('spreads the drained shards over the candidates as the strategy would, one after the other', () => {
    const shards = new Map([
      [A, new Set([1, 2])],
      [B, new Set([3, 4, 5, 6])],
      [C, new Set([7, 8])],
    ]);
    const moves = planDrain(new LeastShardAllocationStrategy(), B, [3, 4, 5, 6], candidates, shards);
    expect(moves.map((m) => m.from)).toEqual([B, B, B, B]);
    const to = moves.map((m) => m.to);
    expect(to.filter((t) => t === A)).toHaveLength(2);
    expect(to.filter((t) => t === C)).toHaveLength(2);
    // The caller's map is not touched.
    expect(shards.get(B)?.size).toBe(4);
  });

  it('names no target for a shard the strategy has no home for', () => {
    const nowhere: AllocationStrategy = {
      allocate: (shardId, list) => (shardId === 4 ? undefined : list[0]),
      rebalance: () => new Set(),
    };
    const moves = planDrain(nowhere, B, [3, 4], candidates, new Map([[B, new Set([3, 4])]]));
    expect(moves).toEqual([
      { shardId: 3, from: B, to: A },
      { shardId: 4, from: B, to: null },
    ]);
  });
});

describe('drain messages on the wire', () => {
  it('accepts well-formed ones and drops any with a bad field', () => {
    const good = {
      type: 'DrainStarted',
      typeName: 'T',
      requestId: 1,
      moves: [{ shardId: 1, from: A, to: null }],
      noCapacity: false,
    };
    expect(parseShardingMessage(good)).toEqual(good);
    expect(parseShardingMessage({ type: 'DrainRegion', typeName: 'T', requestId: 2, region: B })).toEqual({
      type: 'DrainRegion',
      typeName: 'T',
      requestId: 2,
      region: B,
    });
    const bad: unknown[] = [
      { type: 'DrainRegion', typeName: 'T', requestId: 2, region: 'nope' },
      { type: 'DrainRegion', typeName: 'T', requestId: 0, region: B },
      { ...good, noCapacity: 'no' },
      { ...good, moves: {} },
      { ...good, moves: [{ shardId: -1, from: A, to: B }] },
      { ...good, moves: [{ shardId: 1, from: A, to: 'x' }] },
      { ...good, moves: [{ shardId: 1, to: B }] },
      { ...good, moves: [null] },
    ];
    for (const message of bad) expect(parseShardingMessage(message as never)).toBeUndefined();
  });
});
