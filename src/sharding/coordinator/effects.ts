// What a coordinator handler decides, as data: the state events, the messages to send, the timers to start or
// cancel and the hand-offs completed (for metrics). Handlers (hand-offs.ts, shard-homes.ts, the Allocator)
// are given one Effects by the dispatcher (ShardCoordinator) and only record into it; the dispatcher then runs
// what was recorded (ShardCoordinator.run): it sends, arms and cancels the timers, reports the metrics.
// Events are applied to the state as they are recorded, so a handler's next decision (the next allocation of
// the same round, say) reads the state its earlier ones made; Effects.apply is the one call that changes it.
import type { Cancellable, Scheduler } from '../../cluster/scheduler.js';
import type { ShardingMessage } from '../protocol/messages.js';
import type { CoordinatorEvent } from './shard-life.js';
import type { CoordinatorState } from './state.js';

/** One message to one node. */
export interface Outgoing {
  readonly to: string;
  readonly message: ShardingMessage;
}

/** What a timer tells the dispatcher when it fires (the dispatcher hands it to the handler it names). */
export type CoordinatorTimer = { readonly type: 'hand-off-timeout'; readonly shardId: number; readonly id: number };

/** Starts (or restarts: a timer of the same key is cancelled first) or cancels one named timer. */
export type TimerEffect =
  { readonly start: string; readonly delayMs: number; readonly fire: CoordinatorTimer } | { readonly cancel: string };

/** The effects of one dispatch, in the order they were decided. */
export class Effects {
  readonly sends: Outgoing[] = [];
  readonly timers: TimerEffect[] = [];
  /** How long each hand-off that completed took, in seconds (CoordinatorEvents.onHandOffCompleted). */
  readonly handOffsCompleted: number[] = [];

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
    this.timers.push({ start: key, delayMs, fire });
  }

  cancelTimer(key: string): void {
    this.timers.push({ cancel: key });
  }
}

/** Where the dispatcher runs effects: the coordinator's send, its timers, its metrics. */
export interface EffectRunner {
  send(to: string, message: ShardingMessage): void;
  readonly timers: Timers;
  handOffCompleted(seconds: number): void;
}

/** Runs what one dispatch recorded, in order: timers first (so a timer a send's answer races with exists), then sends. */
export function runEffects(fx: Effects, runner: EffectRunner): void {
  for (const timer of fx.timers) {
    if ('cancel' in timer) runner.timers.cancel(timer.cancel);
    else runner.timers.start(timer.start, timer.delayMs, timer.fire);
  }
  for (const seconds of fx.handOffsCompleted) runner.handOffCompleted(seconds);
  for (const { to, message } of fx.sends) runner.send(to, message);
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
