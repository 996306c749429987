// What an application brings to `startNode`: its entity types (each under external allocation over its own
// fallback strategy) and its HTTP routes. Checked whole before the node binds any port, so bad input never
// leaves a half-started node behind.
import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { FastifyInstance } from 'fastify';
import type { Cluster } from '../cluster/membership/cluster.js';
import { ActorTsError } from '../errors.js';
import type { Logger } from '../logging.js';
import type { ClusterSharding } from '../sharding/cluster-sharding.js';
import { ExternalAllocationController } from '../sharding/api/external-allocation-controller.js';
import { checkShardedType, type ShardedTypeOptions } from '../sharding/core/sharded-type.js';
import type { EntityBehavior } from '../sharding/core/entity-api.js';
import type { PassivationSettings } from '../sharding/core/passivation.js';
import type { ShardIdFunction } from '../sharding/core/shard-id.js';
import {
  FALLBACK_STRATEGIES,
  externalAllocationStrategy,
  fallbackStrategy,
  isFallbackStrategyName,
  type AllocationStrategy,
  type FallbackStrategyName,
} from '../sharding/strategies/index.js';
import type { RunningNode } from './running-node.js';

/** One application entity type, as `startNode({ entityTypes })` takes it. */
export interface NodeEntityType {
  /** Unique per cluster; letters, digits, `_`, `.`, `-`, at most 128 characters. */
  readonly typeName: string;
  readonly behavior: EntityBehavior;
  /** Never change it for a running type. Default 1000. */
  readonly numberOfShards?: number;
  /** Entities run only on members with this role; elsewhere the region is a proxy. Default: every member. */
  readonly role?: string;
  /** How entity ids map to shards ('fnv1a-utf8' or 'actor-ts'; see `shardIdFor`). Default 'fnv1a-utf8'. */
  readonly shardIdFunction?: ShardIdFunction;
  /**
   * Where shards without a pin go: a strategy, or the name of a built-in one (`least-shard`, `ring`, `hash`,
   * each over the cluster); default the node's `fallback` setting (least-shard unless configured).
   */
  readonly fallback?: AllocationStrategy | FallbackStrategyName;
  /** When this node stops idle or least recently used entities of the type. Default: never (see README). */
  readonly passivation?: PassivationSettings;
  /**
   * Commit each entity's `snapshot()` to the node's entity store after every message, before its answer leaves,
   * and start it from there after a crash, a move or passivation. Needs `entityStore`; default false.
   */
  readonly durable?: boolean;
  /** The Standard Schema every message is checked against on its host (set by `defineEntityType`). */
  readonly message?: StandardSchemaV1;
}

/** Registers the application's routes on the node's HTTP server, before it listens. */
export type NodeHttpRoutes = (app: FastifyInstance, node: RunningNode) => void | Promise<void>;

/** What an application brings to `startNode` besides settings: its entity types and its HTTP routes. */
export interface NodeApplication {
  /** The application's entity types; given, the demo Counter and its routes are not registered. */
  readonly entityTypes?: ReadonlyArray<NodeEntityType>;
  /**
   * The application's own routes, under the node's limits, auth (writes need the bearer token, reads too with
   * `authReads`) and `{ error, message }` errors. Paths of the management API, console and metrics are refused.
   */
  readonly httpRoutes?: NodeHttpRoutes;
}

