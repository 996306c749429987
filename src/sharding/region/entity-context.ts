// The context an entity's behavior is given (core/entity-api.ts's EntityContext), as the shards of this region
// make it: one small object per incarnation over what its shard shares, its timers made only when read.
import type { NodeAddress } from '../../cluster/address.js';
import type { EntityContext, EntityRef, EntityTimers } from '../core/entity-api.js';
import type { Entity } from './entity.js';

/** What every entity context of one shard shares. */
export interface ContextBase {
  readonly shardId: number;
  readonly typeName: string;
  readonly node: NodeAddress;
  readonly entityRef: (entityId: string) => EntityRef;
}

/**
 * An entity's context: a class, not an object literal with getters (those are made in dictionary mode, a
 * measurable share of creating an entity). `pipeToSelf` and `passivate` are own functions, so an entity may
 * take them out of the context (`const { passivate } = ctx`) and call them unbound.
 */
export class ShardEntityContext implements EntityContext {
  readonly shardId: number;
  readonly typeName: string;
  readonly node: NodeAddress;
  // Declared, not defined: a fresh start has no `restored` key at all, as the object literal it replaced had none.
  declare readonly restored?: unknown;
  readonly pipeToSelf: EntityContext['pipeToSelf'];
  // Truly private (#): a context logged or spread shows the entity's facts, not the runtime's objects.
  readonly #base: ContextBase;
  readonly #entity: Entity;
  #ref: EntityRef | undefined;

  constructor(
    base: ContextBase,
    readonly entityId: string,
    entity: Entity,
    readonly passivate: () => void,
    restored: { readonly value: unknown } | undefined,
  ) {
    this.#base = base;
    this.#entity = entity;
    this.shardId = base.shardId;
    this.typeName = base.typeName;
    this.node = base.node;
    this.pipeToSelf = (work, toMessage) => entity.pipeToSelf(work, toMessage);
    if (restored?.value !== undefined) this.restored = restored.value;
  }

  /** Made when first read: an entity that never uses it need not be routed to. */
  get self(): EntityRef {
    return (this.#ref ??= this.#base.entityRef(this.entityId));
  }

  get timers(): EntityTimers {
    return this.#entity.timers;
  }
}
