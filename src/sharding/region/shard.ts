// One shard hosted on this node: creates its entities on their first message and stops them all when the
// shard is handed off (after the messages already in their mailboxes, as Pekko's hand-off stop message does).
import type { NodeAddress } from '../../cluster/address.js';
import type { Scheduler } from '../../cluster/scheduler.js';
import type { Logger } from '../../logging.js';
import {
  Entity,
  describeError,
  type EntityBehavior,
  type EntityContext,
  type EntityRef,
  type ReplyFn,
} from './entity.js';
import type { TakenSnapshot } from './shard-state.js';

/** What a shard's entities are given besides their behavior: their own references, timers, and where drops go. */
export interface ShardEntityOptions {
  /** The entity's own EntityRef (its `ctx.self`). */
  readonly entityRef: (entityId: string) => EntityRef;
  /** Runs entity timers; default the process timers. */
  readonly scheduler?: Scheduler;
  /** A piped outcome reached an entity that had stopped, and was dropped. */
  readonly onLatePipe?: () => void;
}

export class Shard {
  private readonly entities = new Map<string, Entity>();
  private stopping: Promise<void> | undefined;
  private taken: TakenSnapshot[] = [];

  /**
   * `restored`: entity states handed over from the shard's previous host. Every such entity is created now,
   * before any message reaches the shard, with its state as `ctx.restored`.
   */
  constructor(
    readonly typeName: string,
    readonly shardId: number,
    private readonly behavior: EntityBehavior,
    private readonly node: NodeAddress,
    private readonly logger: Logger,
    private readonly options: ShardEntityOptions,
    restored: ReadonlyMap<string, unknown> = new Map(),
  ) {
    for (const [entityId, state] of restored) this.create(entityId, state, undefined);
  }

  /** The snapshots taken by a `stop` that asked for them (after each entity's last message), once it ended. */
  get snapshots(): ReadonlyArray<TakenSnapshot> {
    return this.taken;
  }

  get entityCount(): number {
    return this.entities.size;
  }

  get isStopping(): boolean {
    return this.stopping !== undefined;
  }

  /** Queues a message for an entity, creating the entity first if needed. Callers never deliver to a stopping shard. */
  deliver(entityId: string, message: unknown, reply: ReplyFn | undefined): void {
    const entity = this.entities.get(entityId) ?? this.create(entityId, undefined, reply);
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

  private create(entityId: string, restored: unknown, reply: ReplyFn | undefined): Entity | undefined {
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
      // `self` is made when first read: a shard restoring a thousand entities need not route to each one.
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
        ...(restored === undefined ? {} : { restored }),
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
    let timer: NodeJS.Timeout | undefined;
    // Only the busy ones are waited for: no promise per idle entity of a large shard.
    const drained = Promise.all(entities.filter((entity) => !entity.idle).map((entity) => entity.whenIdle()));
    const deadline = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), graceMs);
    });
    const result = await Promise.race([drained, deadline]);
    clearTimeout(timer);
    if (result === 'timeout') {
      this.logger.warn({ shardId: this.shardId, graceMs }, 'shard stopped before every entity drained its mailbox');
    }
    if (snapshot) {
      this.taken = entities
        .filter((entity) => entity.snapshots)
        .map((entity) => ({ entityId: entity.entityId, ...entity.snapshot() }));
    }
    await Promise.all(entities.map((entity) => entity.stop()).filter((stopping) => stopping !== undefined));
    this.entities.clear();
  }

  private reportError(entityId: string, phase: 'receive' | 'stop', error: unknown): void {
    this.logger.warn({ entityId, shardId: this.shardId, phase, err: describeError(error) }, 'entity failed');
  }
}
