// Schedulers a test controls, both implementing the runtime's Scheduler: ManualScheduler, whose time moves
// only when the test advances it, and PausableScheduler, the process clock with a pause standing in for SIGSTOP.
import { systemScheduler, type Cancellable, type Scheduler } from '../../src/cluster/scheduler.js';

interface Timer {
  at: number;
  readonly every: number | undefined;
  readonly fn: () => void;
}

/** Timers fire only inside advance(), in due-time order (creation order on ties), at their due time. */
export class ManualScheduler implements Scheduler {
  private time = 1_000;
  private nextId = 1;
  private readonly timers = new Map<number, Timer>();

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, delayMs: number): Cancellable {
    return this.add({ at: this.time + delayMs, every: undefined, fn });
  }

  setInterval(fn: () => void, intervalMs: number): Cancellable {
    return this.add({ at: this.time + intervalMs, every: intervalMs, fn });
  }

  /** Timers not yet fired or cancelled (intervals count until cancelled). */
  get pending(): number {
    return this.timers.size;
  }

  advance(ms: number): void {
    const target = this.time + ms;
    for (;;) {
      let due: [number, Timer] | undefined;
      for (const entry of this.timers)
        if (entry[1].at <= target && (due === undefined || entry[1].at < due[1].at)) due = entry;
      if (due === undefined) break;
      const [id, timer] = due;
      this.time = timer.at;
      if (timer.every === undefined) this.timers.delete(id);
      else timer.at += timer.every;
      timer.fn();
    }
    this.time = target;
  }

  private add(timer: Timer): Cancellable {
    const id = this.nextId++;
    this.timers.set(id, timer);
    return { cancel: () => void this.timers.delete(id) };
  }
}

/**
 * The process clock and timers, with a pause: while paused no timer runs, and on resume each timer that
 * came due runs once, late, as in a process continued after SIGSTOP (the clock kept going meanwhile).
 */
export class PausableScheduler implements Scheduler {
  private paused = false;
  private readonly due = new Map<object, () => void>();

  now(): number {
    return systemScheduler.now();
  }

  setTimeout(fn: () => void, delayMs: number): Cancellable {
    return this.wrap(fn, (run) => systemScheduler.setTimeout(run, delayMs));
  }

  setInterval(fn: () => void, intervalMs: number): Cancellable {
    return this.wrap(fn, (run) => systemScheduler.setInterval(run, intervalMs));
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    const due = [...this.due.values()];
    this.due.clear();
    for (const fn of due) fn();
  }

  private wrap(fn: () => void, start: (run: () => void) => Cancellable): Cancellable {
    const token = {};
    const timer = start(() => {
      if (this.paused) this.due.set(token, fn);
      else fn();
    });
    return {
      cancel: () => {
        timer.cancel();
        this.due.delete(token);
      },
    };
  }
}
