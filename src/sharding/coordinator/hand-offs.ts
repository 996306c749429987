// The hand-off protocol of one coordinator: starting hand-offs (rebalancing, manual moves, leaves, the
// down-removal margin, shards adopted as stopping), moving each through its phases as regions answer,
// re-sending on the retry tick, and ending it by completion or timeout. Each step is an event applied to the
// coordinator's state, where each hand-off is a record (state.ts HandOffRecord); this class keeps only
// the hand-off ids and counters, and records its sends and timers in the dispatcher's Effects. What becomes of
// a shard once it is free is not its business: the calls that complete hand-offs return the shards freed,
// and the dispatcher gives them homes (ShardHomes.freed). The entity state a hand-off carries from the old host
// to the new home is hand-off-states.ts's.
import { randomInt } from 'node:crypto';
import type { Logger } from '../../logging.js';
import type { Effects, Outgoing } from './effects.js';
import type { CoordinatorState, HandOffCause, HandOffPhase, HandOffRecord } from './state.js';
import type { ShardingMessage } from '../protocol/messages.js';
import { DIRECT_STATE_SINCE, EARLY_STATE_SINCE } from '../protocol/state-messages.js';

export interface HandOffsOptions {
  readonly typeName: string;
  readonly logger: Logger;
  /** The coordinator's clock (its scheduler's now). */
  readonly now: () => number;
  readonly timeoutMs: number;
  /** The type's shard count: a shard id a region names at or above it is ignored. */
  readonly numberOfShards: number;
  readonly ids?: HandOffIds;
  /** The shard's likely next home (the strategy's answer as things stand), or undefined. */
  readonly likelyHome?: (shardId: number, owner: string) => string | undefined;
  /** Whether a region may take shards now (allocation's candidates); undefined: any registered region. */
  readonly isCandidate?: (region: string) => boolean;
  /** The protocol version a node agreed with this one (ShardingContext.protocolWith); undefined: any version. */
  readonly protocolWith?: (node: string) => number | undefined;
}

/** Most calls free nothing: one empty list for them all. */
const NOTHING_FREED: readonly number[] = [];

/** The key of a shard's hand-off timeout among the dispatcher's timers. */
function timerKey(shardId: number): string {
  return `hand-off:${shardId}`;
}

export class HandOffs {
  private readonly ids: HandOffIds;
  private readonly counts = { started: 0, completed: 0, timedOut: 0 };

  constructor(private readonly options: HandOffsOptions) {
    this.ids = options.ids ?? new HandOffIds();
  }

  get counters(): { readonly started: number; readonly completed: number; readonly timedOut: number } {
    return { ...this.counts };
  }

  /** Moves a shard off its home: every region stops routing to it, then the home stops it. */
  begin(fx: Effects, shardId: number, cause: HandOffCause): void {
    const { state } = fx;
    const owner = state.homeOf(shardId);
    if (owner === undefined || state.isHandingOff(shardId)) return;
    this.track(fx, shardId, owner, 'begin', state.registered(), cause);
  }

  /**
   * Waits for `owner` to stop a shard it may still run (a former coordinator's hand-off, or a member in its
   * down-removal margin): the shard is not allocatable until the owner says it stopped or is removed.
   */
  awaitStop(fx: Effects, shardId: number, owner: string, cause: HandOffCause): void {
    if (fx.state.isHandingOff(shardId)) return;
    this.track(fx, shardId, owner, 'handoff', [], cause);
  }

  /**
   * A region reports a shard it is still stopping (a former coordinator was lost before the ShardStopped):
   * it is handed off from that region (not allocatable, its GetShardHome requests wait) until that region
   * answers this coordinator's HandOff or is removed. A shard with a known home is left alone: the claim is
   * stale or about a copy already told to stop, and a live home must never be erased.
   */
  adoptStopping(fx: Effects, from: string, shardId: number): void {
    const { state } = fx;
    if (shardId >= this.options.numberOfShards || state.homeOf(shardId) !== undefined || state.isHandingOff(shardId))
      return;
    this.options.logger.info(
      { shardId, region: from },
      'shard still stopping on a region: allocating it once it stopped',
    );
    this.awaitStop(fx, shardId, from, 'stopping');
  }

