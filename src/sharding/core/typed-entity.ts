// Entity types with typed messages (issue 37): `defineEntityType` takes any Standard Schema for an entity's
// messages (zod, valibot, arktype, Effect Schema and hand-written ones implement its `~standard` interface; only
// the spec's types are a dependency), types `receive` by the schema's output and the references callers get from
// `entityRefFor(Type, id)` by its input, and gives the host the schema to check every message against before
// `receive` (region/message-check.ts). The plain `{ typeName, behavior }` form keeps working untyped.
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { ActorTsError } from '../../errors.js';
import type { AskOptions, EntityBehavior, EntityContext, EntityRef, SendOptions } from './entity-api.js';

/** What a typed entity is given: the entity context, with `restored` typed by the type's state. */
export interface TypedEntityContext<State> extends Omit<EntityContext, 'restored'> {
  /** The entity's previous state (see EntityContext.restored), as the state schema's output when the type has one. */
  readonly restored?: State;
}

/** A live typed entity: `receive` gets messages the schema accepted; its result answers an ask. */
export interface TypedEntityInstance<Message, Reply, State> {
  receive(message: Message): Reply | Promise<Reply>;
  stop?(): void | Promise<void>;
  snapshot?(): State;
}

/** A reference whose `tell`, `ask` and `send` take only the type's messages, and whose `ask` answers its replies. */
export interface TypedEntityRef<Message, Reply> {
  readonly typeName: string;
  readonly entityId: string;
  readonly shardId: number;
  tell(message: Message): void;
  ask(message: Message, options?: AskOptions): Promise<Reply>;
  send(message: Message, options?: SendOptions): Promise<void>;
}

/** An entity type made by `defineEntityType`: its options as `init` and `startNode` take them, and its types. */
export interface TypedEntityType<Message, Reply> {
  readonly typeName: string;
  readonly behavior: EntityBehavior;
  /** The schema every message is checked against on its host before `receive`. */
  readonly message: StandardSchemaV1;
  /** Type-level only: the message a caller sends (the schema's input) and what an ask answers. */
  readonly '~types'?: { readonly message: Message; readonly reply: Reply };
}

/** `defineEntityType`'s argument: a type's options with a message schema and a behavior typed by it. */
export type EntityTypeDefinition<Schema extends StandardSchemaV1, Reply, State> = {
  readonly typeName: string;
  readonly message: Schema;
  readonly behavior: (
    ctx: TypedEntityContext<State>,
  ) => TypedEntityInstance<StandardSchemaV1.InferOutput<Schema>, Reply, State>;
  /** Checks `ctx.restored` (a snapshot of an earlier version, a row in the store) before the behavior sees it. */
  readonly state?: StandardSchemaV1<unknown, State>;
};

/**
 * An entity type with typed messages. Pass it to `startNode({ entityTypes })` or `ClusterSharding.init` like the
 * plain form (every other option, `durable`, `passivation`, `numberOfShards`..., is kept as given), and to
 * `entityRefFor(Type, id)` for a typed reference. `invalid_argument` when `message` (or `state`) is not a
 * Standard Schema (version 1, with a `validate` function).
 */
export function defineEntityType<Schema extends StandardSchemaV1, Reply, State = unknown, Options extends object = {}>(
  definition: EntityTypeDefinition<Schema, Reply, State> & Options,
): TypedEntityType<StandardSchemaV1.InferInput<Schema>, Awaited<Reply>> & Omit<Options, 'behavior' | 'state'> {
  requireStandardSchema(definition.message, 'message');
  if (definition.state !== undefined) requireStandardSchema(definition.state, 'state');
  const { behavior, state, ...options } = definition;
  if (typeof behavior !== 'function') throw invalid('behavior must be a function (ctx) => { receive(message) }');
  return { ...options, behavior: untyped(behavior, state) } as unknown as TypedEntityType<
    StandardSchemaV1.InferInput<Schema>,
    Awaited<Reply>
  > &
    Omit<Options, 'behavior' | 'state'>;
}

/** Throws `invalid_argument` unless `value` is a Standard Schema the host can call. */
export function requireStandardSchema(value: unknown, field: string): asserts value is StandardSchemaV1 {
  const props = (value as { '~standard'?: Partial<StandardSchemaV1.Props> } | null)?.['~standard'];
  if (typeof props !== 'object' || props === null || props.version !== 1 || typeof props.validate !== 'function') {
    throw invalid(`${field} must be a Standard Schema (an object with '~standard': { version: 1, validate })`);
  }
}

/**
 * The behavior the runtime runs: the typed one, its context's `restored` checked by the state schema first (a
 * restored value the schema refuses is no state: the entity starts fresh, as after a snapshot that failed).
 */
function untyped<Message, Reply, State>(
  behavior: (ctx: TypedEntityContext<State>) => TypedEntityInstance<Message, Reply, State>,
  state: StandardSchemaV1<unknown, State> | undefined,
): EntityBehavior {
  if (state === undefined) return behavior as unknown as EntityBehavior;
  return (ctx) => {
    const checked = ctx.restored === undefined ? undefined : state['~standard'].validate(ctx.restored);
    if (checked instanceof Promise) throw invalid('a state schema must validate synchronously');
    const restored = checked === undefined || checked.issues !== undefined ? undefined : checked.value;
    // The context itself underneath (its `self` is made when first read), `restored` replaced by the checked value.
    const typed = Object.create(ctx, { restored: { value: restored, enumerable: true } }) as TypedEntityContext<State>;
    return behavior(typed) as unknown as ReturnType<EntityBehavior>;
  };
}

/** What `entityRefFor` takes: a type's name, or a type (one made by `defineEntityType` gives a typed reference). */
export type TypeOrName = string | { readonly typeName: string };

/** The reference `entityRefFor(type, id)` gives: typed for a `defineEntityType` type, untyped for a name. */
export type RefOf<T> =
  T extends TypedEntityType<infer Message, infer Reply> ? TypedEntityRef<Message, Reply> : EntityRef;

function invalid(message: string): ActorTsError {
  return new ActorTsError('invalid_argument', message);
}
