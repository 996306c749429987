// One shard hosted on this node: creates its entities on their first message (one whose state came with the
// shard's hand-off gets it then) and stops them all when the shard is handed off (after the messages already
// in their mailboxes, as Pekko's hand-off stop message does), with the states of those never woken here.
// It also passivates single entities (idle, over the type's limit, or asked by the entity): messages for one
// being passivated wait here, in order, and start its next incarnation once its stop hook ended.
import type { NodeAddress } from '../../cluster/address.js';
import { systemScheduler, type Cancellable, type Scheduler } from '../../cluster/scheduler.js';
import type { Logger } from '../../logging.js';
import { ActorTsError, type ErrorCode } from '../../errors.js';
import {
  Entity,
  describeError,
  type EntityOptions,
  type MessageGate,
  type QueuedMessage,
  type ReplyFn,
} from './entity.js';
import { DurableShard, notAcknowledged, type DurableSettings, type LoadedEntity } from './durable-shard.js';
import type { SendMark } from './send-marks.js';
import type { MessageCheck } from './message-check.js';
import type { PassivationReason } from '../core/passivation.js';
import type { PassivatingShard, PassivationTracker } from './passivation.js';
import type { EntityBehavior, EntityContext, EntityRef } from '../core/entity-api.js';
import type { HeldLeft, HeldStates } from './held-state.js';
import type { StoppedStates, TakenSnapshot } from './shard-state.js';
import { ShardEntityContext, type ContextBase } from './entity-context.js';

/** What a shard's entities are given besides their behavior: their own references, timers, and where drops go. */
export interface ShardEntityOptions {
  /** The entity's own EntityRef (its `ctx.self`). */
  readonly entityRef: (entityId: string) => EntityRef;
  /** Runs entity timers and the shard's stop deadline; default systemScheduler. */
  readonly scheduler?: Scheduler;
  /** A piped outcome reached an entity that had stopped, and was dropped. */
  readonly onLatePipe?: () => void;
  /** The type's active entities on this node, for idle and limit passivation; absent: never passivated by it. */
  readonly passivation?: PassivationTracker;
  /** Present for a durable type: its entities start from the entity store and commit after every message. */
  readonly durable?: DurableSettings;
  /** Present for a type with a message schema: each message from outside is checked before `receive`. */
  readonly check?: MessageCheck;
  /** A message the schema refused (counted by the region). */
  readonly onInvalid?: () => void;
}

/** An entity being passivated: the messages that came for it meanwhile, and the end of its stop. */
interface Passivating {
  readonly waiting: QueuedMessage[];
  readonly done: Promise<void>;
}

export class Shard implements PassivatingShard {
  private readonly entities = new Map<string, Entity>();
  private readonly passivating = new Map<string, Passivating>();
  private stopping: Promise<void> | undefined;
  private taken: StoppedStates = { snapshots: [] };
  private readonly durable: DurableShard | undefined;
  private entityOptions: EntityOptions | undefined;
  private contextBase: ContextBase | undefined;

  /**
   * `held`: entity states handed over from the shard's previous host. Such an entity is created on its first
   * message, like any, with its state as `ctx.restored` (before that message); one never woken here keeps its
   * state, shipped on as it came when the shard is handed off again.
   */
  constructor(
    readonly typeName: string,
    readonly shardId: number,
    private readonly behavior: EntityBehavior,
    private readonly node: NodeAddress,
    private readonly logger: Logger,
    private readonly options: ShardEntityOptions,
    private readonly held: HeldStates | undefined = undefined,
  ) {
    const { durable } = options;
    if (durable === undefined) return;
    this.durable = new DurableShard(typeName, shardId, durable, () => this.fence());
    // Claimed as the shard starts: an older host is fenced out before any entity of it runs here.
    this.durable.claim().catch((error: unknown) => {
      logger.warn(
        { shardId, err: describeError(error) },
        'durable shard not claimed yet: retried by its first message',
      );
    });
  }

  /**
   * The states a `stop` that asked for them hands over, once it ended: the snapshots taken after each entity's
   * last message, and the states held for entities never woken here.
   */
  get stoppedStates(): StoppedStates {
    return this.taken;
  }

  /**
   * The states held now for entities not woken here (HeldStates.now), while the shard runs; undefined once it
   * stops, when it holds none, or for a durable shard (it ships no state: its commits are its state).
   */
  get heldNow(): HeldLeft | undefined {
    const { held } = this;
    if (this.stopping !== undefined || this.durable !== undefined || held === undefined || held.size === 0) return;
    return held.now();
  }

  /** Entities created here (an entity whose state is held, not woken yet, is not counted). */
  get entityCount(): number {
    return this.entities.size;
  }

  get isStopping(): boolean {
    return this.stopping !== undefined;
  }

