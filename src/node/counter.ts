// The demo entity type every CLI-started node runs: `Counter`, one integer per entity id (durable when the node
// has an entity store), and its edge routes on the node's HTTP server, so a newcomer can see which node serves
// which shard.
import type { FastifyInstance } from 'fastify';
import type { ClusterSharding } from '../sharding/cluster-sharding.js';
import { describeValue } from '../logging.js';
import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { EntityBehavior } from '../sharding/core/entity-api.js';
import { defineEntityType, type TypedEntityInstance } from '../sharding/core/typed-entity.js';
import type { NodeEntityType } from './application.js';
import type { NodeConfig } from './config.js';

export const COUNTER_TYPE = 'Counter';
export const COUNTER_SHARDS = 1000;

export type CounterCommand = { readonly op: 'increment'; readonly by?: number } | { readonly op: 'get' };

export interface CounterValue {
  readonly entityId: string;
  readonly shardId: number;
  readonly value: number;
  /** The node hosting the entity. */
  readonly node: string;
}

/**
 * The demo every node runs when the application brings no entity types: durable when the node has an entity
 * store (`local-cluster` gives each node the same lmdb directory), so a value survives a kill -9 of its host.
 */
export function demoTypes(config: Pick<NodeConfig, 'entityStore' | 'shardIdFunction'>): NodeEntityType[] {
  const durable = config.entityStore !== undefined;
  const { shardIdFunction } = config;
  return [{ ...Counter, shardIdFunction, durable }];
}

/** Whether a value is a CounterCommand (other fields, a test's tag say, may ride along). */
function isCounterCommand(value: unknown): value is CounterCommand {
  const v = value as { op?: unknown; by?: unknown } | null;
  if (typeof v !== 'object' || v === null) return false;
  return v.op === 'get' || (v.op === 'increment' && (v.by === undefined || Number.isSafeInteger(v.by)));
}

/**
 * The Counter's messages as a Standard Schema, written by hand: the package depends on the spec's types, not on a
 * validation library (an application would use zod, valibot, arktype or Effect Schema).
 */
export const counterCommandSchema: StandardSchemaV1<CounterCommand> = {
  '~standard': {
    version: 1,
    vendor: 'actor-ts',
    validate: (value) =>
      isCounterCommand(value)
        ? { value }
        : {
            issues: [
              {
                message: `expected { op: 'increment', by?: integer } or { op: 'get' }, got ${describeValue(value, 100)}`,
              },
            ],
          },
  },
};

export const counterBehavior: EntityBehavior = (ctx) => {
  // Durable (a node with an entity store), the value comes back from the store; otherwise a graceful move
  // hands it over (snapshot below) and a crash of the host restarts it at 0.
  let value = typeof ctx.restored === 'number' && Number.isSafeInteger(ctx.restored) ? ctx.restored : 0;
  const answer = (): CounterValue => ({
    entityId: ctx.entityId,
    shardId: ctx.shardId,
    value,
    node: ctx.node.toString(),
  });
  return {
    receive(message: unknown): CounterValue {
      const command = message as CounterCommand;
      if (command?.op === 'increment') {
        const by = command.by ?? 1;
        if (!Number.isSafeInteger(by)) throw new Error('increment "by" must be an integer');
        value += by;
        return answer();
      }
      if (command?.op === 'get') return answer();
      // Bounded: the message came from the network and may be any size or shape.
      throw new Error(`unknown counter command ${describeValue(message, 200)}`);
    },
    snapshot: (): number => value,
  };
};

/** The demo type with typed messages: `entityRefFor(Counter, id)` takes only CounterCommands and answers CounterValues. */
export const Counter = defineEntityType({
  typeName: COUNTER_TYPE,
  numberOfShards: COUNTER_SHARDS,
  message: counterCommandSchema,
  behavior: (ctx) => counterBehavior(ctx) as TypedEntityInstance<CounterCommand, CounterValue, number>,
});

const entityParams = {
  type: 'object',
  required: ['entityId'],
  properties: { entityId: { type: 'string', minLength: 1, maxLength: 256 } },
} as const;

const incrementQuery = {
  type: 'object',
  additionalProperties: false,
  // Query values are strings: the server's validator does not coerce them.
  properties: { reliable: { type: 'string', enum: ['true', 'false'] } },
} as const;

/** The answer of a reliable increment: processed by the entity (its value is not read back). */
export interface ReliableIncrement {
  readonly entityId: string;
  readonly shardId: number;
  readonly processed: true;
}

/**
 * `POST /counters/:entityId/increment` and `GET /counters/:entityId`, both answering a CounterValue (an ask:
 * at most once; a 504 `timeout` says `delivered: false` when the increment was never sent and is never
 * applied, `delivered: true` when the outcome is unknown). `POST ...increment?reliable=true` uses
 * `EntityRef.send` instead (retried until processed, at least once) and answers a ReliableIncrement.
 */
export function registerCounterRoutes(
  app: FastifyInstance,
  sharding: ClusterSharding,
  askTimeoutMs = 5000,
  // Longer than a silent host's failover with the default downing (about 19 s measured), shorter than the
  // HTTP request timeout (30 s), so a reliable increment outlives the failover it is meant to survive.
  sendTimeoutMs = 25_000,
): void {
  app.post<{ Params: { entityId: string }; Querystring: { reliable?: 'true' | 'false' } }>(
    '/counters/:entityId/increment',
    { schema: { params: entityParams, querystring: incrementQuery } },
    async (request): Promise<CounterValue | ReliableIncrement> => {
      const ref = sharding.entityRefFor(COUNTER_TYPE, request.params.entityId);
      if (request.query.reliable !== 'true')
        return ref.ask<CounterValue>({ op: 'increment' }, { timeoutMs: askTimeoutMs });
      await ref.send({ op: 'increment' }, { timeoutMs: sendTimeoutMs });
      return { entityId: ref.entityId, shardId: ref.shardId, processed: true };
    },
  );
  app.get<{ Params: { entityId: string } }>(
    '/counters/:entityId',
    { schema: { params: entityParams } },
    async (request) =>
      sharding
        .entityRefFor(COUNTER_TYPE, request.params.entityId)
        .ask<CounterValue>({ op: 'get' }, { timeoutMs: askTimeoutMs }),
  );
}
