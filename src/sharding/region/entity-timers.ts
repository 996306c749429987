// An entity's timers (Pekko's TimerScheduler): keyed single and fixed-delay timers whose messages go through
// the entity's mailbox. Each key carries a generation; a timer's message is delivered only if its generation
// is still the key's current one when it is dequeued, so a timer restarted or cancelled after its message was
// queued never delivers that message (a quiet period restarted by every message depends on exactly this).
import type { Cancellable, Scheduler } from '../../cluster/scheduler.js';
import { ActorTsError } from '../../errors.js';
import type { EntityTimers } from '../core/entity-api.js';

/** Longest timer key, in characters: keys are names an entity picks, not data. */
export const MAX_TIMER_KEY_LENGTH = 256;
/** Longest delay: what setTimeout takes without overflowing. */
export const MAX_TIMER_DELAY_MS = 2_147_483_647;

/** A timer's message in the mailbox, checked against its key's generation when dequeued. */
export interface TimerLetter {
  readonly key: string;
  readonly generation: number;
  readonly message: unknown;
}

interface ActiveTimer {
  readonly generation: number;
  readonly message: unknown;
  /** Undefined for a single timer. */
  readonly repeatMs: number | undefined;
  handle: Cancellable | undefined;
}

export class EntityTimerSet implements EntityTimers {
  private readonly active = new Map<string, ActiveTimer>();
  private nextGeneration = 1;
  private ended = false;

  constructor(
    private readonly scheduler: Scheduler,
    private readonly enqueue: (letter: TimerLetter) => void,
  ) {}

  startSingleTimer(key: string, message: unknown, delayMs: number): void {
    this.start(checkKey(key), message, checkDelay(delayMs, 0), undefined);
  }

  startTimerWithFixedDelay(key: string, message: unknown, delayMs: number): void {
    const delay = checkDelay(delayMs, 1);
    this.start(checkKey(key), message, delay, delay);
  }

  cancel(key: string): void {
    const timer = this.active.get(checkKey(key));
    if (timer === undefined) return;
    timer.handle?.cancel();
    this.active.delete(key);
  }

  isTimerActive(key: string): boolean {
    return this.active.has(checkKey(key));
  }

  get size(): number {
    return this.active.size;
  }

  /**
   * At dequeue: whether the letter's timer is still current (deliver it) or was restarted or cancelled since
   * (drop it). A delivered single timer ends; a fixed-delay one is scheduled again from now.
   */
  accept(letter: TimerLetter): boolean {
    const timer = this.active.get(letter.key);
    if (timer === undefined || timer.generation !== letter.generation) return false;
    if (timer.repeatMs === undefined) this.active.delete(letter.key);
    else this.schedule(letter.key, timer, timer.repeatMs);
    return true;
  }

  /** Cancels every timer for good: the entity is stopping. Later starts are ignored. */
  end(): void {
    this.ended = true;
    // Most entities never start a timer: an empty map is left as it is (clear() allocates a new table).
    if (this.active.size === 0) return;
    for (const timer of this.active.values()) timer.handle?.cancel();
    this.active.clear();
  }

  private start(key: string, message: unknown, delayMs: number, repeatMs: number | undefined): void {
    if (this.ended) return;
    this.active.get(key)?.handle?.cancel();
    const timer: ActiveTimer = { generation: this.nextGeneration++, message, repeatMs, handle: undefined };
    this.active.set(key, timer);
    this.schedule(key, timer, delayMs);
  }

  private schedule(key: string, timer: ActiveTimer, delayMs: number): void {
    timer.handle = this.scheduler.setTimeout(() => {
      timer.handle = undefined;
      if (this.active.get(key) === timer) this.enqueue({ key, generation: timer.generation, message: timer.message });
    }, delayMs);
  }
}

function checkKey(key: unknown): string {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_TIMER_KEY_LENGTH) {
    throw new ActorTsError(
      'invalid_argument',
      `timer key must be a string of 1..${MAX_TIMER_KEY_LENGTH} characters, got ${describeKey(key)}`,
    );
  }
  return key;
}

function checkDelay(delayMs: unknown, min: number): number {
  if (typeof delayMs !== 'number' || !Number.isInteger(delayMs) || delayMs < min || delayMs > MAX_TIMER_DELAY_MS) {
    throw new ActorTsError(
      'invalid_argument',
      `timer delayMs must be an integer in ${min}..${MAX_TIMER_DELAY_MS}, got ${String(delayMs)}`,
    );
  }
  return delayMs;
}

function describeKey(key: unknown): string {
  if (typeof key === 'string') return `a string of ${key.length} characters`;
  return key === null ? 'null' : typeof key;
}