  /** Queues a message for an entity, creating the entity first if needed. Callers never deliver to a stopping shard. */
  deliver(entityId: string, message: unknown, reply: ReplyFn | undefined, mark?: SendMark): void {
    if (this.durable?.isFenced === true) {
      reply?.(notAcknowledged('entity_fenced', `shard ${this.shardId} was claimed by a later host`));
      return;
    }
    const passivating = this.passivating.get(entityId);
    if (passivating !== undefined) {
      passivating.waiting.push({ message, reply, mark });
      return;
    }
    const entity = this.entities.get(entityId) ?? this.create(entityId, this.held?.wake(entityId), reply);
    if (entity === undefined) return;
    this.options.passivation?.touch(entity, this, entityId);
    entity.enqueue(message, reply, mark);
  }

  /**
   * Stops one entity after the message it is running: its timers and pipes end, queued messages and those
   * arriving meanwhile wait, its stop hook runs, then the waiting messages start a new incarnation. No-op for
   * an entity not active here (already passivating, never created) or while the shard stops.
   */
  passivate(entityId: string, reason: PassivationReason): void {
    const entity = this.entities.get(entityId);
    if (entity === undefined || this.stopping !== undefined) return;
    this.entities.delete(entityId);
    this.options.passivation?.remove(entity);
    this.options.passivation?.count(reason);
    // A durable entity's state is committed after every message: its next incarnation starts from the store
    // (after these commits); an in-memory entity's state is dropped.
    const waiting = entity.retire();
    // The common case at the limit or after idleMs: nothing running and no stop hook, so nothing to wait for
    // and no promise per passivation.
    const stopping = entity.idle ? entity.stop() : undefined;
    if (entity.idle && stopping === undefined) return;
    const done = (stopping ?? entity.whenIdle().then(() => entity.stop())).then(() => this.passivated(entityId));
    this.passivating.set(entityId, { waiting, done });
  }

  private passivated(entityId: string): void {
    const passivating = this.passivating.get(entityId);
    this.passivating.delete(entityId);
    if (passivating === undefined) return;
    // Waiting messages go first, in the order they came: a new incarnation starts with the oldest.
    for (const { message, reply, mark } of passivating.waiting) this.deliver(entityId, message, reply, mark);
  }

  /**
   * A durable entity whose state could not be committed: this incarnation is dropped without its stop hook's
   * wait, and its queued messages start the next one, which starts from the store (after the pending commits).
   */
  private reset(entityId: string, entity: Entity): void {
    if (this.entities.get(entityId) !== entity) return;
    this.entities.delete(entityId);
    this.options.passivation?.remove(entity);
    const waiting = entity.retire();
    const done = entity.whenIdle().then(() => entity.stop());
    this.passivating.set(entityId, { waiting, done: done.then(() => this.passivated(entityId)) });
  }

  /** A later host claimed this durable shard: its entities stop here and nothing more is acknowledged. */
  private fence(): void {
    this.logger.warn(
      { shardId: this.shardId },
      'durable shard fenced: a later host claimed it; its entities stop here',
    );
    for (const [entityId, entity] of [...this.entities]) {
      this.drop(entityId, entity, 'entity_fenced', 'its shard moved');
      void entity.whenIdle().then(() => entity.stop());
    }
  }

  /**
   * Stops every entity once its mailbox is empty. Idempotent. `graceMs` bounds the wait for mailboxes that
   * never drain (an entity stuck on a promise): after it, entities are stopped regardless. `snapshot`: take
   * each entity's snapshot after its last message and before its stop hook (a hand-off that ships state).
   */
  stop(graceMs: number, snapshot = false): Promise<void> {
    this.stopping ??= this.stopAll(graceMs, snapshot);
    return this.stopping;
  }

  private create(
    entityId: string,
    restored: { readonly value: unknown } | undefined,
    reply: ReplyFn | undefined,
  ): Entity | undefined {
    const entity = this.newEntity(entityId);
    if (this.durable !== undefined) return this.createDurable(entityId, entity, this.durable);
    return this.instantiate(entityId, entity, restored, reply) ? entity : undefined;
  }

  /**
   * A durable entity waits, its messages queued in its mailbox, until its row is read from the store; one that
   * cannot be read (store unavailable, row that does not decode) is dropped with a typed answer to each message.
   */
  private createDurable(entityId: string, entity: Entity, durable: DurableShard): Entity {
    this.entities.set(entityId, entity);
    const started = (loaded: LoadedEntity): void => {
      if (this.entities.get(entityId) !== entity) return;
      const gate = durable.gate(
        entityId,
        loaded,
        () => entity.snapshot(),
        () => this.reset(entityId, entity),
      );
      const restored = loaded.state === undefined ? undefined : { value: loaded.state };
      if (!this.instantiate(entityId, entity, restored, undefined, gate)) this.drop(entityId, entity, 'entity_failed');
    };
    durable.open(entityId).then(started, (error: unknown) => {
      this.logger.warn({ entityId, shardId: this.shardId, err: describeError(error) }, 'durable entity not started');
      const code = error instanceof ActorTsError ? error.code : 'entity_store_unavailable';
      this.drop(entityId, entity, code, describeError(error));
    });
    return entity;
  }

