// The coordinator's state, one event at a time through `apply`, and two properties: whatever sequence of events
// arrives, an impossible one is refused without changing anything, and after every event each home is listed
// under its region and nowhere else, the indexes match the statuses, and a shard's history stays bounded.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type CoordinatorEvent,
  type HandOffCause,
  CoordinatorInvariantError,
  CoordinatorState,
  HISTORY_PER_SHARD,
} from '../../src/sharding/coordinator/state.js';
import { address } from './coordinator-fakes.js';

const A = address(1);
const B = address(2);
const P = address(9);

function withRegions(...regions: string[]): CoordinatorState {
  const state = new CoordinatorState(() => 0);
  for (const region of regions) state.apply({ type: 'RegionRegistered', region });
  return state;
}

function handOffStarted(
  shardId: number,
  owner: string,
  extra: { id?: number; phase?: 'begin' | 'handoff'; acks?: string[]; cause?: HandOffCause } = {},
): CoordinatorEvent {
  const { id = 1, phase = 'begin', acks = [], cause = 'rebalance' } = extra;
  return { type: 'HandOffStarted', shardId, handOff: { id, owner, phase, pendingAcks: acks, startedAtMs: 0, cause } };
}

describe('CoordinatorState events', () => {
  it('RegionRegistered: once per region, which has no shards yet', () => {
    const state = withRegions(A, A);
    expect(state.isRegion(A)).toBe(true);
    expect(state.isRegistered(A)).toBe(true);
    expect(state.shardsOf(A)).toEqual([]);
    expect(state.counts).toEqual({ regions: 1, proxies: 0, allocatedShards: 0, handOffs: 0, waiting: 0 });
  });

  it('ProxyRegistered: registered, but neither a region nor a shard owner', () => {
    const state = new CoordinatorState();
    state.apply({ type: 'ProxyRegistered', region: P });
    expect(state.isRegistered(P)).toBe(true);
    expect(state.isRegion(P)).toBe(false);
    expect(state.registered()).toEqual([P]);
    expect(state.locations()).toEqual([]);
    expect(state.counts.proxies).toBe(1);
  });

  it('ShardClaimed: a homeless shard gets the claimant; a homed one keeps its home', () => {
    const state = withRegions(A, B);
    state.apply({ type: 'ShardClaimed', region: A, shardId: 3 });
    expect(state.statusOf(3)).toEqual({ kind: 'running', region: A });
    state.apply({ type: 'ShardClaimed', region: B, shardId: 3 });
    expect(state.homeOf(3)).toBe(A);
    expect(state.shardsOf(B)).toEqual([]);
  });

  // A registration that lists the shard confirms its start as ShardStarted does.
  it.each(['ShardClaimed', 'ShardStarted'] as const)(
    '%s: ends the pending start only when the region it was sent to confirms',
    (type) => {
      const state = withRegions(A, B);
      state.apply({ type: 'ShardAllocated', shardId: 5, region: A });
      state.apply({ type, region: B, shardId: 5 });
      expect(state.pendingStarts()).toEqual([[5, A]]);
      state.apply({ type, region: A, shardId: 5 });
      expect(state.pendingStarts()).toEqual([]);
      expect(state.kindOf(5)).toBe('running');
    },
  );

  it('ShardClaimed: refuses a claim by an unregistered region, changing nothing', () => {
    const state = withRegions(A);
    expect(() => state.apply({ type: 'ShardClaimed', region: B, shardId: 1 })).toThrow(CoordinatorInvariantError);
    expect(state.kindOf(1)).toBe('unallocated');
  });

  it('ShardAllocated: home, region list (in allocation order) and pending start together; never twice', () => {
    const state = withRegions(A);
    state.apply({ type: 'ShardAllocated', shardId: 7, region: A });
    state.apply({ type: 'ShardAllocated', shardId: 2, region: A });
    expect(state.homeOf(7)).toBe(A);
    expect(state.shardsOf(A)).toEqual([7, 2]);
    expect(state.pendingStarts()).toEqual([
      [7, A],
      [2, A],
    ]);
    expect(state.locations()).toEqual([{ address: A, shards: [2, 7] }]);
    expect(() => state.apply({ type: 'ShardAllocated', shardId: 7, region: A })).toThrow(/allocated while starting/);
    expect(() => state.apply({ type: 'ShardAllocated', shardId: 8, region: B })).toThrow(/not a registered region/);
    expect(state.kindOf(8)).toBe('unallocated');
  });

  it('ShardAdopted: only a shard without a home or hand-off', () => {
    const state = withRegions(A, B);
    state.apply({ type: 'ShardAdopted', region: A, shardId: 1 });
    expect(state.homeOf(1)).toBe(A);
    expect(() => state.apply({ type: 'ShardAdopted', region: B, shardId: 1 })).toThrow(/adopted while running/);
    state.apply(handOffStarted(2, B, { phase: 'handoff' }));
    expect(() => state.apply({ type: 'ShardAdopted', region: A, shardId: 2 })).toThrow(/adopted while handingOff/);
    expect(state.homeOf(2)).toBeUndefined();
  });

  it('ShardDeferred and ShardWaiting: one waiting status gathering the requesters; freed kept until allocated', () => {
    const state = withRegions(A);
    state.apply({ type: 'ShardDeferred', shardId: 4, requester: A });
    state.apply({ type: 'ShardDeferred', shardId: 4, requester: B, freed: true });
    expect(state.statusOf(4)).toEqual({ kind: 'waiting', reason: 'warm-up', requesters: new Set([A, B]), freed: true });
    expect(state.waiting('warm-up').map(([shardId]) => shardId)).toEqual([4]);
    state.apply({ type: 'ShardWaiting', shardId: 4, requesters: [P] });
    expect(state.statusOf(4)).toEqual({
      kind: 'waiting',
      reason: 'no-home',
      requesters: new Set([A, B, P]),
      freed: false,
    });
    expect(state.counts.waiting).toBe(1);
    state.apply({ type: 'ShardAllocated', shardId: 4, region: A });
    expect(state.counts.waiting).toBe(0);
    expect(() => state.apply({ type: 'ShardWaiting', shardId: 4, requesters: [] })).toThrow(/waits while starting/);
  });

  it('RegionLeaving, then RegionTerminated: its shards lose their home and pending start; others keep theirs', () => {
    const state = withRegions(A, B);
    state.apply({ type: 'ProxyRegistered', region: A });
    state.apply({ type: 'ShardAllocated', shardId: 1, region: A });
    state.apply({ type: 'ShardClaimed', region: A, shardId: 2 });
    state.apply({ type: 'ShardAllocated', shardId: 3, region: B });
    state.apply({ type: 'RegionLeaving', region: A });
    expect(state.isShuttingDown(A)).toBe(true);
    state.apply({ type: 'RegionTerminated', region: A });
    expect(state.isRegistered(A)).toBe(false);
    expect(state.isShuttingDown(A)).toBe(false);
    expect(state.kindOf(1)).toBe('unallocated');
    expect(state.kindOf(2)).toBe('unallocated');
    expect(state.homeOf(3)).toBe(B);
    expect(state.pendingStarts()).toEqual([[3, B]]);
  });

  it('HandOffStarted: handed off from its home, no longer pending start; a second one for it is refused', () => {
    const state = withRegions(A, B);
    state.apply({ type: 'ShardAllocated', shardId: 6, region: A });
    state.apply(handOffStarted(6, A, { id: 7, acks: [A, B] }));
    expect(state.isHandingOff(6)).toBe(true);
    expect(state.handOff(6)).toMatchObject({ id: 7, owner: A, phase: 'begin', pendingAcks: new Set([A, B]) });
    expect(state.handingOff()).toEqual([6]);
    expect(state.pendingStarts()).toEqual([]);
    expect(state.homeOf(6)).toBe(A);
    expect(() => state.apply(handOffStarted(6, A, { id: 8 }))).toThrow(/already/);
    expect(state.handOff(6)?.id).toBe(7);
  });

  it('HandOffAcknowledged, then HandOffPhaseEntered: only once every region acknowledged', () => {
    const state = withRegions(A, B);
    state.apply({ type: 'ShardAllocated', shardId: 6, region: A });
    state.apply(handOffStarted(6, A, { acks: [A, B] }));
    state.apply({ type: 'HandOffAcknowledged', shardId: 6, region: A });
    expect(() => state.apply({ type: 'HandOffPhaseEntered', shardId: 6 })).toThrow(/not ready/);
    state.apply({ type: 'HandOffAcknowledged', shardId: 6, region: B });
    state.apply({ type: 'HandOffPhaseEntered', shardId: 6 });
    expect(state.handOff(6)?.phase).toBe('handoff');
  });

  it('HandOffStarted with an early destination: the begin phase only, never the owner; the HandOff phase drops it', () => {
    const state = withRegions(A, B);
    state.apply({ type: 'ShardAllocated', shardId: 6, region: A });
    const started = (handOff: Record<string, unknown>): CoordinatorEvent => {
      const event = handOffStarted(6, A, { acks: [A] }) as Extract<CoordinatorEvent, { type: 'HandOffStarted' }>;
      return { ...event, handOff: { ...event.handOff, ...handOff } };
    };
    expect(() => state.apply(started({ early: A }))).toThrow(/early state destination/);
    expect(() => state.apply(started({ early: B, phase: 'handoff' }))).toThrow(/early state destination/);
    expect(state.handOff(6)).toBeUndefined();
    state.apply(started({ early: B }));
    expect(state.handOff(6)).toMatchObject({ phase: 'begin', early: B });
    state.apply({ type: 'HandOffAcknowledged', shardId: 6, region: A });
    state.apply({ type: 'HandOffPhaseEntered', shardId: 6, to: B });
    expect(state.handOff(6)).toMatchObject({ phase: 'handoff', to: B });
    expect(state.handOff(6)).not.toHaveProperty('early');
  });

  it('HandOffCompleted: the owner loses the shard; only the current hand-off completes', () => {
    const state = withRegions(A);
    state.apply({ type: 'ShardAllocated', shardId: 6, region: A });
    state.apply(handOffStarted(6, A, { id: 3, phase: 'handoff' }));
    expect(() => state.apply({ type: 'HandOffCompleted', shardId: 6, id: 4 })).toThrow(/no hand-off 4/);
    state.apply({ type: 'HandOffCompleted', shardId: 6, id: 3 });
    expect(state.isHandingOff(6)).toBe(false);
    expect(state.kindOf(6)).toBe('unallocated');
    expect(state.shardsOf(A)).toEqual([]);
  });

  it('HandOffCompleted: a home that is not the owner (claimed meanwhile) is kept', () => {
    const state = withRegions(A, B);
    state.apply(handOffStarted(6, A, { phase: 'handoff' }));
    state.apply({ type: 'ShardClaimed', region: B, shardId: 6 });
    state.apply({ type: 'HandOffCompleted', shardId: 6, id: 1 });
    expect(state.statusOf(6)).toEqual({ kind: 'running', region: B });
    expect(state.shardsOf(B)).toEqual([6]);
  });

  it('HandOffTimedOut: the shard stays with its home', () => {
    const state = withRegions(A, B);
    state.apply({ type: 'ShardAllocated', shardId: 6, region: A });
    state.apply(handOffStarted(6, A, { acks: [B] }));
    state.apply({ type: 'HandOffTimedOut', shardId: 6, id: 1 });
    expect(state.statusOf(6)).toEqual({ kind: 'running', region: A });
    expect(state.shardsOf(A)).toEqual([6]);
  });

  it('HandOffTimedOut: a homeless shard adopted as stopping gets its registered owner as home, else none', () => {
    const state = withRegions(A);
    state.apply(handOffStarted(1, A, { phase: 'handoff' }));
    state.apply({ type: 'HandOffTimedOut', shardId: 1, id: 1 });
    expect(state.shardsOf(A)).toEqual([1]);
    state.apply(handOffStarted(2, B, { phase: 'handoff' }));
    state.apply({ type: 'HandOffTimedOut', shardId: 2, id: 1 });
    expect(state.kindOf(2)).toBe('unallocated');
    expect(state.isRegion(B)).toBe(false);
  });

  it('HandOffsAbandoned: every hand-off is dropped, the homes stay', () => {
    const state = withRegions(A);
    state.apply({ type: 'ShardAllocated', shardId: 1, region: A });
    for (const shardId of [1, 2, 3]) state.apply(handOffStarted(shardId, A, { phase: 'handoff' }));
    state.apply({ type: 'HandOffsAbandoned' });
    expect(state.handingOff()).toEqual([]);
    expect(state.homeOf(1)).toBe(A);
    expect(state.kindOf(2)).toBe('unallocated');
  });

  it('shardMap is a read-only view of the live map; locations are sorted by address and shard', () => {
    const state = withRegions(B, A);
    state.apply({ type: 'ShardAllocated', shardId: 9, region: B });
    state.apply({ type: 'ShardAllocated', shardId: 1, region: B });
    const view = state.shardMap();
    state.apply({ type: 'ShardAllocated', shardId: 4, region: A });
    expect([...(view.get(A) ?? [])]).toEqual([4]);
    expect(state.locations()).toEqual([
      { address: A, shards: [4] },
      { address: B, shards: [1, 9] },
    ]);
  });

  it("keeps each shard's last events, dated by the clock, for explain", () => {
    let now = 1_000;
    const state = new CoordinatorState(() => now);
    state.apply({ type: 'RegionRegistered', region: A });
    state.apply({ type: 'ShardAllocated', shardId: 1, region: A });
    now = 2_000;
    state.apply(handOffStarted(1, A, { cause: 'drain', phase: 'handoff' }));
    expect(state.historyOf(1).map(({ atMs, event }) => [atMs, event.type])).toEqual([
      [1_000, 'ShardAllocated'],
      [2_000, 'HandOffStarted'],
    ]);
    expect(state.historyOf(2)).toEqual([]);
    for (let i = 0; i < 20; i++) {
      const id = 100 + i;
      state.apply({ type: 'HandOffTimedOut', shardId: 1, id: state.handOff(1)?.id ?? -1 });
      state.apply(handOffStarted(1, A, { id, phase: 'handoff' }));
    }
    expect(state.historyOf(1)).toHaveLength(HISTORY_PER_SHARD);
  });
});