  /**
   * A region keeps the state of a shard it stopped (named in its registration, or by ShardStateHeld while
   * unreleased). In transit here (`inTransit`), or the shard is moving: nothing to do yet. The shard has a
   * home: that copy is not needed. Neither: the copy in transit was lost with a former coordinator (its node
   * crashed or left), so this one asks the region for it with a HandOff, and allocates the shard once the
   * state is here.
   */
  stateHeld(fx: Effects, from: string, shardId: number, handOffId: number, inTransit: boolean): void {
    const { numberOfShards, typeName, logger } = this.options;
    if (shardId >= numberOfShards || inTransit || fx.state.isHandingOff(shardId)) return;
    if (fx.state.homeOf(shardId) !== undefined)
      return fx.send(from, { type: 'ShardStateReleased', typeName, shardId, handOffId });
    logger.info({ shardId, region: from }, 'a region keeps the state of a shard without a home: asking for it');
    this.awaitStop(fx, shardId, from, 'state-held');
  }

  /** BeginHandOffAck. Returns the shards freed (the owner was gone by then). */
  acknowledged(fx: Effects, from: string, shardId: number): readonly number[] {
    if (!fx.state.isHandingOff(shardId)) return NOTHING_FREED;
    fx.apply({ type: 'HandOffAcknowledged', shardId, region: from });
    return this.advance(fx, shardId);
  }

  /**
   * ShardStopped: ends the hand-off only if it answers this very hand-off's HandOff (see isEndedBy). Returns
   * the shards freed.
   */
  stopped(fx: Effects, from: string, shardId: number, handOffId: number): readonly number[] {
    const handOff = fx.state.handOff(shardId);
    if (handOff === undefined || !isEndedBy(handOff, from, handOffId)) return NOTHING_FREED;
    this.complete(fx, shardId, handOff);
    return [shardId];
  }

  /**
   * A region was removed: hand-offs from it are complete (its entities are gone), others stop waiting for it.
   * Returns the shards freed, in the order their hand-offs completed.
   */
  regionGone(fx: Effects, region: string): readonly number[] {
    const { state } = fx;
    const freed: number[] = [];
    for (const shardId of state.handingOff()) {
      const handOff = state.handOff(shardId);
      if (handOff === undefined) continue;
      if (handOff.owner === region) {
        this.complete(fx, shardId, handOff);
        freed.push(shardId);
      } else if (handOff.phase === 'begin' && handOff.pendingAcks.has(region)) {
        fx.apply({ type: 'HandOffAcknowledged', shardId, region });
        freed.push(...this.advance(fx, shardId));
      }
    }
    return freed;
  }

  /**
   * Stops a copy of a shard homed elsewhere, with a HandOff of its own: an id no hand-off waits for, so its
   * ShardStopped changes nothing here.
   */
  stopCopy(fx: Effects, region: string, shardId: number): void {
    fx.send(region, { type: 'HandOff', typeName: this.options.typeName, shardId, handOffId: this.ids.take() });
  }

  /** The retry tick: each hand-off's messages for its current phase again. */
  resend(fx: Effects): void {
    for (const shardId of fx.state.handingOff()) this.sendFor(fx, shardId, fx.state.handOff(shardId));
  }

  /** The coordinator stops: every hand-off is dropped with its timer. */
  stop(fx: Effects): void {
    for (const shardId of fx.state.handingOff()) fx.cancelTimer(timerKey(shardId));
    fx.apply({ type: 'HandOffsAbandoned' });
  }

  /** A hand-off's timer fired: if that hand-off still runs, the shard stays, and every region learns its home. */
  timeOut(fx: Effects, shardId: number, id: number): void {
    const { logger, timeoutMs, typeName } = this.options;
    const { state } = fx;
    const handOff = state.handOff(shardId);
    if (handOff?.id !== id) return;
    const { owner } = handOff;
    this.counts.timedOut++;
    logger.warn({ shardId, owner, timeoutMs }, 'hand-off timed out; shard stays');
    fx.apply({ type: 'HandOffTimedOut', shardId, id });
    const region = state.homeOf(shardId);
    if (region === undefined) return;
    fx.broadcast({ type: 'ShardHome', typeName, shardId, region });
  }

