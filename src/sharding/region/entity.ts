// Sharded entities: the behaviour users write, the reference callers hold, and the mailbox that runs one
// entity's messages strictly one at a time, with the entity's timers and the results of its piped work.
import type { NodeAddress } from '../../cluster/address.js';
import { systemScheduler, type Scheduler } from '../../cluster/scheduler.js';
import { ActorTsError } from '../../errors.js';
import { describeValue } from '../../logging.js';
import { EntityTimerSet, type EntityTimers, type TimerLetter } from './entity-timers.js';

export type { EntityTimers };

/** Longest error text reported to an asker or written to a log; an entity's error may quote its input. */
export const MAX_ERROR_TEXT = 500;

/** How piped work ended, as `pipeToSelf` hands it to its `toMessage`. */
export type PipeOutcome<T = unknown> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

/**
 * What an entity learns about itself when it is created (on its first message, on the node hosting its shard),
 * and what it may do besides answering: timers, messages to itself, async work that does not block its mailbox.
 * Timers and pending pipes end with the entity (hand-off, shutdown): nothing of them reaches a later incarnation.
 */
export interface EntityContext {
  readonly entityId: string;
  readonly shardId: number;
  readonly typeName: string;
  /** The entity's own reference (Pekko's `context.self`): a `tell` to it goes through sharding, like anyone's. */
  readonly self: EntityRef;
  /** The node the entity runs on. */
  readonly node: NodeAddress;
  /** Keyed timers whose messages come through the mailbox (see EntityTimers). */
  readonly timers: EntityTimers;
  /**
   * Lets `work` run while the entity keeps receiving; when it settles, `toMessage(outcome)` becomes the entity's
   * next message through the mailbox (its answer, if any, goes nowhere). Settling after the entity stopped
   * (its shard moved, the node shut down), the outcome is dropped and counted, never delivered.
   */
  pipeToSelf<T>(work: PromiseLike<T>, toMessage: (outcome: PipeOutcome<T>) => unknown): void;
  /**
   * What `snapshot()` returned on the entity's previous host, when its shard was handed off gracefully;
   * undefined for a fresh start (first start, a crash of the host, a snapshot over the bound or not encodable).
   * A restored entity is created on its first message on the new host (like any entity), not when its shard
   * starts there; until then its state waits there encoded, and moves on as it is with a further hand-off.
   */
  readonly restored?: unknown;
}

/**
 * A live entity. `receive` handles one message at a time: the next message waits until the returned value
 * (or promise) settles. That value answers an `ask`; a `tell` discards it. A thrown error or rejected
 * promise fails the ask (`entity_failed`) and the entity keeps running with its state. `stop` runs once,
 * after the last queued message, when the shard is handed off or the node shuts down.
 *
 * Messages and answers that cross nodes are msgpack-encoded: use plain data (objects, arrays, strings,
 * numbers, booleans, null, Uint8Array).
 */
export interface EntityInstance {
  receive(message: unknown): unknown | Promise<unknown>;
  stop?(): void | Promise<void>;
  /**
   * The entity's state as plain data (msgpack encodable), taken on a graceful hand-off after its last message
   * there and given to its next incarnation as `ctx.restored`. Over `maxEntitySnapshotBytes`, not encodable
   * or throwing: the entity starts fresh on the new host (logged and counted). Without it, state is lost.
   */
  snapshot?(): unknown;
}

/** Creates an entity; called once per entity id per incarnation of its shard on a node. */
export type EntityBehavior = (ctx: EntityContext) => EntityInstance;

/** Options of `EntityRef.ask`. */
export interface AskOptions {
  /** Reject with `timeout` after this long; default `ShardingConfig.askTimeoutMs`. */
  readonly timeoutMs?: number;
}

/** Options of `EntityRef.send`. */
export interface SendOptions {
  /** Reject with `timeout` after this long; default `ShardingConfig.sendTimeoutMs` (60 s). */
  readonly timeoutMs?: number;
}

