// One hand-off record (phases, acknowledgements, the id that ends it), the hand-off ids, and the hand-off
// protocol over a CoordinatorState, driven by a manual scheduler (the timers are the protocol's).
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logging.js';
import {
  HandOffIds,
  HandOffs,
  handOffMessages,
  isEndedBy,
  readyToHandOff,
} from '../../src/sharding/coordinator/hand-offs.js';
import type { HandOffRecord } from '../../src/sharding/coordinator/shard-life.js';
import type { CoordinatorState } from '../../src/sharding/coordinator/state.js';
import { ManualScheduler, address, startHandOff, stateWith, type Sent } from './coordinator-fakes.js';

const A = address(1);
const B = address(2);
const C = address(3);

/** A hand-off record as the state holds it. */
function record(extra: Partial<HandOffRecord> & { acks?: string[] } = {}): HandOffRecord {
  const { acks = [], ...rest } = extra;
  return { id: 1, owner: A, phase: 'begin', pendingAcks: new Set(acks), startedAtMs: 0, cause: 'rebalance', ...rest };
}

describe('a hand-off record', () => {
  it('is ready for its HandOff phase only once every region acknowledged', () => {
    const state = stateWith([A, B], [[4, A]]);
    startHandOff(state, 4, A, { acks: [A, B] });
    const ready = (): boolean => readyToHandOff(state.handOff(4) ?? record());
    expect(ready()).toBe(false);
    state.apply({ type: 'HandOffAcknowledged', shardId: 4, region: C });
    state.apply({ type: 'HandOffAcknowledged', shardId: 4, region: A });
    expect(ready()).toBe(false);
    expect(() => state.apply({ type: 'HandOffPhaseEntered', shardId: 4 })).toThrow(/not ready/);
    state.apply({ type: 'HandOffAcknowledged', shardId: 4, region: B });
    expect(ready()).toBe(true);
    state.apply({ type: 'HandOffPhaseEntered', shardId: 4 });
    expect(state.handOff(4)?.phase).toBe('handoff');
    expect(ready()).toBe(false);
  });

  it('sends BeginHandOff to the regions not yet acknowledged, then HandOff with its id to the owner', () => {
    expect(handOffMessages(4, record({ id: 77, acks: [B] }), 'T')).toEqual([
      { to: B, message: { type: 'BeginHandOff', typeName: 'T', shardId: 4 } },
    ]);
    expect(handOffMessages(4, record({ id: 77, phase: 'handoff' }), 'T')).toEqual([
      { to: A, message: { type: 'HandOff', typeName: 'T', shardId: 4, handOffId: 77 } },
    ]);
  });

  it('is ended only by its owner reporting this very hand-off id, in the HandOff phase', () => {
    expect(isEndedBy(record({ id: 77, acks: [B] }), A, 77)).toBe(false);
    const handOff = record({ id: 77, phase: 'handoff' });
    expect(isEndedBy(handOff, B, 77)).toBe(false);
    expect(isEndedBy(handOff, A, 76)).toBe(false);
    expect(isEndedBy(handOff, A, 77)).toBe(true);
  });
});

describe('HandOffIds', () => {
  it('counts up from its start and wraps to 1 before leaving the safe integers', () => {
    const ids = new HandOffIds(Number.MAX_SAFE_INTEGER - 1);
    expect([ids.take(), ids.take(), ids.take()]).toEqual([Number.MAX_SAFE_INTEGER - 1, Number.MAX_SAFE_INTEGER, 1]);
  });

  it('starts somewhere random by default, and refuses a start that is not a positive safe integer', () => {
    const first = new HandOffIds().take();
    expect(Number.isSafeInteger(first) && first >= 1).toBe(true);
    for (const bad of [0, -1, 1.5, Number.MAX_SAFE_INTEGER + 1]) expect(() => new HandOffIds(bad)).toThrow(RangeError);
  });
});

function protocol(options: { regions?: string[]; timeoutMs?: number } = {}): {
  state: CoordinatorState;
  scheduler: ManualScheduler;
  handOffs: HandOffs;
  sent: Sent[];
  freed: number[];
} {
  const scheduler = new ManualScheduler();
  const state = stateWith(options.regions ?? [A, B]);
  const sent: Sent[] = [];
  const freed: number[] = [];
  const handOffs = new HandOffs(
    {
      typeName: 'T',
      state,
      scheduler,
      timeoutMs: options.timeoutMs ?? 1_000,
      logger: silentLogger(),
      ids: new HandOffIds(100),
    },
    {
      send: (to, message) => sent.push({ to, message }),
      freed: (shardId) => freed.push(shardId),
      completed: () => {},
    },
  );
  return { state, scheduler, handOffs, sent, freed };
}

