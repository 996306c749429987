// The entity API an application implements and calls: an entity's behaviour (EntityBehavior, EntityInstance),
// what it is given (EntityContext, its timers), the reference callers hold (EntityRef) and the outcome of one
// message. Types only: the runtime that runs them is region/entity.ts; everything of sharding may read them.
import type { NodeAddress } from '../../cluster/address.js';
import type { ErrorCode } from '../../errors.js';

/** The timers of one entity, as `EntityContext.timers` offers them. Keys are strings. */
export interface EntityTimers {
  /**
   * Delivers `message` to the entity once, after `delayMs` (an integer in 0..2147483647). Starting a key that
   * is active cancels its previous timer: that timer's message is never delivered, even when already queued.
   */
  startSingleTimer(key: string, message: unknown, delayMs: number): void;
  /**
   * Delivers `message` every `delayMs` (1..2147483647), measured from the moment the previous one left the
   * mailbox, so a slow entity never has more than one of this timer's messages waiting. Replaces the key's timer.
   */
  startTimerWithFixedDelay(key: string, message: unknown, delayMs: number): void;
  /** Cancels the key's timer; its message is not delivered, even when already queued. Unknown keys are ignored. */
  cancel(key: string): void;
  /** Whether the key has a timer whose message is still to be handled. */
  isTimerActive(key: string): boolean;
}

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
   * Stops this entity after the message it is handling now (Pekko's `Passivate`): its timers and pending pipes
   * end, its `stop()` runs, and its in-memory state is gone. Messages queued behind this one, and any arriving
   * meanwhile, wait and start a new incarnation afterwards, in their order. Calling it twice is harmless.
   */
  passivate(): void;
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

/**
 * An entity's outcome as its host reports it: an EntityOutcome, or a failure with a typed code (the asker
 * rejects with that code). `retry`: nothing was acknowledged (a durable commit failed or was fenced): a send is
 * not answered, so its sender retries it; an ask fails with the code.
 */
export type HostOutcome =
  EntityOutcome | { readonly ok: false; readonly error: string; readonly code: ErrorCode; readonly retry?: boolean };
