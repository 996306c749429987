// The hand-off protocol of one coordinator: starting hand-offs (rebalancing, manual moves, leaves, the
// down-removal margin, shards adopted as stopping), moving each through its phases as regions answer,
// re-sending on the retry tick, and ending it by completion or timeout. Each step is an event applied to the
// coordinator's state, where each hand-off is a record (shard-life.ts HandOffRecord); this room keeps only the
// timers and the hand-off ids. What becomes of a shard once it is free is not this room's business:
// HandOffsPort.freed says where it goes.
import { randomInt } from 'node:crypto';
import type { Cancellable, Scheduler } from '../../cluster/scheduler.js';
import type { ShardingMessage } from '../protocol/messages.js';
import type { RoomBasics, SendPort } from './ports.js';
import type { HandOffCause, HandOffPhase, HandOffRecord } from './shard-life.js';

export interface HandOffsOptions extends RoomBasics {
  readonly scheduler: Scheduler;
  readonly timeoutMs: number;
  readonly ids?: HandOffIds;
}

/** Where the hand-off protocol's calls go (wired in rooms.ts). */
export interface HandOffsPort extends SendPort {
  /** The shard stopped (or its owner is gone) and has no home now: ShardHomes.freed gives it one. */
  freed(shardId: number): void;
  /** A hand-off completed, `seconds` after it started: CoordinatorEvents.onHandOffCompleted (metrics). */
  completed(seconds: number): void;
}

export class HandOffs {
  private readonly ids: HandOffIds;
  private readonly counts = { started: 0, completed: 0, timedOut: 0 };
  /** Each running hand-off's timeout, by shard. */
  private readonly timers = new Map<number, Cancellable>();

  constructor(
    private readonly options: HandOffsOptions,
    private readonly port: HandOffsPort,
  ) {
    this.ids = options.ids ?? new HandOffIds();
  }

  get counters(): { readonly started: number; readonly completed: number; readonly timedOut: number } {
    return { ...this.counts };
  }

  /** Moves a shard off its home: every region stops routing to it, then the home stops it. */
  begin(shardId: number, cause: HandOffCause): void {
    const { state } = this.options;
    const owner = state.homeOf(shardId);
    if (owner === undefined || state.isHandingOff(shardId)) return;
    this.track(shardId, owner, 'begin', state.registered(), cause);
  }

  /**
   * Waits for `owner` to stop a shard it may still run (a former coordinator's hand-off, or a member in its
   * down-removal margin): the shard is not allocatable until the owner says it stopped or is removed.
   */
  awaitStop(shardId: number, owner: string, cause: HandOffCause): void {
    if (this.options.state.isHandingOff(shardId)) return;
    this.track(shardId, owner, 'handoff', [], cause);
  }

  /** BeginHandOffAck. */
  acknowledged(from: string, shardId: number): void {
    if (!this.options.state.isHandingOff(shardId)) return;
    this.options.state.apply({ type: 'HandOffAcknowledged', shardId, region: from });
    this.advance(shardId);
  }

  /** ShardStopped: ends the hand-off only if it answers this very hand-off's HandOff (see isEndedBy). */
  stopped(from: string, shardId: number, handOffId: number): void {
    const handOff = this.options.state.handOff(shardId);
    if (handOff !== undefined && isEndedBy(handOff, from, handOffId)) this.complete(shardId, handOff);
  }

  /** A region was removed: hand-offs from it are complete (its entities are gone), others stop waiting for it. */
  regionGone(region: string): void {
    const { state } = this.options;
    for (const shardId of state.handingOff()) {
      const handOff = state.handOff(shardId);
      if (handOff === undefined) continue;
      if (handOff.owner === region) this.complete(shardId, handOff);
      else if (handOff.phase === 'begin' && handOff.pendingAcks.has(region)) {
        state.apply({ type: 'HandOffAcknowledged', shardId, region });
        this.advance(shardId);
      }
    }
  }

  /**
   * Stops a copy of a shard homed elsewhere, with a HandOff of its own: an id no hand-off waits for, so its
   * ShardStopped changes nothing here.
   */
  stopCopy(region: string, shardId: number): void {
    this.port.send(region, {
      type: 'HandOff',
      typeName: this.options.typeName,
      shardId,
      handOffId: this.ids.take(),
    });
  }

  /** The retry tick: each hand-off's messages for its current phase again. */
  resend(): void {
    const { state } = this.options;
    for (const shardId of state.handingOff()) this.sendFor(shardId, state.handOff(shardId));
  }

  /** The coordinator stops: every hand-off is dropped with its timer. */
  stop(): void {
    for (const timer of this.timers.values()) timer.cancel();
    this.timers.clear();
    this.options.state.apply({ type: 'HandOffsAbandoned' });
  }

