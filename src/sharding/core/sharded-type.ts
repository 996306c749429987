// One entity type as `ClusterSharding.init` takes it: the options a user passes, checked and completed
// with defaults into the settings its region and coordinator run with.
import type { Membership } from '../../cluster/member.js';
import { ActorTsError } from '../../errors.js';
import type { EntityBehavior } from './entity-api.js';
import { MAX_SHARD_ID, TYPE_NAME_PATTERN } from '../protocol/messages.js';
import { LeastShardAllocationStrategy, type AllocationStrategy } from '../strategies/index.js';
import { isAllocationStrategy } from '../strategies/allocation-strategy.js';
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { checkPassivation, type PassivationSettings } from './passivation.js';
import { requireStandardSchema } from './typed-entity.js';
import { DEFAULT_SHARD_ID_FUNCTION, requireShardIdFunction, type ShardIdFunction } from './shard-id.js';

export const MAX_NUMBER_OF_SHARDS = MAX_SHARD_ID + 1;

/** One entity type, as `ClusterSharding.init` takes it; every field but `typeName` and `behavior` has a default. */
export interface ShardedTypeOptions {
  /** Unique per cluster; letters, digits, `_`, `.`, `-`, at most 128 characters (it appears in management URLs). */
  readonly typeName: string;
  readonly behavior: EntityBehavior;
  /** Never change it for a running type: every entity would map to another shard. Default 1000, at most 1_000_000. */
  readonly numberOfShards?: number;
  /** Default: `new LeastShardAllocationStrategy({ cluster: membership })`. */
  readonly allocationStrategy?: AllocationStrategy;
  /** Entities run only on members with this role; elsewhere the region is a proxy. Default: every member. */
  readonly role?: string;
  /**
   * How an entity id maps to its shard (see `shardIdFor`): 'fnv1a-utf8' (default) or 'actor-ts', which gives
   * the shard actor-ts's sharding computes for the same id, so both answer "which shard is alice" alike.
   * Like `numberOfShards`, every node must use the same value for a type, and changing it for a running
   * type moves about half of its entities to other shards; that is why the default did not change.
   */
  readonly shardIdFunction?: ShardIdFunction;
  /**
   * When this node stops idle or least recently used entities (see PassivationSettings). Default: never for an
   * in-memory type; `{ idleMs: DURABLE_IDLE_MS }` (two minutes, Akka's default) for a durable one, whose state
   * comes back from the store.
   */
  readonly passivation?: PassivationSettings;
  /**
   * The entities' state is committed to the node's entity store after every message, before its answer leaves,
   * and read back on their next start (after a crash, a move or passivation). Needs the store; default false.
   */
  readonly durable?: boolean;
  /**
   * A Standard Schema every message from outside the entity is checked against on its host before `receive`
   * (which gets the schema's output); refused, an ask or send fails with `invalid_message`, a tell is dropped.
   * `defineEntityType` sets it and types the references by it. Default none: messages are not checked.
   */
  readonly message?: StandardSchemaV1;
}

/** A durable type's idle passivation when it names none: Akka's default of two minutes. */
export const DURABLE_IDLE_MS = 120_000;

export interface ShardedTypeConfig {
  readonly typeName: string;
  readonly numberOfShards: number;
  readonly behavior: EntityBehavior;
  readonly role: string | undefined;
  readonly strategy: AllocationStrategy;
  readonly shardIdFunction: ShardIdFunction;
  readonly passivation: PassivationSettings;
  readonly durable: boolean;
  readonly message: StandardSchemaV1 | undefined;
}

/** Checks `options` (`invalid_argument` naming the bad field) and fills in the defaults. */
export function resolveShardedType(options: ShardedTypeOptions, membership: Membership): ShardedTypeConfig {
  checkShardedType(options);
  const { typeName, behavior, allocationStrategy, role, durable = false, message } = options;
  const passivation = options.passivation ?? (durable ? { idleMs: DURABLE_IDLE_MS } : {});
  const { numberOfShards, shardIdFunction } = withDefaults(options);
  const strategy = allocationStrategy ?? new LeastShardAllocationStrategy({ cluster: membership });
  return {
    typeName,
    numberOfShards,
    behavior,
    role,
    strategy,
    shardIdFunction,
    passivation: { ...passivation },
    durable,
    message,
  };
}

/** Throws `invalid_argument` naming the first bad field of `options`; what `init` checks before anything starts. */
export function checkShardedType(options: ShardedTypeOptions): void {
  if (typeof options !== 'object' || options === null) throw invalid('init options must be an object');
  const { typeName, behavior, allocationStrategy, role } = options;
  const { numberOfShards, shardIdFunction } = withDefaults(options);
  if (typeof typeName !== 'string' || !TYPE_NAME_PATTERN.test(typeName)) {
    throw invalid(`typeName must match ${String(TYPE_NAME_PATTERN)}, got ${JSON.stringify(typeName)}`);
  }
  if (typeof behavior !== 'function') throw invalid('behavior must be a function (ctx) => { receive(message) }');
  if (!Number.isInteger(numberOfShards) || numberOfShards < 1 || numberOfShards > MAX_NUMBER_OF_SHARDS) {
    throw invalid(`numberOfShards must be an integer in 1..${MAX_NUMBER_OF_SHARDS}, got ${String(numberOfShards)}`);
  }
  if (role !== undefined && (typeof role !== 'string' || role.length === 0))
    throw invalid('role must be a non-empty string');
  if (allocationStrategy !== undefined && !isAllocationStrategy(allocationStrategy)) {
    throw invalid('allocationStrategy must implement allocate() and rebalance()');
  }
  requireShardIdFunction(shardIdFunction);
  checkPassivation(options.passivation);
  if (options.durable !== undefined && typeof options.durable !== 'boolean') throw invalid('durable must be a boolean');
  if (options.message !== undefined) requireStandardSchema(options.message, 'message');
}

/** The two settings with defaults that need nothing else (the strategy's default needs the membership). */
function withDefaults(options: ShardedTypeOptions): Pick<ShardedTypeConfig, 'numberOfShards' | 'shardIdFunction'> {
  const { numberOfShards = 1000, shardIdFunction = DEFAULT_SHARD_ID_FUNCTION } = options;
  return { numberOfShards, shardIdFunction };
}

function invalid(message: string): ActorTsError {
  return new ActorTsError('invalid_argument', message);
}
