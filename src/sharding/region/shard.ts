// One shard hosted on this node: creates its entities on their first message (one whose state came with the
// shard's hand-off gets it then) and stops them all when the shard is handed off (after the messages already
// in their mailboxes, as Pekko's hand-off stop message does), with the states of those never woken here.
import type { NodeAddress } from '../../cluster/address.js';
import { systemScheduler, type Cancellable, type Scheduler } from '../../cluster/scheduler.js';
import type { Logger } from '../../logging.js';
import {
  Entity,
  describeError,
  type EntityBehavior,
  type EntityContext,
  type EntityRef,
  type ReplyFn,
} from './entity.js';
import type { HeldStates } from './held-state.js';
import type { TakenSnapshot } from './shard-state.js';

/** What a shard's entities are given besides their behavior: their own references, timers, and where drops go. */
export interface ShardEntityOptions {
  /** The entity's own EntityRef (its `ctx.self`). */
  readonly entityRef: (entityId: string) => EntityRef;
  /** Runs entity timers and the shard's stop deadline; default systemScheduler. */
  readonly scheduler?: Scheduler;
  /** A piped outcome reached an entity that had stopped, and was dropped. */
  readonly onLatePipe?: () => void;
}

export class Shard {
  private readonly entities = new Map<string, Entity>();
  private stopping: Promise<void> | undefined;
  private taken: TakenSnapshot[] = [];

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
  ) {}

  /** The snapshots taken by a `stop` that asked for them (after each entity's last message), once it ended. */
  get snapshots(): ReadonlyArray<TakenSnapshot> {
    return this.taken;
  }

  /** Entities created here (an entity whose state is held, not woken yet, is not counted). */
  get entityCount(): number {
    return this.entities.size;
  }

  get isStopping(): boolean {
    return this.stopping !== undefined;
  }

  /** Queues a message for an entity, creating the entity first if needed. Callers never deliver to a stopping shard. */
  deliver(entityId: string, message: unknown, reply: ReplyFn | undefined): void {
    const entity = this.entities.get(entityId) ?? this.create(entityId, this.held?.wake(entityId), reply);
    entity?.enqueue(message, reply);
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
    const { scheduler, onLatePipe } = this.options;
    const entity = new Entity(entityId, undefined, (id, phase, error) => this.reportError(id, phase, error), {
      ...(scheduler === undefined ? {} : { scheduler }),
      onLatePipe: (id) => {
        this.logger.debug({ entityId: id, shardId: this.shardId }, 'piped outcome dropped: its entity had stopped');
        onLatePipe?.();
      },
    });
    try {
      const { entityRef } = this.options;
      let self: EntityRef | undefined;
      // `self` is made when first read: an entity that never uses it need not be routed to.
      const context: EntityContext = {
        entityId,
        shardId: this.shardId,
        typeName: this.typeName,
        get self(): EntityRef {
          return (self ??= entityRef(entityId));
        },
        node: this.node,
        timers: entity.timers,
        pipeToSelf: (work, toMessage) => entity.pipeToSelf(work, toMessage),
        ...(restored?.value === undefined ? {} : { restored: restored.value }),
      };
      const instance = this.behavior(context);
      if (typeof instance !== 'object' || instance === null || typeof instance.receive !== 'function') {
        throw new TypeError('behavior must return an object with a receive(message) function');
      }
      entity.attach(instance);
      this.entities.set(entityId, entity);
      return entity;
    } catch (error) {
      // Timers or pipes the failed behavior started end with it.
      entity.end();
      this.logger.error({ entityId, shardId: this.shardId, err: describeError(error) }, 'entity could not be created');
      reply?.({ ok: false, error: `entity ${entityId} could not be created: ${describeError(error)}` });
      return undefined;
    }
  }

  private async stopAll(graceMs: number, snapshot: boolean): Promise<void> {
    const entities = [...this.entities.values()];
    // Pekko's hand-off stop message is queued after what is in the mailboxes: timers and pipes end now, the
    // messages already queued still run.
    for (const entity of entities) entity.end();
    let timer: Cancellable | undefined;
    // Only the busy ones are waited for: no promise per idle entity of a large shard.
    const drained = Promise.all(entities.filter((entity) => !entity.idle).map((entity) => entity.whenIdle()));
    const deadline = new Promise<'timeout'>((resolve) => {
      timer = (this.options.scheduler ?? systemScheduler).setTimeout(() => resolve('timeout'), graceMs);
    });
    const result = await Promise.race([drained, deadline]);
    timer?.cancel();
    if (result === 'timeout') {
      this.logger.warn({ shardId: this.shardId, graceMs }, 'shard stopped before every entity drained its mailbox');
    }
    // Nothing can wake a held state now: the shard takes no more messages.
    const held = this.held?.drain() ?? [];
    if (snapshot) {
      const taken: TakenSnapshot[] = entities
        .filter((entity) => entity.snapshots)
        .map((entity) => ({ entityId: entity.entityId, ...entity.snapshot() }));
      for (const [entityId, state] of held) taken.push({ entityId, ok: true, held: state });
      this.taken = taken;
    }
    await Promise.all(entities.map((entity) => entity.stop()).filter((stopping) => stopping !== undefined));
    this.entities.clear();
  }

  private reportError(entityId: string, phase: 'receive' | 'stop', error: unknown): void {
    this.logger.warn({ entityId, shardId: this.shardId, phase, err: describeError(error) }, 'entity failed');
  }
}
