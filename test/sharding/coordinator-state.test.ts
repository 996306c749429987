// The coordinator's state, one transition at a time, and a property: whatever sequence of transitions the
// coordinator may make, every home is listed under its region and nowhere else, and every pending start
// is a known home.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { HandOff } from '../../src/sharding/coordinator/hand-off.js';
import { CoordinatorState } from '../../src/sharding/coordinator/state.js';
import { ManualScheduler, address, makeHandOff } from './coordinator-fakes.js';

const A = address(1);
const B = address(2);
const P = address(9);

function withRegions(...regions: string[]): CoordinatorState {
  const state = new CoordinatorState();
  for (const region of regions) state.regionRegistered(region);
  return state;
}

describe('CoordinatorState transitions', () => {
  it('regionRegistered: true only the first time, and the region has no shards yet', () => {
    const state = new CoordinatorState();
    expect(state.regionRegistered(A)).toBe(true);
    expect(state.regionRegistered(A)).toBe(false);
    expect(state.isRegion(A)).toBe(true);
    expect(state.isRegistered(A)).toBe(true);
    expect(state.shardsOf(A)).toEqual([]);
    expect(state.counts).toEqual({ regions: 1, proxies: 0, allocatedShards: 0, handOffs: 0 });
  });

  it('proxyRegistered: registered, but neither a region nor a shard owner', () => {
    const state = new CoordinatorState();
    state.proxyRegistered(P);
    expect(state.isRegistered(P)).toBe(true);
    expect(state.isRegion(P)).toBe(false);
    expect(state.registered()).toEqual([P]);
    expect(state.locations()).toEqual([]);
    expect(state.counts.proxies).toBe(1);
  });

  it('shardClaimed: a homeless shard gets the claimant; a homed one keeps its home, which is returned', () => {
    const state = withRegions(A, B);
    expect(state.shardClaimed(A, 3)).toBeUndefined();
    expect(state.homeOf(3)).toBe(A);
    expect(state.shardClaimed(A, 3)).toBeUndefined();
    expect(state.shardClaimed(B, 3)).toBe(A);
    expect(state.homeOf(3)).toBe(A);
    expect(state.shardsOf(B)).toEqual([]);
  });

  // A registration that lists the shard (shardClaimed) confirms its start as ShardStarted does.
  it.each(['shardClaimed', 'shardStarted'] as const)(
    '%s: ends the pending start only when the region it was sent to confirms',
    (confirm) => {
      const state = withRegions(A, B);
      state.shardAllocated(5, A);
      state[confirm](B, 5);
      expect(state.pendingStarts()).toEqual([[5, A]]);
      state[confirm](A, 5);
      expect(state.pendingStarts()).toEqual([]);
      expect(state.homeOf(5)).toBe(A);
    },
  );

  it('shardClaimed: refuses a claim by an unregistered region, changing nothing', () => {
    const state = withRegions(A);
    expect(() => state.shardClaimed(B, 1)).toThrow(/unregistered/);
    expect(state.homeOf(1)).toBeUndefined();
  });

  it('shardAllocated: home, region list (in allocation order) and pending start together', () => {
    const state = withRegions(A);
    state.shardAllocated(7, A);
    state.shardAllocated(2, A);
    expect(state.homeOf(7)).toBe(A);
    expect(state.shardsOf(A)).toEqual([7, 2]);
    expect(state.pendingStarts()).toEqual([
      [7, A],
      [2, A],
    ]);
    expect(state.locations()).toEqual([{ address: A, shards: [2, 7] }]);
  });

  it('shardAdopted: only a registered region, only a homeless shard, never one being handed off', () => {
    const scheduler = new ManualScheduler();
    const state = withRegions(A, B);
    expect(state.shardAdopted(P, 1)).toBe(false);
    expect(state.shardAdopted(A, 1)).toBe(true);
    expect(state.homeOf(1)).toBe(A);
    expect(state.shardAdopted(B, 1)).toBe(false);
    expect(state.homeOf(1)).toBe(A);
    state.handOffStarted(makeHandOff(scheduler, { shardId: 2, owner: B, phase: 'handoff' }));
    expect(state.shardAdopted(A, 2)).toBe(false);
    expect(state.homeOf(2)).toBeUndefined();
  });

  it('regionShuttingDown: true the first time only', () => {
    const state = withRegions(A);
    expect(state.isShuttingDown(A)).toBe(false);
    expect(state.regionShuttingDown(A)).toBe(true);
    expect(state.regionShuttingDown(A)).toBe(false);
    expect(state.isShuttingDown(A)).toBe(true);
  });

  it('regionTerminated: its shards lose their home and pending start; other regions keep theirs', () => {
    const state = withRegions(A, B);
    state.proxyRegistered(A);
    state.shardAllocated(1, A);
    state.shardClaimed(A, 2);
    state.shardAllocated(3, B);
    state.regionShuttingDown(A);
    expect([...state.regionTerminated(A)]).toEqual([1, 2]);
    expect(state.isRegistered(A)).toBe(false);
    expect(state.isShuttingDown(A)).toBe(false);
    expect(state.homeOf(1)).toBeUndefined();
    expect(state.homeOf(2)).toBeUndefined();
    expect(state.homeOf(3)).toBe(B);
    expect(state.pendingStarts()).toEqual([[3, B]]);
    expect([...state.regionTerminated(A)]).toEqual([]);
  });

  it('handOffStarted: the shard is handed off, no longer pending start; a second one for it is refused', () => {
    const scheduler = new ManualScheduler();
    const state = withRegions(A, B);
    state.shardAllocated(6, A);
    const handOff = makeHandOff(scheduler, { shardId: 6, owner: A, acks: [A, B] });
    state.handOffStarted(handOff);
    expect(state.isHandingOff(6)).toBe(true);
    expect(state.handOff(6)).toBe(handOff);
    expect(state.handingOff()).toEqual([6]);
    expect(state.pendingStarts()).toEqual([]);
    expect(state.homeOf(6)).toBe(A);
    expect(() => state.handOffStarted(makeHandOff(scheduler, { shardId: 6, owner: A }))).toThrow(/already/);
    expect(state.handOff(6)).toBe(handOff);
  });

  it('handOffCompleted: the owner loses the shard and its timer is cancelled', () => {
    const scheduler = new ManualScheduler();
    const timedOut: HandOff[] = [];
    const state = withRegions(A);
    state.shardAllocated(6, A);
    const handOff = makeHandOff(scheduler, { shardId: 6, owner: A, phase: 'handoff' }, timedOut);
    state.handOffStarted(handOff);
    state.handOffCompleted(handOff);
    expect(state.isHandingOff(6)).toBe(false);
    expect(state.homeOf(6)).toBeUndefined();
    expect(state.shardsOf(A)).toEqual([]);
    scheduler.advance(10_000);
    expect(timedOut).toEqual([]);
    expect(() => state.handOffCompleted(handOff)).toThrow(/no such hand-off/);
  });

  it('handOffCompleted: a home that is not the owner is kept', () => {
    const scheduler = new ManualScheduler();
    const state = withRegions(A, B);
    state.shardClaimed(B, 6);
    const handOff = makeHandOff(scheduler, { shardId: 6, owner: A, phase: 'handoff' });
    state.handOffStarted(handOff);
    state.handOffCompleted(handOff);
    expect(state.homeOf(6)).toBe(B);
    expect(state.shardsOf(B)).toEqual([6]);
  });

  it('handOffTimedOut: the shard stays with its home', () => {
    const scheduler = new ManualScheduler();
    const state = withRegions(A, B);
    state.shardAllocated(6, A);
    const handOff = makeHandOff(scheduler, { shardId: 6, owner: A, acks: [B] });
    state.handOffStarted(handOff);
    expect(state.handOffTimedOut(handOff)).toBe(A);
    expect(state.isHandingOff(6)).toBe(false);
    expect(state.shardsOf(A)).toEqual([6]);
  });

  it('handOffTimedOut: a homeless shard adopted as stopping gets its registered owner as home, else none', () => {
    const scheduler = new ManualScheduler();
    const state = withRegions(A);
    const fromA = makeHandOff(scheduler, { shardId: 1, owner: A, phase: 'handoff' });
    state.handOffStarted(fromA);
    expect(state.handOffTimedOut(fromA)).toBe(A);
    expect(state.shardsOf(A)).toEqual([1]);
    const fromGone = makeHandOff(scheduler, { shardId: 2, owner: B, phase: 'handoff' });
    state.handOffStarted(fromGone);
    expect(state.handOffTimedOut(fromGone)).toBeUndefined();
    expect(state.homeOf(2)).toBeUndefined();
    expect(state.isRegion(B)).toBe(false);
  });

  it('handOffsAbandoned: every hand-off is dropped and none of their timers fires', () => {
    const scheduler = new ManualScheduler();
    const timedOut: HandOff[] = [];
    const state = withRegions(A);
    for (const shardId of [1, 2, 3])
      state.handOffStarted(makeHandOff(scheduler, { shardId, owner: A, phase: 'handoff' }, timedOut));
    state.handOffsAbandoned();
    expect(state.handingOff()).toEqual([]);
    expect(scheduler.pending).toBe(0);
    scheduler.advance(10_000);
    expect(timedOut).toEqual([]);
  });

  it('shardMap is a read-only view of the live map; locations are sorted by address and shard', () => {
    const state = withRegions(B, A);
    state.shardAllocated(9, B);
    state.shardAllocated(1, B);
    const view = state.shardMap();
    state.shardAllocated(4, A);
    expect([...(view.get(A) ?? [])]).toEqual([4]);
    expect(state.locations()).toEqual([
      { address: A, shards: [4] },
      { address: B, shards: [1, 9] },
    ]);
  });
});

