// One hand-off object (phases, acknowledgements, the id that ends it, its own timer), the hand-off ids, and
// the hand-off protocol over a CoordinatorState, driven by a manual scheduler.
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logging.js';
import { HandOff, HandOffIds } from '../../src/sharding/coordinator/hand-off.js';
import { HandOffs } from '../../src/sharding/coordinator/hand-offs.js';
import { CoordinatorState } from '../../src/sharding/coordinator/state.js';
import { ManualScheduler, address, makeHandOff, type Sent } from './coordinator-fakes.js';

const A = address(1);
const B = address(2);
const C = address(3);

describe('HandOff', () => {
  it('waits for every acknowledgement, then is ready for its HandOff phase', () => {
    const handOff = makeHandOff(new ManualScheduler(), { shardId: 4, owner: A, acks: [A, B] });
    expect(handOff.phase).toBe('begin');
    expect(handOff.readyToHandOff).toBe(false);
    expect(handOff.acknowledged(C)).toBe(false);
    expect(handOff.acknowledged(A)).toBe(true);
    expect(handOff.acknowledged(A)).toBe(false);
    expect(handOff.readyToHandOff).toBe(false);
    expect(() => handOff.enterHandOffPhase()).toThrow(/not ready/);
    expect(handOff.acknowledged(B)).toBe(true);
    expect(handOff.readyToHandOff).toBe(true);
    handOff.enterHandOffPhase();
    expect(handOff.phase).toBe('handoff');
    expect(handOff.readyToHandOff).toBe(false);
  });

  it('sends BeginHandOff to the regions not yet acknowledged, then HandOff with its id to the owner', () => {
    const handOff = makeHandOff(new ManualScheduler(), { shardId: 4, owner: A, id: 77, acks: [A, B] });
    handOff.acknowledged(A);
    expect(handOff.messages('T')).toEqual([{ to: B, message: { type: 'BeginHandOff', typeName: 'T', shardId: 4 } }]);
    handOff.acknowledged(B);
    handOff.enterHandOffPhase();
    expect(handOff.messages('T')).toEqual([
      { to: A, message: { type: 'HandOff', typeName: 'T', shardId: 4, handOffId: 77 } },
    ]);
  });

  it('is ended only by its owner reporting this very hand-off id, in the HandOff phase', () => {
    const begin = makeHandOff(new ManualScheduler(), { shardId: 4, owner: A, id: 77, acks: [B] });
    expect(begin.isEndedBy(A, 77)).toBe(false);
    const handOff = makeHandOff(new ManualScheduler(), { shardId: 4, owner: A, id: 77, phase: 'handoff', acks: [B] });
    expect(handOff.pendingAcks.size).toBe(0);
    expect(handOff.isEndedBy(B, 77)).toBe(false);
    expect(handOff.isEndedBy(A, 76)).toBe(false);
    expect(handOff.isEndedBy(A, 77)).toBe(true);
  });

  it('times out once, at its timeout, unless cancelled first', () => {
    const scheduler = new ManualScheduler();
    const timedOut: HandOff[] = [];
    const late = makeHandOff(scheduler, { shardId: 1, owner: A, timeoutMs: 500 }, timedOut);
    const cancelled = makeHandOff(scheduler, { shardId: 2, owner: A, timeoutMs: 500 }, timedOut);
    scheduler.advance(499);
    expect(timedOut).toEqual([]);
    cancelled.cancel();
    scheduler.advance(1);
    expect(timedOut).toEqual([late]);
    scheduler.advance(10_000);
    expect(timedOut).toEqual([late]);
    expect(scheduler.pending).toBe(0);
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
  const state = new CoordinatorState();
  for (const region of options.regions ?? [A, B]) state.regionRegistered(region);
  const scheduler = new ManualScheduler();
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
    state.shardAllocated(3, A);
    handOffs.begin(3);
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
    handOffs.begin(3);
    state.shardAllocated(4, A);
    handOffs.begin(4);
    handOffs.begin(4);
    handOffs.awaitStop(4, B);
    expect(handOffs.counters.started).toBe(1);
    expect(state.handOff(4)?.owner).toBe(A);
    expect(sent.filter((s) => s.message.type === 'BeginHandOff')).toHaveLength(2);
  });

  it('awaitStop asks the owner for the stop at once', () => {
    const { state, handOffs, sent, freed } = protocol();
    handOffs.awaitStop(5, B);
    expect(sent.splice(0)).toEqual([
      { to: B, message: { type: 'HandOff', typeName: 'T', shardId: 5, handOffId: 100 } },
    ]);
    handOffs.stopped(B, 5, 100);
    expect(freed).toEqual([5]);
    expect(state.isHandingOff(5)).toBe(false);
  });

  it('a removed owner completes its hand-offs; a removed bystander is no longer waited for', () => {
    const { state, handOffs, sent, freed } = protocol({ regions: [A, B, C] });
    state.shardAllocated(1, A);
    state.shardAllocated(2, B);
    handOffs.begin(1);
    handOffs.begin(2);
    for (const from of [A, B]) handOffs.acknowledged(from, 1);
    for (const from of [A, B]) handOffs.acknowledged(from, 2);
    sent.length = 0;
    state.regionTerminated(C);
    handOffs.regionGone(C);
    expect(sent.map((s) => [s.to, s.message.type])).toEqual([
      [A, 'HandOff'],
      [B, 'HandOff'],
    ]);
    state.regionTerminated(A);
    handOffs.regionGone(A);
    expect(freed).toEqual([1]);
    expect(state.handingOff()).toEqual([2]);
  });

  it('a hand-off whose owner is gone by the time every region acknowledged completes without a HandOff', () => {
    const { state, handOffs, sent, freed } = protocol();
    state.shardAllocated(1, A);
    handOffs.begin(1);
    handOffs.acknowledged(A, 1);
    // The registry lost A before regionGone ran for it (the defensive path of advance).
    state.regionTerminated(A);
    sent.length = 0;
    handOffs.acknowledged(B, 1);
    expect(sent).toEqual([]);
    expect(freed).toEqual([1]);
  });

  it('on timeout the shard stays and every registered region hears its home again', () => {
    const { state, scheduler, handOffs, sent, freed } = protocol({ timeoutMs: 700 });
    state.shardAllocated(1, A);
    state.proxyRegistered(C);
    handOffs.begin(1);
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
    state.shardAllocated(1, A);
    handOffs.begin(1);
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
    state.shardAllocated(1, A);
    handOffs.begin(1);
    handOffs.awaitStop(2, B);
    handOffs.stop();
    expect(state.handingOff()).toEqual([]);
    expect(scheduler.pending).toBe(0);
  });
});
