// The hand-off protocol of one coordinator: starting hand-offs (rebalancing, manual moves, leaves, the
// down-removal margin, shards adopted as stopping), moving each through its phases as regions answer,
// re-sending on the retry tick, and ending it by completion or timeout. What becomes of a shard once it is
// free is not this room's business: HandOffsPort.freed says where it goes.
import type { Scheduler } from '../../cluster/scheduler.js';
import { HandOff, HandOffIds, type HandOffPhase } from './hand-off.js';
import type { RoomBasics, SendPort } from './ports.js';

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
  begin(shardId: number): void {
    const { state } = this.options;
    const owner = state.homeOf(shardId);
    if (owner === undefined || state.isHandingOff(shardId)) return;
    this.track(shardId, owner, 'begin', state.registered());
  }

  /**
   * Waits for `owner` to stop a shard it may still run (a former coordinator's hand-off, or a member in its
   * down-removal margin): the shard is not allocatable until the owner says it stopped or is removed.
   */
  awaitStop(shardId: number, owner: string): void {
    if (this.options.state.isHandingOff(shardId)) return;
    this.track(shardId, owner, 'handoff', []);
  }

  /** BeginHandOffAck. */
  acknowledged(from: string, shardId: number): void {
    const handOff = this.options.state.handOff(shardId);
    if (handOff === undefined) return;
    handOff.acknowledged(from);
    this.advance(handOff);
  }

  /** ShardStopped: ends the hand-off only if it answers this very hand-off's HandOff (see HandOff.isEndedBy). */
  stopped(from: string, shardId: number, handOffId: number): void {
    const handOff = this.options.state.handOff(shardId);
    if (handOff?.isEndedBy(from, handOffId)) this.complete(handOff);
  }

  /** A region was removed: hand-offs from it are complete (its entities are gone), others stop waiting for it. */
  regionGone(region: string): void {
    for (const handOff of this.options.state.handOffList()) {
      if (handOff.owner === region) this.complete(handOff);
      else if (handOff.acknowledged(region)) this.advance(handOff);
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
    for (const handOff of this.options.state.handOffList()) this.sendFor(handOff);
  }

  /** The coordinator stops: every hand-off is dropped with its timer. */
  stop(): void {
    this.options.state.handOffsAbandoned();
  }

  private track(shardId: number, owner: string, phase: HandOffPhase, pendingAcks: Iterable<string>): void {
    const { state, scheduler, timeoutMs, logger } = this.options;
    const handOff = new HandOff(shardId, this.ids.take(), owner, phase, pendingAcks, {
      scheduler,
      startedAtMs: scheduler.now(),
      timeoutMs,
      onTimeout: (timedOut) => this.timeOut(timedOut),
    });
    state.handOffStarted(handOff);
    this.counts.started++;
    logger.debug({ shardId, owner, phase }, 'hand-off started');
    this.sendFor(handOff);
  }

  /** Moves to the HandOff phase once every region stopped routing to the shard. */
  private advance(handOff: HandOff): void {
    if (!handOff.readyToHandOff) return;
    handOff.enterHandOffPhase();
    if (this.options.state.isRegion(handOff.owner)) this.sendFor(handOff);
    else this.complete(handOff);
  }

  private complete(handOff: HandOff): void {
    const { state, logger } = this.options;
    if (state.handOff(handOff.shardId) !== handOff) return;
    state.handOffCompleted(handOff);
    this.counts.completed++;
    this.port.completed((this.options.scheduler.now() - handOff.startedAtMs) / 1000);
    logger.debug({ shardId: handOff.shardId, from: handOff.owner }, 'hand-off complete');
    this.port.freed(handOff.shardId);
  }

  /** The shard stays, and the regions that forgot its home learn it again. */
  private timeOut(handOff: HandOff): void {
    const { state, logger, timeoutMs, typeName } = this.options;
    if (state.handOff(handOff.shardId) !== handOff) return;
    const { shardId, owner } = handOff;
    this.counts.timedOut++;
    logger.warn({ shardId, owner, timeoutMs }, 'hand-off timed out; shard stays');
    const region = state.handOffTimedOut(handOff);
    if (region === undefined) return;
    for (const to of state.registered()) this.port.send(to, { type: 'ShardHome', typeName, shardId, region });
  }

  private sendFor(handOff: HandOff): void {
    for (const { to, message } of handOff.messages(this.options.typeName)) this.port.send(to, message);
  }
}
