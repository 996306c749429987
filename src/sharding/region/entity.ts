// A sharded entity's mailbox: it runs one entity's messages strictly one at a time, with the entity's timers
// and the results of its piped work. The behaviour users write and the reference callers hold are the entity
// API (core/entity-api.ts).
import { systemScheduler, type Scheduler } from '../../cluster/scheduler.js';
import { ActorTsError } from '../../errors.js';
import { describeValue } from '../../logging.js';
import type { EntityInstance, EntityTimers, HostOutcome, PipeOutcome } from '../core/entity-api.js';
import { EntityTimerSet, type TimerLetter } from './entity-timers.js';
import type { SendMark } from './send-marks.js';
import type { CheckResult, MessageCheck } from './message-check.js';

/** Longest error text reported to an asker or written to a log; an entity's error may quote its input. */
export const MAX_ERROR_TEXT = 500;

export type { HostOutcome };

export type ReplyFn = (outcome: HostOutcome) => void;

/** A message waiting in the mailbox, with where its answer goes and, for a reliable send, its mark. */
export interface QueuedMessage {
  readonly message: unknown;
  readonly reply: ReplyFn | undefined;
  readonly mark?: SendMark | undefined;
  /** The entity's own (a piped outcome): not checked against the type's message schema. */
  readonly internal?: boolean;
}

/**
 * What a durable entity's messages pass (durable-shard.ts): `before` answers a send it already settled without
 * running it; `after` returns the outcome to answer with once the state the message produced is committed.
 */
export interface MessageGate {
  before(mark: SendMark | undefined): Promise<HostOutcome> | undefined;
  after(outcome: HostOutcome, mark: SendMark | undefined): Promise<HostOutcome>;
}

type Letter = ({ readonly kind: 'message' } & QueuedMessage) | { readonly kind: 'timer'; readonly timer: TimerLetter };

export interface EntityOptions {
  /** Runs the entity's timers; default the process timers (unref'd). */
  readonly scheduler?: Scheduler;
  /** A piped outcome that settled after the entity stopped was dropped. */
  readonly onLatePipe?: (entityId: string) => void;
  /** Checks each message from outside against the type's schema before `receive` (message-check.ts). */
  readonly check?: MessageCheck;
  /** A message the check refused was answered `invalid_message` (or, a tell, dropped). */
  readonly onInvalid?: () => void;
}

/** One entity's mailbox and lifecycle inside a shard. */
export class Entity {
  private readonly queue: Letter[] = [];
  private running = false;
  private idleWaiters: Array<() => void> | undefined;
  private instance: EntityInstance | undefined;
  private gate: MessageGate | undefined;
  /** Made when the entity first reads its timers: most entities never start one. */
  private timerSet: EntityTimerSet | undefined;
  private ended = false;
  private pipes = 0;

  /** Without `instance`, messages wait in the mailbox until `attach` (the behavior is given the entity's context first). */
  constructor(
    readonly entityId: string,
    instance: EntityInstance | undefined,
    private readonly onError: (entityId: string, phase: 'receive' | 'stop', error: unknown) => void,
    private readonly options: EntityOptions = {},
  ) {
    if (instance !== undefined) this.attach(instance);
  }

  get queued(): number {
    return this.queue.length;
  }

  get timers(): EntityTimers {
    if (this.timerSet === undefined) {
      const timerSet = new EntityTimerSet(this.options.scheduler ?? systemScheduler, (timer) =>
        this.push({ kind: 'timer', timer }),
      );
      // Timers read first after the entity stopped cannot start either.
      if (this.ended) timerSet.end();
      this.timerSet = timerSet;
    }
    return this.timerSet;
  }

  /** Piped work not settled yet. */
  get pendingPipes(): number {
    return this.pipes;
  }

  /** Gives the entity its instance (and, durable, the gate its messages pass); queued messages start running. */
  attach(instance: EntityInstance, gate?: MessageGate): void {
    this.instance = instance;
    this.gate = gate;
    if (!this.running && this.queue.length > 0) void this.drain();
  }

  enqueue(message: unknown, reply: ReplyFn | undefined, mark?: SendMark): void {
    this.push({ kind: 'message', message, reply, mark });
  }

  pipeToSelf<T>(work: PromiseLike<T>, toMessage: (outcome: PipeOutcome<T>) => unknown): void {
    if (typeof (work as { then?: unknown } | null)?.then !== 'function') {
      throw new ActorTsError('invalid_argument', 'pipeToSelf needs a promise (or thenable) as its work');
    }
    if (typeof toMessage !== 'function')
      throw new ActorTsError('invalid_argument', 'pipeToSelf needs a function (outcome) => message');
    this.pipes++;
    const settled = (outcome: PipeOutcome<T>): void => {
      this.pipes--;
      if (this.ended) {
        this.options.onLatePipe?.(this.entityId);
        return;
      }
      let message: unknown;
      try {
        message = toMessage(outcome);
      } catch (error) {
        this.onError(this.entityId, 'receive', error);
        return;
      }
      this.push({ kind: 'message', message, reply: undefined, internal: true });
    };
    Promise.resolve(work).then(
      (value) => settled({ ok: true, value }),
      (error: unknown) => settled({ ok: false, error }),
    );
  }