/** A location-transparent handle on one entity. */
export interface EntityRef {
  readonly typeName: string;
  readonly entityId: string;
  readonly shardId: number;
  /** Fire and forget, at most once: a message lost to a crash, a full buffer or the network is not retried. */
  tell(message: unknown): void;
  /**
   * Sends and resolves with the entity's answer; rejects with `timeout`, `entity_failed` or `buffer_overflow`.
   * At most once. A `timeout` says `delivered: false` when the message was still in this node's buffer (it
   * was removed and is never applied) and `delivered: true` when it had left (outcome unknown).
   */
  ask<R = unknown>(message: unknown, options?: AskOptions): Promise<R>;
  /**
   * Reliable send, at least once: resolves once the entity processed the message (its `receive` settled),
   * retried across hand-offs, lost connections and a crash of the host until then or `timeoutMs` (default
   * `sendTimeoutMs`, 60 s). A host processes a retried copy once while it lives; after a crash, the new host
   * may process again a message the dead host processed without confirming. Rejects with `buffer_overflow`
   * at once beyond `maxOutstandingSends` (per region) or `maxOutstandingSendsPerShard`, `entity_failed` when
   * `receive` threw (processed: not retried), `timeout` with `delivered` as for `ask`.
   */
  send(message: unknown, options?: SendOptions): Promise<void>;
}

/** The outcome of one message, as reported to an asker. */
export type EntityOutcome =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string };

export type ReplyFn = (outcome: EntityOutcome) => void;

type Letter =
  | { readonly kind: 'message'; readonly message: unknown; readonly reply: ReplyFn | undefined }
  | { readonly kind: 'timer'; readonly timer: TimerLetter };

export interface EntityOptions {
  /** Runs the entity's timers; default the process timers (unref'd). */
  readonly scheduler?: Scheduler;
  /** A piped outcome that settled after the entity stopped was dropped. */
  readonly onLatePipe?: (entityId: string) => void;
}

/** One entity's mailbox and lifecycle inside a shard. */
export class Entity {
  private readonly queue: Letter[] = [];
  private running = false;
  private idleWaiters: Array<() => void> = [];
  private instance: EntityInstance | undefined;
  private readonly timerSet: EntityTimerSet;
  private ended = false;
  private pipes = 0;

  /** Without `instance`, messages wait in the mailbox until `attach` (the behavior is given the entity's context first). */
  constructor(
    readonly entityId: string,
    instance: EntityInstance | undefined,
    private readonly onError: (entityId: string, phase: 'receive' | 'stop', error: unknown) => void,
    private readonly options: EntityOptions = {},
  ) {
    this.timerSet = new EntityTimerSet(options.scheduler ?? systemScheduler, (timer) =>
      this.push({ kind: 'timer', timer }),
    );
    if (instance !== undefined) this.attach(instance);
  }

  get queued(): number {
    return this.queue.length;
  }

  get timers(): EntityTimers {
    return this.timerSet;
  }

  /** Piped work not settled yet. */
  get pendingPipes(): number {
    return this.pipes;
  }

  attach(instance: EntityInstance): void {
    this.instance = instance;
    if (!this.running && this.queue.length > 0) void this.drain();
  }

  enqueue(message: unknown, reply: ReplyFn | undefined): void {
    this.push({ kind: 'message', message, reply });
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
      this.enqueue(message, undefined);
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
    this.timerSet.end();
  }

  /** No message queued or running. */
  get idle(): boolean {
    return !this.running && this.queue.length === 0;
  }

  /** Resolves once every queued message was handled. */
  whenIdle(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
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
      if (letter.kind === 'timer' && !this.timerSet.accept(letter.timer)) {
        letter = this.queue.shift();
        continue;
      }
      const message = letter.kind === 'timer' ? letter.timer.message : letter.message;
      const reply = letter.kind === 'message' ? letter.reply : undefined;
      let outcome: EntityOutcome;
      try {
        outcome = { ok: true, value: await instance.receive(message) };
      } catch (error) {
        this.onError(this.entityId, 'receive', error);
        outcome = { ok: false, error: describeError(error) };
      }
      try {
        reply?.(outcome);
      } catch (error) {
        // A failing reply must neither escape as an unhandled rejection nor leave the mailbox stuck.
        this.onError(this.entityId, 'receive', error);
      }
      letter = this.queue.shift();
    }
    this.running = false;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
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