type Op =
  | { kind: 'register'; region: number }
  | { kind: 'claim'; region: number; shard: number }
  | { kind: 'allocate'; region: number; shard: number }
  | { kind: 'started'; region: number; shard: number }
  | { kind: 'adopt'; region: number; shard: number }
  | { kind: 'terminate'; region: number }
  | { kind: 'handOff'; shard: number; owner: number; phase: 'begin' | 'handoff' }
  | { kind: 'complete'; shard: number }
  | { kind: 'timeout'; shard: number };

const region = fc.integer({ min: 1, max: 3 });
const shard = fc.integer({ min: 0, max: 5 });
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('register' as const), region }),
  fc.record({ kind: fc.constant('claim' as const), region, shard }),
  fc.record({ kind: fc.constant('allocate' as const), region, shard }),
  fc.record({ kind: fc.constant('started' as const), region, shard }),
  fc.record({ kind: fc.constant('adopt' as const), region, shard }),
  fc.record({ kind: fc.constant('terminate' as const), region }),
  fc.record({
    kind: fc.constant('handOff' as const),
    shard,
    owner: region,
    phase: fc.constantFrom('begin' as const, 'handoff' as const),
  }),
  fc.record({ kind: fc.constant('complete' as const), shard }),
  fc.record({ kind: fc.constant('timeout' as const), shard }),
);