/** Checks an application (`invalid_argument` naming the problem); nothing is started. */
export function checkApplication(app: NodeApplication, hasEntityStore = true): void {
  const { entityTypes, httpRoutes } = app;
  if (httpRoutes !== undefined && typeof httpRoutes !== 'function')
    throw invalid('httpRoutes must be a function (app, node) => void');
  if (entityTypes === undefined) return;
  if (!Array.isArray(entityTypes))
    throw invalid(
      'entityTypes must be an array of { typeName, behavior, numberOfShards?, role?, fallback?, passivation? }',
    );
  const seen = new Set<string>();
  entityTypes.forEach((type: unknown, index) => {
    if (typeof type !== 'object' || type === null) throw invalid(`entityTypes[${index}] must be an object`);
    const { typeName, behavior, numberOfShards, role, fallback, shardIdFunction, passivation, durable, message } =
      type as Partial<NodeEntityType>;
    const name = typeof typeName === 'string' ? `entity type ${JSON.stringify(typeName)}` : `entityTypes[${index}]`;
    if (fallback !== undefined && !isStrategy(fallback) && !isFallbackStrategyName(fallback)) {
      throw invalid(
        `${name}: fallback must be an AllocationStrategy (allocate() and rebalance()) or one of ${FALLBACK_STRATEGIES.join(', ')}`,
      );
    }
    try {
      // The runtime's own checks (name, behavior, shard count, role), made now rather than at init.
      checkShardedType({
        typeName: typeName as string,
        behavior: behavior as EntityBehavior,
        numberOfShards,
        role,
        shardIdFunction,
        passivation,
        durable,
        message,
      } as ShardedTypeOptions);
    } catch (error) {
      throw invalid(`${name}: ${(error as Error).message}`);
    }
    if (durable === true && !hasEntityStore)
      throw invalid(`${name} is durable, but the node has no entityStore (--entity-store lmdb:DIR or postgres://...)`);
    if (seen.has(typeName as string))
      throw invalid(`entity type ${JSON.stringify(typeName)} is given twice in entityTypes`);
    seen.add(typeName as string);
  });
}

/**
 * Initialises each type under `externalAllocationStrategy` over its fallback, its pins read from the runtime's
 * own view of the placement store; returns each type's controller.
 */
export function initEntityTypes(
  sharding: ClusterSharding,
  cluster: Cluster,
  types: ReadonlyArray<NodeEntityType>,
  logger: Logger,
  defaultFallback: (numberOfShards: number | undefined) => AllocationStrategy,
): Map<string, ExternalAllocationController> {
  const controllers = new Map<string, ExternalAllocationController>();
  for (const type of types) {
    const { typeName, behavior, numberOfShards, role, fallback, shardIdFunction, passivation, durable, message } = type;
    sharding.init({
      typeName,
      behavior,
      ...(durable === undefined ? {} : { durable }),
      ...(message === undefined ? {} : { message }),
      ...(numberOfShards === undefined ? {} : { numberOfShards }),
      ...(role === undefined ? {} : { role }),
      ...(shardIdFunction === undefined ? {} : { shardIdFunction }),
      ...(passivation === undefined ? {} : { passivation }),
      allocationStrategy: externalAllocationStrategy(
        fallback === undefined
          ? defaultFallback(numberOfShards)
          : typeof fallback === 'string'
            ? fallbackStrategy(fallback, cluster, numberOfShards)
            : fallback,
        sharding.placementState(typeName),
        {
          cluster,
          onWarning: (message, details) => logger.warn({ ...details, typeName }, message),
        },
      ),
    });
    // Every placement written or removed is logged with its reason and author: the audit trail of pins.
    controllers.set(
      typeName,
      new ExternalAllocationController(sharding, typeName, {
        logger: logger.child({ component: 'placements' }),
        // A pin to a target no member matches is refused (unknown_target) unless the write allows it.
        members: () => cluster.members(),
        // A node whose clock is far off its peers' refuses pins in process as over HTTP (clock_skew).
        clockSkew: () => cluster.clock.skewReason(),
      }),
    );
  }
  return controllers;
}

/** The placement controller of a type running here; `unknown_type` for any other. */
export function controllerOf(
  controllers: ReadonlyMap<string, ExternalAllocationController>,
): (typeName: string) => ExternalAllocationController {
  return (typeName) => {
    const controller = controllers.get(typeName);
    if (controller === undefined)
      throw new ActorTsError('unknown_type', `entity type ${JSON.stringify(typeName)} does not run on this node`);
    return controller;
  };
}

function isStrategy(value: unknown): value is AllocationStrategy {
  const candidate = value as Partial<AllocationStrategy> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.allocate === 'function' &&
    typeof candidate.rebalance === 'function'
  );
}

function invalid(message: string): ActorTsError {
  return new ActorTsError('invalid_argument', message);
}
