// One hand-off record (phases, acknowledgements, the id that ends it), the hand-off ids, and the hand-off
// protocol over a CoordinatorState, each call one dispatch whose effects run on a manual scheduler.
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logging.js';
import {
  HandOffIds,
  HandOffs,
  handOffMessages,
  isEndedBy,
  readyToHandOff,
} from '../../src/sharding/coordinator/hand-offs.js';
import { Dispatcher, type Effects } from '../../src/sharding/coordinator/effects.js';
import type { HandOffRecord, CoordinatorState } from '../../src/sharding/coordinator/state.js';
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

/**
 * The protocol driven as the coordinator drives it: each call is one dispatch whose effects are run at once
 * (sends recorded, timers on the manual scheduler), and the shards it frees are collected.
 */
function protocol(options: { regions?: string[]; timeoutMs?: number } = {}): {
  state: CoordinatorState;
  scheduler: ManualScheduler;
  handOffs: HandOffs;
  act: (work: (fx: Effects) => readonly number[] | void) => void;
  sent: Sent[];
  freed: number[];
} {
  const scheduler = new ManualScheduler();
  const state = stateWith(options.regions ?? [A, B]);
  const sent: Sent[] = [];
  const freed: number[] = [];
  const handOffs = new HandOffs({
    typeName: 'T',
    now: () => scheduler.now(),
    timeoutMs: options.timeoutMs ?? 1_000,
    numberOfShards: 16,
    logger: silentLogger(),
    ids: new HandOffIds(100),
  });
  const dispatcher = new Dispatcher(
    state,
    scheduler,
    { send: (to, message) => sent.push({ to, message }), report: () => {} },
    (fx, timer) => {
      if (timer.type === 'hand-off-timeout') handOffs.timeOut(fx, timer.shardId, timer.id);
    },
  );
  const act = (work: (fx: Effects) => readonly number[] | void): void =>
    dispatcher.dispatch((fx) => freed.push(...(work(fx) ?? [])));
  return { state, scheduler, handOffs, act, sent, freed };
}