  /**
   * The entity is stopping (its shard hands off or the node shuts down): its timers end (queued timer messages
   * are dropped at dequeue) and pipes settling from now on are dropped. Messages already queued still run.
   */
  end(): void {
    this.ended = true;
    this.timerSet?.end();
  }

  /**
   * Passivation: the entity stops after the message it is running (if any). Its timers and pipes end now; the
   * messages still queued are taken out and returned, in order, for its next incarnation (timer letters are
   * dropped: their timers ended with it).
   */
  retire(): QueuedMessage[] {
    this.end();
    const waiting: QueuedMessage[] = [];
    for (const letter of this.queue.splice(0)) if (letter.kind === 'message') waiting.push(letter);
    return waiting;
  }

  /** No message queued or running. */
  get idle(): boolean {
    return !this.running && this.queue.length === 0;
  }

  /** Resolves once every queued message was handled. */
  whenIdle(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise((resolve) => (this.idleWaiters ??= []).push(resolve));
  }

  /** Whether the entity implements `snapshot`. */
  get snapshots(): boolean {
    return typeof this.instance?.snapshot === 'function';
  }

  /** The entity's snapshot; a throw is returned as the error, never thrown (one entity cannot block a hand-off). */
  snapshot(): { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string } {
    try {
      return { ok: true, value: this.instance?.snapshot?.() };
    } catch (error) {
      return { ok: false, error: describeError(error) };
    }
  }

  /**
   * Runs the entity's stop hook; errors are reported, never thrown, so one entity cannot block a hand-off.
   * Undefined (nothing to wait for) when the entity has no hook.
   */
  stop(): Promise<void> | undefined {
    this.end();
    if (typeof this.instance?.stop !== 'function') return undefined;
    return this.runStopHook();
  }

  private async runStopHook(): Promise<void> {
    try {
      await this.instance?.stop?.();
    } catch (error) {
      this.onError(this.entityId, 'stop', error);
    }
  }

  /** The type's check of a message from outside; undefined without a schema. Counts a refusal. */
  private check(message: unknown): CheckResult | Promise<CheckResult> | undefined {
    const { check, onInvalid } = this.options;
    if (check === undefined) return undefined;
    const count = (result: CheckResult): CheckResult => {
      if (!result.ok) onInvalid?.();
      return result;
    };
    const result = check(message);
    return result instanceof Promise ? result.then(count) : count(result);
  }

  private answer(reply: ReplyFn | undefined, outcome: HostOutcome): void {
    try {
      reply?.(outcome);
    } catch (error) {
      // A failing reply must neither escape as an unhandled rejection nor leave the mailbox stuck.
      this.onError(this.entityId, 'receive', error);
    }
  }

  private push(letter: Letter): void {
    this.queue.push(letter);
    if (!this.running && this.instance !== undefined) void this.drain();
  }

  private async drain(): Promise<void> {
    const instance = this.instance;
    if (instance === undefined) return;
    this.running = true;
    let letter = this.queue.shift();
    while (letter !== undefined) {
      // A timer restarted or cancelled after its message was queued: that message is never delivered.
      if (letter.kind === 'timer' && this.timerSet?.accept(letter.timer) !== true) {
        letter = this.queue.shift();
        continue;
      }
      const message = letter.kind === 'timer' ? letter.timer.message : letter.message;
      const reply = letter.kind === 'message' ? letter.reply : undefined;
      const mark = letter.kind === 'message' ? letter.mark : undefined;
      // A durable entity answers a send it already settled without running it again.
      const settled = this.gate?.before(mark);
      if (settled !== undefined) {
        void settled.then((outcome) => this.answer(reply, outcome));
        letter = this.queue.shift();
        continue;
      }
      // Awaited only when the schema is asynchronous: no extra turn per message otherwise.
      const pending = letter.kind === 'message' && letter.internal !== true ? this.check(message) : undefined;
      const checked = pending instanceof Promise ? await pending : pending;
      if (checked !== undefined && !checked.ok) {
        this.answer(reply, { ok: false, code: 'invalid_message', error: checked.error });
        letter = this.queue.shift();
        continue;
      }
      let outcome: HostOutcome;
      try {
        outcome = { ok: true, value: await instance.receive(checked === undefined ? message : checked.value) };
      } catch (error) {
        this.onError(this.entityId, 'receive', error);
        outcome = { ok: false, error: describeError(error) };
      }
      // A durable entity's answer leaves once the state it produced is committed; the next message runs meanwhile.
      if (this.gate === undefined) this.answer(reply, outcome);
      else void this.gate.after(outcome, mark).then((committed) => this.answer(reply, committed));
      letter = this.queue.shift();
    }
    this.running = false;
    const waiters = this.idleWaiters;
    if (waiters === undefined) return;
    this.idleWaiters = undefined;
    for (const resolve of waiters) resolve();
  }
}

/**
 * Never throws, whatever an entity threw or rejected with (a null-prototype object, a throwing toString), and
 * never returns more than MAX_ERROR_TEXT characters: a thrown value is described, not stringified whole.
 */
export function describeError(error: unknown): string {
  try {
    // String() of an array joins every element, however large or deeply shared the array is.
    if (Array.isArray(error)) return describeValue(error, MAX_ERROR_TEXT - 40);
    const text = error instanceof Error ? String(error.message || error.name) : String(error);
    return text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT - 20)}... (${text.length} chars)` : text;
  } catch {
    return Object.prototype.toString.call(error);
  }
}