describe('HandOffs (the protocol)', () => {
  it('runs a hand-off from BeginHandOff through HandOff to ShardStopped, then frees the shard', () => {
    const { state, handOffs, sent, freed } = protocol();
    state.apply({ type: 'ShardAllocated', shardId: 3, region: A });
    handOffs.begin(3, 'rebalance');
    expect(sent.splice(0).map((s) => [s.to, s.message.type])).toEqual([
      [A, 'BeginHandOff'],
      [B, 'BeginHandOff'],
    ]);
    handOffs.acknowledged(A, 3);
    expect(sent).toEqual([]);
    handOffs.acknowledged(B, 3);
    expect(sent.splice(0)).toEqual([
      { to: A, message: { type: 'HandOff', typeName: 'T', shardId: 3, handOffId: 100 } },
    ]);
    handOffs.stopped(A, 3, 99);
    handOffs.stopped(B, 3, 100);
    expect(state.isHandingOff(3)).toBe(true);
    handOffs.stopped(A, 3, 100);
    expect(freed).toEqual([3]);
    expect(state.homeOf(3)).toBeUndefined();
    expect(handOffs.counters).toEqual({ started: 1, completed: 1, timedOut: 0 });
  });

  it('starts nothing for a homeless shard or one already moving', () => {
    const { state, handOffs, sent } = protocol();
    handOffs.begin(3, 'rebalance');
    state.apply({ type: 'ShardAllocated', shardId: 4, region: A });
    handOffs.begin(4, 'rebalance');
    handOffs.begin(4, 'rebalance');
    handOffs.awaitStop(4, B, 'stopping');
    expect(handOffs.counters.started).toBe(1);
    expect(state.handOff(4)?.owner).toBe(A);
    expect(sent.filter((s) => s.message.type === 'BeginHandOff')).toHaveLength(2);
  });

  it('awaitStop asks the owner for the stop at once', () => {
    const { state, handOffs, sent, freed } = protocol();
    handOffs.awaitStop(5, B, 'stopping');
    expect(sent.splice(0)).toEqual([
      { to: B, message: { type: 'HandOff', typeName: 'T', shardId: 5, handOffId: 100 } },
    ]);
    handOffs.stopped(B, 5, 100);
    expect(freed).toEqual([5]);
    expect(state.isHandingOff(5)).toBe(false);
  });

  it('a removed owner completes its hand-offs; a removed bystander is no longer waited for', () => {
    const { state, handOffs, sent, freed } = protocol({ regions: [A, B, C] });
    state.apply({ type: 'ShardAllocated', shardId: 1, region: A });
    state.apply({ type: 'ShardAllocated', shardId: 2, region: B });
    handOffs.begin(1, 'rebalance');
    handOffs.begin(2, 'rebalance');
    for (const from of [A, B]) handOffs.acknowledged(from, 1);
    for (const from of [A, B]) handOffs.acknowledged(from, 2);
    sent.length = 0;
    state.apply({ type: 'RegionTerminated', region: C });
    handOffs.regionGone(C);
    expect(sent.map((s) => [s.to, s.message.type])).toEqual([
      [A, 'HandOff'],
      [B, 'HandOff'],
    ]);
    state.apply({ type: 'RegionTerminated', region: A });
    handOffs.regionGone(A);
    expect(freed).toEqual([1]);
    expect(state.handingOff()).toEqual([2]);
  });

  it('a hand-off whose owner is gone by the time every region acknowledged completes without a HandOff', () => {
    const { state, handOffs, sent, freed } = protocol();
    state.apply({ type: 'ShardAllocated', shardId: 1, region: A });
    handOffs.begin(1, 'rebalance');
    handOffs.acknowledged(A, 1);
    // The registry lost A before regionGone ran for it (the defensive path of advance).
    state.apply({ type: 'RegionTerminated', region: A });
    sent.length = 0;
    handOffs.acknowledged(B, 1);
    expect(sent).toEqual([]);
    expect(freed).toEqual([1]);
  });

  it('on timeout the shard stays and every registered region hears its home again', () => {
    const { state, scheduler, handOffs, sent, freed } = protocol({ timeoutMs: 700 });
    state.apply({ type: 'ShardAllocated', shardId: 1, region: A });
    state.apply({ type: 'ProxyRegistered', region: C });
    handOffs.begin(1, 'rebalance');
    sent.length = 0;
    scheduler.advance(700);
    expect(freed).toEqual([]);
    expect(state.isHandingOff(1)).toBe(false);
    expect(sent).toEqual(
      [A, B, C].map((to) => ({ to, message: { type: 'ShardHome', typeName: 'T', shardId: 1, region: A } })),
    );
    expect(handOffs.counters).toEqual({ started: 1, completed: 0, timedOut: 1 });
  });

  it('resend repeats each hand-off for its phase; stopCopy uses an id no hand-off waits for', () => {
    const { state, handOffs, sent } = protocol();
    state.apply({ type: 'ShardAllocated', shardId: 1, region: A });
    handOffs.begin(1, 'rebalance');
    handOffs.acknowledged(A, 1);
    sent.length = 0;
    handOffs.resend();
    expect(sent.splice(0)).toEqual([{ to: B, message: { type: 'BeginHandOff', typeName: 'T', shardId: 1 } }]);
    handOffs.stopCopy(B, 1);
    expect(sent.splice(0)).toEqual([
      { to: B, message: { type: 'HandOff', typeName: 'T', shardId: 1, handOffId: 101 } },
    ]);
    handOffs.acknowledged(B, 1);
    handOffs.stopped(B, 1, 101);
    expect(state.isHandingOff(1)).toBe(true);
  });

  it('stop drops every hand-off with its timer', () => {
    const { state, scheduler, handOffs } = protocol();
    state.apply({ type: 'ShardAllocated', shardId: 1, region: A });
    handOffs.begin(1, 'rebalance');
    handOffs.awaitStop(2, B, 'stopping');
    handOffs.stop();
    expect(state.handingOff()).toEqual([]);
    expect(scheduler.pending).toBe(0);
  });
});