  private track(
    shardId: number,
    owner: string,
    phase: HandOffPhase,
    pendingAcks: Iterable<string>,
    cause: HandOffCause,
  ): void {
    const { state, scheduler, timeoutMs, logger } = this.options;
    const id = this.ids.take();
    const startedAtMs = scheduler.now();
    state.apply({ type: 'HandOffStarted', shardId, handOff: { id, owner, phase, pendingAcks, startedAtMs, cause } });
    this.timers.set(
      shardId,
      scheduler.setTimeout(() => this.timeOut(shardId, id), timeoutMs),
    );
    this.counts.started++;
    logger.debug({ shardId, owner, phase, cause }, 'hand-off started');
    this.sendFor(shardId, state.handOff(shardId));
  }

  /** Moves to the HandOff phase once every region stopped routing to the shard. */
  private advance(shardId: number): void {
    const { state } = this.options;
    const handOff = state.handOff(shardId);
    if (handOff === undefined || !readyToHandOff(handOff)) return;
    state.apply({ type: 'HandOffPhaseEntered', shardId });
    if (state.isRegion(handOff.owner)) this.sendFor(shardId, state.handOff(shardId));
    else this.complete(shardId, handOff);
  }

  private complete(shardId: number, handOff: HandOffRecord): void {
    const { state, logger, scheduler } = this.options;
    this.endTimer(shardId);
    state.apply({ type: 'HandOffCompleted', shardId, id: handOff.id });
    this.counts.completed++;
    this.port.completed((scheduler.now() - handOff.startedAtMs) / 1000);
    logger.debug({ shardId, from: handOff.owner }, 'hand-off complete');
    this.port.freed(shardId);
  }

  /** The shard stays, and the regions that forgot its home learn it again. */
  private timeOut(shardId: number, id: number): void {
    const { state, logger, timeoutMs, typeName } = this.options;
    const handOff = state.handOff(shardId);
    if (handOff?.id !== id) return;
    this.timers.delete(shardId);
    const { owner } = handOff;
    this.counts.timedOut++;
    logger.warn({ shardId, owner, timeoutMs }, 'hand-off timed out; shard stays');
    state.apply({ type: 'HandOffTimedOut', shardId, id });
    const region = state.homeOf(shardId);
    if (region === undefined) return;
    for (const to of state.registered()) this.port.send(to, { type: 'ShardHome', typeName, shardId, region });
  }

  private endTimer(shardId: number): void {
    this.timers.get(shardId)?.cancel();
    this.timers.delete(shardId);
  }

  private sendFor(shardId: number, handOff: HandOffRecord | undefined): void {
    if (handOff === undefined) return;
    for (const { to, message } of handOffMessages(shardId, handOff, this.options.typeName)) this.port.send(to, message);
  }
}

export interface Outgoing {
  readonly to: string;
  readonly message: ShardingMessage;
}

/** True once every region stopped routing to the shard and the HandOff may be sent. */
export function readyToHandOff(handOff: HandOffRecord): boolean {
  return handOff.phase === 'begin' && handOff.pendingAcks.size === 0;
}

/**
 * Only the owner's answer to this hand-off's HandOff ends it. Anything else (a copy stopping elsewhere, a
 * late or duplicated report of an earlier stop, one answering a former coordinator) is no news, and acting
 * on it could allocate a shard that still runs.
 */
export function isEndedBy(handOff: HandOffRecord, from: string, handOffId: number): boolean {
  return handOff.phase === 'handoff' && from === handOff.owner && handOffId === handOff.id;
}

/** What to (re-)send for the hand-off's current phase. */
export function handOffMessages(shardId: number, handOff: HandOffRecord, typeName: string): Outgoing[] {
  if (handOff.phase === 'begin')
    return [...handOff.pendingAcks].map((to) => ({ to, message: { type: 'BeginHandOff', typeName, shardId } }));
  return [{ to: handOff.owner, message: { type: 'HandOff', typeName, shardId, handOffId: handOff.id } }];
}

/**
 * Hand-off ids. A random start, so the ids of earlier coordinators (whose HandOffs a region may still answer
 * late) do not collide with this one's; wraps before leaving the safe integers.
 */
export class HandOffIds {
  private nextId: number;

  constructor(start: number = randomInt(1, 2 ** 47)) {
    if (!Number.isSafeInteger(start) || start < 1)
      throw new RangeError(`hand-off ids start at a positive safe integer, got ${start}`);
    this.nextId = start;
  }

  take(): number {
    const id = this.nextId;
    this.nextId = id >= Number.MAX_SAFE_INTEGER ? 1 : id + 1;
    return id;
  }
}
