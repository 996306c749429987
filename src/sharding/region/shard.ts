// One shard hosted on this node: creates its entities on their first message and stops them all when the
// shard is handed off (after the messages already in their mailboxes, as Pekko's hand-off stop message does).
import type { NodeAddress } from '../../cluster/address.js';
import type { Logger } from '../../logging.js';
import { Entity, describeError, type EntityBehavior, type ReplyFn } from './entity.js';
import type { TakenSnapshot } from './shard-state.js';

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
    private readonly self: NodeAddress,
    private readonly logger: Logger,
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

  private create(entityId: string, restored: unknown, reply: ReplyFn | undefined): Entity | undefined {
    let entity: Entity;
    try {
      const base = { entityId, shardId: this.shardId, typeName: this.typeName, self: this.self };
      const instance = this.behavior(restored === undefined ? base : { ...base, restored });
      if (typeof instance !== 'object' || instance === null || typeof instance.receive !== 'function') {
        throw new TypeError('behavior must return an object with a receive(message) function');
      }
      entity = new Entity(entityId, instance, (id, phase, error) => this.reportError(id, phase, error));
    } catch (error) {
      this.logger.error({ entityId, shardId: this.shardId, err: describeError(error) }, 'entity could not be created');
      reply?.({ ok: false, error: `entity ${entityId} could not be created: ${describeError(error)}` });
      return undefined;
    }
    this.entities.set(entityId, entity);
    return entity;
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

  private async stopAll(graceMs: number, snapshot: boolean): Promise<void> {
    const entities = [...this.entities.values()];
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
    if (snapshot) {
      this.taken = entities.filter((entity) => entity.snapshots).map((entity) => ({ entityId: entity.entityId, ...entity.snapshot() }));
    }
    await Promise.all(entities.map((entity) => entity.stop()));
    this.entities.clear();
  }

  private reportError(entityId: string, phase: 'receive' | 'stop', error: unknown): void {
    this.logger.warn({ entityId, shardId: this.shardId, phase, err: describeError(error) }, 'entity failed');
  }
}