/** Applies an op the way the coordinator would (respecting the preconditions it checks first). */
function apply(state: CoordinatorState, scheduler: ManualScheduler, step: Op): void {
  switch (step.kind) {
    case 'register':
      state.regionRegistered(address(step.region));
      return;
    case 'claim':
      if (state.isRegion(address(step.region))) state.shardClaimed(address(step.region), step.shard);
      return;
    case 'allocate':
      if (
        state.isRegion(address(step.region)) &&
        state.homeOf(step.shard) === undefined &&
        !state.isHandingOff(step.shard)
      ) {
        state.shardAllocated(step.shard, address(step.region));
      }
      return;
    case 'started':
      state.shardStarted(address(step.region), step.shard);
      return;
    case 'adopt':
      state.shardAdopted(address(step.region), step.shard);
      return;
    case 'terminate':
      state.regionTerminated(address(step.region));
      return;
    case 'handOff': {
      if (state.isHandingOff(step.shard)) return;
      const owner = step.phase === 'begin' ? state.homeOf(step.shard) : address(step.owner);
      if (owner === undefined) return;
      state.handOffStarted(
        makeHandOff(scheduler, { shardId: step.shard, owner, phase: step.phase, acks: state.registered() }),
      );
      return;
    }
    case 'complete':
    case 'timeout': {
      const handOff = state.handOff(step.shard);
      if (handOff === undefined) return;
      if (step.kind === 'complete') state.handOffCompleted(handOff);
      else state.handOffTimedOut(handOff);
    }
  }
}

function checkInvariants(state: CoordinatorState): void {
  const listed = new Map<number, string>();
  for (const [key, shards] of state.shardMap()) {
    for (const shardId of shards) {
      expect(listed.has(shardId), `shard ${shardId} listed under two regions`).toBe(false);
      listed.set(shardId, key);
      expect(state.homeOf(shardId)).toBe(key);
    }
  }
  expect(listed.size).toBe(state.counts.allocatedShards);
  for (const [shardId, pendingOn] of state.pendingStarts()) {
    expect(state.homeOf(shardId)).toBe(pendingOn);
    expect(state.isHandingOff(shardId)).toBe(false);
  }
}

describe('CoordinatorState invariants', () => {
  it('every home is listed under exactly its region, and pending starts are homes not being handed off', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const scheduler = new ManualScheduler();
        const state = new CoordinatorState();
        for (const step of ops) {
          apply(state, scheduler, step);
          checkInvariants(state);
        }
      }),
      { numRuns: 300 },
    );
  });
});
