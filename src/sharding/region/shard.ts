// One shard hosted on this node: creates its entities on their first message and stops them all when the
// shard is handed off (after the messages already in their mailboxes, as Pekko's hand-off stop message does).
import type { NodeAddress } from '../../cluster/address.js';
import type { Scheduler } from '../../cluster/scheduler.js';
import type { Logger } from '../../logging.js';
import { Entity, describeError, type EntityBehavior, type EntityRef, type ReplyFn } from './entity.js';

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

  constructor(
    readonly typeName: string,
    readonly shardId: number,
    private readonly behavior: EntityBehavior,
    private readonly node: NodeAddress,
    private readonly logger: Logger,
    private readonly options: ShardEntityOptions,
  ) {}

  get entityCount(): number {
    return this.entities.size;
  }

  get isStopping(): boolean {
    return this.stopping !== undefined;
  }

  /** Queues a message for an entity, creating the entity first if needed. Callers never deliver to a stopping shard. */
  deliver(entityId: string, message: unknown, reply: ReplyFn | undefined): void {
    let entity = this.entities.get(entityId);
    if (entity === undefined) {
      entity = this.create(entityId, reply);
      if (entity === undefined) return;
      this.entities.set(entityId, entity);
    }
    entity.enqueue(message, reply);
  }

  /**
   * Stops every entity once its mailbox is empty. Idempotent. `graceMs` bounds the wait for mailboxes that
   * never drain (an entity stuck on a promise): after it, entities are stopped regardless.
   */
  stop(graceMs: number): Promise<void> {
    this.stopping ??= this.stopAll(graceMs);
    return this.stopping;
  }

  private create(entityId: string, reply: ReplyFn | undefined): Entity | undefined {
    const { scheduler, onLatePipe } = this.options;
    const entity = new Entity(entityId, undefined, (id, phase, error) => this.reportError(id, phase, error), {
      ...(scheduler === undefined ? {} : { scheduler }),
      onLatePipe: (id) => {
        this.logger.debug({ entityId: id, shardId: this.shardId }, 'piped outcome dropped: its entity had stopped');
        onLatePipe?.();
      },
    });
    try {
      const instance = this.behavior({
        entityId,
        shardId: this.shardId,
        typeName: this.typeName,
        self: this.options.entityRef(entityId),
        node: this.node,
        timers: entity.timers,
        pipeToSelf: (work, toMessage) => entity.pipeToSelf(work, toMessage),
      });
      if (typeof instance !== 'object' || instance === null || typeof instance.receive !== 'function') {
        throw new TypeError('behavior must return an object with a receive(message) function');
      }
      entity.attach(instance);
      return entity;
    } catch (error) {
      // Timers or pipes the failed behavior started end with it.
      entity.end();
      this.logger.error({ entityId, shardId: this.shardId, err: describeError(error) }, 'entity could not be created');
      reply?.({ ok: false, error: `entity ${entityId} could not be created: ${describeError(error)}` });
      return undefined;
    }
  }

  private async stopAll(graceMs: number): Promise<void> {
    const entities = [...this.entities.values()];
    // Pekko's hand-off stop message is queued after what is in the mailboxes: timers and pipes end now, the
    // messages already queued still run.
    for (const entity of entities) entity.end();
    let timer: NodeJS.Timeout | undefined;
    const drained = Promise.all(entities.map((entity) => entity.whenIdle()));
    const deadline = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), graceMs);
    });
    const result = await Promise.race([drained, deadline]);
    clearTimeout(timer);
    if (result === 'timeout') {
      this.logger.warn({ shardId: this.shardId, graceMs }, 'shard stopped before every entity drained its mailbox');
    }
    await Promise.all(entities.map((entity) => entity.stop()));
    this.entities.clear();
  }

  private reportError(entityId: string, phase: 'receive' | 'stop', error: unknown): void {
    this.logger.warn({ entityId, shardId: this.shardId, phase, err: describeError(error) }, 'entity failed');
  }
}