const region = fc.integer({ min: 1, max: 3 }).map(address);
const shardId = fc.integer({ min: 0, max: 5 });
const id = fc.integer({ min: 1, max: 3 });
const cause = fc.constantFrom<HandOffCause>('rebalance', 'drain', 'leave');
const event: fc.Arbitrary<CoordinatorEvent> = fc.oneof(
  fc.record({ type: fc.constant('RegionRegistered' as const), region }),
  fc.record({ type: fc.constant('ProxyRegistered' as const), region }),
  fc.record({ type: fc.constant('ShardClaimed' as const), region, shardId }),
  fc.record({ type: fc.constant('ShardAllocated' as const), region, shardId }),
  fc.record({ type: fc.constant('ShardStarted' as const), region, shardId }),
  fc.record({ type: fc.constant('ShardAdopted' as const), region, shardId }),
  fc.record({ type: fc.constant('ShardDeferred' as const), shardId, requester: region, freed: fc.boolean() }),
  fc.record({ type: fc.constant('ShardWaiting' as const), shardId, requesters: fc.array(region, { maxLength: 2 }) }),
  fc.record({ type: fc.constant('RegionLeaving' as const), region }),
  fc.record({ type: fc.constant('RegionTerminated' as const), region }),
  fc
    .record({
      shardId,
      id,
      owner: region,
      phase: fc.constantFrom('begin' as const, 'handoff' as const),
      acks: fc.array(region, { maxLength: 3 }),
      cause,
    })
    .map(({ shardId: shard, owner, ...extra }) => handOffStarted(shard, owner, extra)),
  fc.record({ type: fc.constant('HandOffAcknowledged' as const), shardId, region }),
  fc.record({ type: fc.constant('HandOffPhaseEntered' as const), shardId }),
  fc.record({ type: fc.constant('HandOffCompleted' as const), shardId, id }),
  fc.record({ type: fc.constant('HandOffTimedOut' as const), shardId, id }),
  fc.constant({ type: 'HandOffsAbandoned' as const }),
);

/** Everything the state answers about shards 0-5 and regions 1-3, to compare before and after an event. */
function observe(state: CoordinatorState): unknown {
  return {
    shards: [0, 1, 2, 3, 4, 5].map((shard) => [state.statusOf(shard), state.historyOf(shard).length]),
    locations: state.locations(),
    registered: state.registered(),
    leaving: [1, 2, 3].map((port) => state.isShuttingDown(address(port))),
    counts: state.counts,
  };
}

describe('CoordinatorState invariants', () => {
  it('any event sequence: an impossible event changes nothing, and the invariants hold after every event', () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 80 }), (events) => {
        const state = new CoordinatorState(() => 0);
        for (const next of events) {
          const before = observe(state);
          try {
            state.apply(next);
          } catch (error) {
            expect(error).toBeInstanceOf(CoordinatorInvariantError);
            expect(observe(state)).toEqual(before);
          }
          state.checkInvariants();
          for (const shard of [0, 1, 2, 3, 4, 5])
            expect(state.historyOf(shard).length).toBeLessThanOrEqual(HISTORY_PER_SHARD);
        }
      }),
      { numRuns: 500 },
    );
  });
});
