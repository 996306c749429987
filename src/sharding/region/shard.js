import { Entity, describeError } from './entity.js';
export class Shard {
    typeName;
    shardId;
    behavior;
    node;
    logger;
    options;
    entities = new Map();
    stopping;
    constructor(typeName, shardId, behavior, node, logger, options) {
        this.typeName = typeName;
        this.shardId = shardId;
        this.behavior = behavior;
        this.node = node;
        this.logger = logger;
        this.options = options;
    }
    get entityCount() {
        return this.entities.size;
    }
    get isStopping() {
        return this.stopping !== undefined;
    }
    /** Queues a message for an entity, creating the entity first if needed. Callers never deliver to a stopping shard. */
    deliver(entityId, message, reply) {
        let entity = this.entities.get(entityId);
        if (entity === undefined) {
            entity = this.create(entityId, reply);
            if (entity === undefined)
                return;
            this.entities.set(entityId, entity);
        }
        entity.enqueue(message, reply);
    }
    /**
     * Stops every entity once its mailbox is empty. Idempotent. `graceMs` bounds the wait for mailboxes that
     * never drain (an entity stuck on a promise): after it, entities are stopped regardless.
     */
    stop(graceMs) {
        this.stopping ??= this.stopAll(graceMs);
        return this.stopping;
    }
    create(entityId, reply) {
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
        }
        catch (error) {
            // Timers or pipes the failed behavior started end with it.
            entity.end();
            this.logger.error({ entityId, shardId: this.shardId, err: describeError(error) }, 'entity could not be created');
            reply?.({ ok: false, error: `entity ${entityId} could not be created: ${describeError(error)}` });
            return undefined;
        }
    }
    async stopAll(graceMs) {
        const entities = [...this.entities.values()];
        // Pekko's hand-off stop message is queued after what is in the mailboxes: timers and pipes end now, the
        // messages already queued still run.
        for (const entity of entities)
            entity.end();
        let timer;
        const drained = Promise.all(entities.map((entity) => entity.whenIdle()));
        const deadline = new Promise((resolve) => {
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
    reportError(entityId, phase, error) {
        this.logger.warn({ entityId, shardId: this.shardId, phase, err: describeError(error) }, 'entity failed');
    }
}
//# sourceMappingURL=shard.js.map