  /** Drops an entity (never started, or fenced): each queued message is answered with `code`, acknowledging nothing. */
  private drop(entityId: string, entity: Entity, code: ErrorCode, why = 'the entity could not be created'): void {
    if (this.entities.get(entityId) === entity) this.entities.delete(entityId);
    this.options.passivation?.remove(entity);
    for (const { reply } of entity.retire()) reply?.(notAcknowledged(code, why));
  }

  private newEntity(entityId: string): Entity {
    return new Entity(entityId, undefined, this.reportError, (this.entityOptions ??= this.makeEntityOptions()));
  }

  /** What every entity of this shard is made with: one object and one set of closures per shard, not per entity. */
  private makeEntityOptions(): EntityOptions {
    const { scheduler, onLatePipe, check, onInvalid } = this.options;
    return {
      ...(scheduler === undefined ? {} : { scheduler }),
      ...(check === undefined ? {} : { check }),
      ...(onInvalid === undefined ? {} : { onInvalid }),
      onLatePipe: (id) => {
        this.logger.debug({ entityId: id, shardId: this.shardId }, 'piped outcome dropped: its entity had stopped');
        onLatePipe?.();
      },
    };
  }

  /** Gives `entity` its instance from the behavior; false (the asker answered, timers ended) when that throws. */
  private instantiate(
    entityId: string,
    entity: Entity,
    restored: { readonly value: unknown } | undefined,
    reply: ReplyFn | undefined,
    gate?: MessageGate,
  ): boolean {
    try {
      const instance = this.behavior(this.contextOf(entityId, entity, restored));
      if (typeof instance !== 'object' || instance === null || typeof instance.receive !== 'function') {
        throw new TypeError('behavior must return an object with a receive(message) function');
      }
      this.entities.set(entityId, entity);
      entity.attach(instance, gate);
      return true;
    } catch (error) {
      // Timers or pipes the failed behavior started end with it.
      entity.end();
      this.logger.error({ entityId, shardId: this.shardId, err: describeError(error) }, 'entity could not be created');
      reply?.({ ok: false, error: `entity ${entityId} could not be created: ${describeError(error)}` });
      return false;
    }
  }

  private contextOf(
    entityId: string,
    entity: Entity,
    restored: { readonly value: unknown } | undefined,
  ): EntityContext {
    // Only this incarnation: a stale context kept past passivation cannot stop the next one.
    const passivate = (): void => {
      if (this.entities.get(entityId) === entity) this.passivate(entityId, 'self');
    };
    const base = (this.contextBase ??= {
      shardId: this.shardId,
      typeName: this.typeName,
      node: this.node,
      entityRef: this.options.entityRef,
    });
    return new ShardEntityContext(base, entityId, entity, passivate, restored);
  }

  private async stopAll(graceMs: number, snapshot: boolean): Promise<void> {
    let timer: Cancellable | undefined;
    const deadline = new Promise<'timeout'>((resolve) => {
      timer = (this.options.scheduler ?? systemScheduler).setTimeout(() => resolve('timeout'), graceMs);
    });
    // Passivations under way finish first (within the same grace); the messages waiting for them start their
    // entities, which then stop with the others (after those messages), so a hand-off loses none of them.
    if (this.passivating.size > 0) {
      await Promise.race([Promise.all([...this.passivating.values()].map((entry) => entry.done)), deadline]);
    }
    const entities = [...this.entities.values()];
    for (const entity of entities) this.options.passivation?.remove(entity);
    // Pekko's hand-off stop message is queued after what is in the mailboxes: timers and pipes end now, the
    // messages already queued still run.
    for (const entity of entities) entity.end();
    // Only the busy ones are waited for: no promise per idle entity of a large shard.
    const drained = Promise.all(entities.filter((entity) => !entity.idle).map((entity) => entity.whenIdle()));
    const result = await Promise.race([drained, deadline]);
    timer?.cancel();
    if (result === 'timeout') {
      this.logger.warn({ shardId: this.shardId, graceMs }, 'shard stopped before every entity drained its mailbox');
    }
    // Nothing can wake a held state now: the shard takes no more messages.
    const held = this.held?.drain();
    // A durable shard ships no state: its entities' last commits are the state its next host reads.
    if (snapshot && this.durable === undefined) {
      const snapshots: TakenSnapshot[] = entities
        .filter((entity) => entity.snapshots)
        .map((entity) => ({ entityId: entity.entityId, ...entity.snapshot() }));
      this.taken = { snapshots, held };
    }
    await Promise.all(entities.map((entity) => entity.stop()).filter((stopping) => stopping !== undefined));
    this.entities.clear();
    // The shard is reported stopped only once its last commits settled: its next host reads them.
    await this.durable?.settled();
  }

  private readonly reportError = (entityId: string, phase: 'receive' | 'stop', error: unknown): void => {
    this.logger.warn({ entityId, shardId: this.shardId, phase, err: describeError(error) }, 'entity failed');
  };
}