describe('HandOffs (the protocol)', () => {
  it('runs a hand-off from BeginHandOff through HandOff to ShardStopped, then frees the shard', () => {
    const { state, handOffs, act, sent, freed } = protocol();
    state.apply({ type: 'ShardAllocated', shardId: 3, region: A });
    act((fx) => handOffs.begin(fx, 3, 'rebalance'));
    expect(sent.splice(0).map((s) => [s.to, s.message.type])).toEqual([
      [A, 'BeginHandOff'],
      [B, 'BeginHandOff'],
    ]);
    act((fx) => handOffs.acknowledged(fx, A, 3));
    expect(sent).toEqual([]);
    act((fx) => handOffs.acknowledged(fx, B, 3));
    expect(sent.splice(0)).toEqual([
      { to: A, message: { type: 'HandOff', typeName: 'T', shardId: 3, handOffId: 100 } },
    ]);
    act((fx) => handOffs.stopped(fx, A, 3, 99));
    act((fx) => handOffs.stopped(fx, B, 3, 100));
    expect(state.isHandingOff(3)).toBe(true);
    act((fx) => handOffs.stopped(fx, A, 3, 100));
    expect(freed).toEqual([3]);
    expect(state.homeOf(3)).toBeUndefined();
    expect(handOffs.counters).toEqual({ started: 1, completed: 1, timedOut: 0 });
  });

  it('starts nothing for a homeless shard or one already moving', () => {
    const { state, handOffs, act, sent } = protocol();
    act((fx) => handOffs.begin(fx, 3, 'rebalance'));
    state.apply({ type: 'ShardAllocated', shardId: 4, region: A });
    act((fx) => handOffs.begin(fx, 4, 'rebalance'));
    act((fx) => handOffs.begin(fx, 4, 'rebalance'));
    act((fx) => handOffs.awaitStop(fx, 4, B, 'stopping'));
    expect(handOffs.counters.started).toBe(1);
    expect(state.handOff(4)?.owner).toBe(A);
    expect(sent.filter((s) => s.message.type === 'BeginHandOff')).toHaveLength(2);
  });

  it('awaitStop asks the owner for the stop at once', () => {
    const { state, handOffs, act, sent, freed } = protocol();
    act((fx) => handOffs.awaitStop(fx, 5, B, 'stopping'));
    expect(sent.splice(0)).toEqual([
      { to: B, message: { type: 'HandOff', typeName: 'T', shardId: 5, handOffId: 100 } },
    ]);
    act((fx) => handOffs.stopped(fx, B, 5, 100));
    expect(freed).toEqual([5]);
    expect(state.isHandingOff(5)).toBe(false);
  });

  it('a removed owner completes its hand-offs; a removed bystander is no longer waited for', () => {
    const { state, handOffs, act, sent, freed } = protocol({ regions: [A, B, C] });
    state.apply({ type: 'ShardAllocated', shardId: 1, region: A });
    state.apply({ type: 'ShardAllocated', shardId: 2, region: B });
    act((fx) => handOffs.begin(fx, 1, 'rebalance'));
    act((fx) => handOffs.begin(fx, 2, 'rebalance'));
    for (const from of [A, B]) act((fx) => handOffs.acknowledged(fx, from, 1));
    for (const from of [A, B]) act((fx) => handOffs.acknowledged(fx, from, 2));
    sent.length = 0;
    state.apply({ type: 'RegionTerminated', region: C });
    act((fx) => handOffs.regionGone(fx, C));
    expect(sent.map((s) => [s.to, s.message.type])).toEqual([
      [A, 'HandOff'],
      [B, 'HandOff'],
    ]);
    state.apply({ type: 'RegionTerminated', region: A });
    act((fx) => handOffs.regionGone(fx, A));
    expect(freed).toEqual([1]);
    expect(state.handingOff()).toEqual([2]);
  });

  it('a hand-off whose owner is gone by the time every region acknowledged completes without a HandOff', () => {
    const { state, handOffs, act, sent, freed } = protocol();
    state.apply({ type: 'ShardAllocated', shardId: 1, region: A });
    act((fx) => handOffs.begin(fx, 1, 'rebalance'));
    act((fx) => handOffs.acknowledged(fx, A, 1));
    // The registry lost A before regionGone ran for it (the defensive path of advance).
    state.apply({ type: 'RegionTerminated', region: A });
    sent.length = 0;
    act((fx) => handOffs.acknowledged(fx, B, 1));
    expect(sent).toEqual([]);
    expect(freed).toEqual([1]);
  });

  it('on timeout the shard stays and every registered region hears its home again', () => {
    const { state, scheduler, handOffs, act, sent, freed } = protocol({ timeoutMs: 700 });
    state.apply({ type: 'ShardAllocated', shardId: 1, region: A });
    state.apply({ type: 'ProxyRegistered', region: C });
    act((fx) => handOffs.begin(fx, 1, 'rebalance'));
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
    const { state, handOffs, act, sent } = protocol();
    state.apply({ type: 'ShardAllocated', shardId: 1, region: A });
    act((fx) => handOffs.begin(fx, 1, 'rebalance'));
    act((fx) => handOffs.acknowledged(fx, A, 1));
    sent.length = 0;
    act((fx) => handOffs.resend(fx));
    expect(sent.splice(0)).toEqual([{ to: B, message: { type: 'BeginHandOff', typeName: 'T', shardId: 1 } }]);
    act((fx) => handOffs.stopCopy(fx, B, 1));
    expect(sent.splice(0)).toEqual([
      { to: B, message: { type: 'HandOff', typeName: 'T', shardId: 1, handOffId: 101 } },
    ]);
    act((fx) => handOffs.acknowledged(fx, B, 1));
    act((fx) => handOffs.stopped(fx, B, 1, 101));
    expect(state.isHandingOff(1)).toBe(true);
  });

  it('stop drops every hand-off with its timer', () => {
    const { state, scheduler, handOffs, act } = protocol();
    state.apply({ type: 'ShardAllocated', shardId: 1, region: A });
    act((fx) => handOffs.begin(fx, 1, 'rebalance'));
    act((fx) => handOffs.awaitStop(fx, 2, B, 'stopping'));
    act((fx) => handOffs.stop(fx));
    expect(state.handingOff()).toEqual([]);
    expect(scheduler.pending).toBe(0);
  });
});
