// What a coordinator handler decides, as data: the state events, the messages to send, the timers to start or
// cancel and what to report (metrics, failover steps). Handlers (hand-offs.ts, allocation.ts's ShardHomes and Allocator)
// are given one Effects by the Dispatcher (below; the ShardCoordinator's) and only record into it; the
// Dispatcher then runs what was recorded: it arms and cancels the timers, reports the metrics, sends.
// Events are applied to the state as they are recorded, so a handler's next decision (the next allocation of
// the same round, say) reads the state its earlier ones made; Effects.apply is the one call that changes it.
import type { Cancellable, Scheduler } from '../../cluster/scheduler.js';
import type { ShardingMessage } from '../protocol/messages.js';
import type { CoordinatorEvent, CoordinatorState } from './state.js';

/** One message to one node. */
export interface Outgoing {
  readonly to: string;
  readonly message: ShardingMessage;
}

/** What a timer tells the dispatcher when it fires (the dispatcher hands it to the handler it names). */
export type CoordinatorTimer =
  | { readonly type: 'hand-off-timeout'; readonly shardId: number; readonly id: number }
  /** The strategy's answers change by time now (a pin expires: AllocationStrategy.nextChangeInMs). */
  | { readonly type: 'placement-change' }
  /** The warm-up time elapsed (membership.ts's WarmUpGate). */
  | { readonly type: 'warm-up' }
  /** The earliest running down-removal margin ended (membership.ts's DownRemovalMargin): the membership check again. */
  | { readonly type: 'margin-ended' };

/** What the coordinator reports as it happens (its metrics, the failover timeline, the node's wiring). */
export type CoordinatorReport =
  | { readonly kind: 'hand-off-completed'; readonly seconds: number }
  /** Entities whose state in transit was dropped (CoordinatorEvents.onEntitySnapshots, 'lost'). */
  | { readonly kind: 'entities-lost'; readonly entities: number }
  /** A failover phase for the failed member (CoordinatorEvents.onFailoverStep; membership.ts's FailoverReport). */
  | { readonly kind: 'failover-step'; readonly member: string; readonly phase: 'removed' | 're-homed' }
  /** A region registered for the first time (CoordinatorConfig.onRegionAdded). */
  | { readonly kind: 'region-added' }
  | { readonly kind: 'rebalance-round' };

/** Starts (or restarts: a timer of the same key is cancelled first) or cancels one named timer. */
export type TimerEffect =
  { readonly start: string; readonly delayMs: number; readonly fire: CoordinatorTimer } | { readonly cancel: string };

/** The effects of one dispatch, in the order they were decided. */
export class Effects {
  readonly sends: Outgoing[] = [];
  // The rarer effects' lists are made on first use: a dispatch per message should cost little.
  private timerList: TimerEffect[] | undefined;
  private reportList: CoordinatorReport[] | undefined;

  constructor(readonly state: CoordinatorState) {}

  /** Applies an event to the coordinator's state (see CoordinatorState.apply), now. */
  apply(event: CoordinatorEvent): void {
    this.state.apply(event);
  }

  send(to: string, message: ShardingMessage): void {
    this.sends.push({ to, message });
  }

  /** Sends to every registered region and proxy, as registered now. */
  broadcast(message: ShardingMessage): void {
    for (const region of this.state.registered()) this.send(region, message);
  }

  startTimer(key: string, delayMs: number, fire: CoordinatorTimer): void {
    (this.timerList ??= []).push({ start: key, delayMs, fire });
  }

  cancelTimer(key: string): void {
    (this.timerList ??= []).push({ cancel: key });
  }

  /** Something to report once the dispatch ran (metrics, the failover timeline): see CoordinatorReport. */
  report(report: CoordinatorReport): void {
    (this.reportList ??= []).push(report);
  }

  /** The timers to start or cancel, in order. */
  get timers(): readonly TimerEffect[] {
    return this.timerList ?? NONE;
  }

  /** The reports, in the order decided. */
  get reports(): readonly CoordinatorReport[] {
    return this.reportList ?? NONE;
  }
}

const NONE: readonly never[] = [];

/** Where a dispatch's effects go: the coordinator's one send and its reports. */
export interface EffectSink {
  send(to: string, message: ShardingMessage): void;
  report(report: CoordinatorReport): void;
}

/**
 * The coordinator's dispatcher: each message and each timer is one dispatch, whose handlers record what they
 * decide in one Effects, which is run once they return (timers first, then reports, then sends, each in the
 * order decided). A dispatch started while one runs (a gate opening inside a registration, say) joins it.
 */
export class Dispatcher {
  readonly timers: Timers;
  private current: Effects | undefined;

  constructor(
    private readonly state: CoordinatorState,
    scheduler: Scheduler,
    private readonly sink: EffectSink,
    fired: (fx: Effects, timer: CoordinatorTimer) => void,
  ) {
    this.timers = new Timers(scheduler, (timer) => this.dispatch((fx) => fired(fx, timer)));
  }

  dispatch(work: (fx: Effects) => void): void {
    if (this.current !== undefined) return work(this.current);
    const fx = (this.current = new Effects(this.state));
    try {
      work(fx);
    } finally {
      this.current = undefined;
      this.run(fx);
    }
  }

  private run(fx: Effects): void {
    for (const timer of fx.timers) {
      if ('cancel' in timer) this.timers.cancel(timer.cancel);
      else this.timers.start(timer.start, timer.delayMs, timer.fire);
    }
    for (const report of fx.reports) this.sink.report(report);
    for (const { to, message } of fx.sends) this.sink.send(to, message);
  }
}

/** The dispatcher's named timers: at most one per key; a fired timer is forgotten before it is handed on. */
export class Timers {
  private readonly running = new Map<string, Cancellable>();

  constructor(
    private readonly scheduler: Scheduler,
    private readonly fired: (timer: CoordinatorTimer) => void,
  ) {}

  /** Timers armed now. */
  get size(): number {
    return this.running.size;
  }

  start(key: string, delayMs: number, fire: CoordinatorTimer): void {
    this.cancel(key);
    const timer = this.scheduler.setTimeout(() => {
      if (this.running.get(key) === timer) this.running.delete(key);
      this.fired(fire);
    }, delayMs);
    this.running.set(key, timer);
  }

  cancel(key: string): void {
    this.running.get(key)?.cancel();
    this.running.delete(key);
  }

  cancelAll(): void {
    for (const timer of this.running.values()) timer.cancel();
    this.running.clear();
  }
}