  private track(
    fx: Effects,
    shardId: number,
    owner: string,
    phase: HandOffPhase,
    pendingAcks: Iterable<string>,
    cause: HandOffCause,
  ): void {
    const { now, timeoutMs, logger } = this.options;
    const id = this.ids.take();
    const startedAtMs = now();
    const to = phase === 'handoff' ? this.directHome(shardId, owner) : undefined;
    const early = phase === 'begin' ? this.directHome(shardId, owner, EARLY_STATE_SINCE) : undefined;
    const handOff = {
      ...{ id, owner, phase, pendingAcks, startedAtMs, cause },
      ...(to !== undefined && { to }),
      ...(early !== undefined && { early }),
    };
    fx.apply({ type: 'HandOffStarted', shardId, handOff });
    fx.startTimer(timerKey(shardId), timeoutMs, { type: 'hand-off-timeout', shardId, id });
    this.counts.started++;
    logger.debug({ shardId, owner, phase, cause }, 'hand-off started');
    this.sendFor(fx, shardId, fx.state.handOff(shardId));
  }

  /** Moves to the HandOff phase once every region stopped routing to the shard; returns the shards freed. */
  private advance(fx: Effects, shardId: number): readonly number[] {
    const { state } = fx;
    const handOff = state.handOff(shardId);
    if (handOff === undefined || !readyToHandOff(handOff)) return NOTHING_FREED;
    // The home the owner was told as the hand-off began, while it may still take the shard (not leaving, not
    // cordoned since): its held states went there. A home leaving meanwhile would leave with the state.
    const early = handOff.early !== undefined && this.mayTake(state, handOff.early) ? handOff.early : undefined;
    const to = state.isRegion(handOff.owner) ? (early ?? this.directHome(shardId, handOff.owner)) : undefined;
    fx.apply({ type: 'HandOffPhaseEntered', shardId, ...(to !== undefined && { to }) });
    if (state.isRegion(handOff.owner)) {
      this.sendFor(fx, shardId, state.handOff(shardId));
      return NOTHING_FREED;
    }
    this.complete(fx, shardId, handOff);
    return [shardId];
  }

  /**
   * Where the owner of a shard sends its state itself: the shard's likely next home, the owner reading `since`
   * (DIRECT_STATE_SINCE: HandOff's `to`; EARLY_STATE_SINCE: BeginHandOff's) and the home reading HandOff's `to`
   * and HostShard's `transferId`; undefined (the state comes here) otherwise.
   */
  private directHome(shardId: number, owner: string, since = DIRECT_STATE_SINCE): string | undefined {
    const { likelyHome, protocolWith } = this.options;
    const reads = (node: string, version: number): boolean => (protocolWith?.(node) ?? version) >= version;
    const to = reads(owner, since) ? likelyHome?.(shardId, owner) : undefined;
    return to !== undefined && reads(to, DIRECT_STATE_SINCE) ? to : undefined;
  }

  /** A region the hand-off's state may go to: registered, and among the candidates now where they are known. */
  private mayTake(state: CoordinatorState, region: string): boolean {
    return state.isRegion(region) && (this.options.isCandidate?.(region) ?? true);
  }

  private complete(fx: Effects, shardId: number, handOff: HandOffRecord): void {
    const { logger, now } = this.options;
    fx.cancelTimer(timerKey(shardId));
    fx.apply({ type: 'HandOffCompleted', shardId, id: handOff.id });
    this.counts.completed++;
    fx.report({ kind: 'hand-off-completed', seconds: (now() - handOff.startedAtMs) / 1000 });
    logger.debug({ shardId, from: handOff.owner }, 'hand-off complete');
  }

  private sendFor(fx: Effects, shardId: number, handOff: HandOffRecord | undefined): void {
    if (handOff === undefined) return;
    for (const { to, message } of handOffMessages(shardId, handOff, this.options.typeName)) fx.send(to, message);
  }
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
  if (handOff.phase === 'begin') {
    const { owner, id: handOffId, early } = handOff;
    // The owner told where the shard likely goes sends its held states there ahead of its stop (protocol 12).
    const ahead = early === undefined ? {} : { handOffId, to: early };
    return [...handOff.pendingAcks].map((to) => ({
      to,
      message: { type: 'BeginHandOff', typeName, shardId, ...(to === owner && ahead) },
    }));
  }
  const { owner, id: handOffId, to } = handOff;
  return [{ to: owner, message: { type: 'HandOff', typeName, shardId, handOffId, ...(to !== undefined && { to }) } }];
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
