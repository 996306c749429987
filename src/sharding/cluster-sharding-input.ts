// What ClusterSharding is built from, and the checks its public methods run on what a caller hands them (the
// options, an entity id, a list of shard ids): each input is judged once here, at the runtime's boundary, so
// the runtime behind it works on values already known to be good.
import type { ShardIdFunction } from './core/shard-id.js';
import type { Membership } from '../cluster/member.js';
import type { Scheduler } from '../cluster/scheduler.js';
import type { Transport } from '../cluster/transport/transport.js';
import { ActorTsError } from '../errors.js';
import type { Logger } from '../logging.js';
import type { ReplicatedPlacements } from '../placement-replication/placement-replication.js';
import type { ShardingConfig } from './core/config.js';
import type { EntityStoreContext } from './core/sharding-context.js';
import type { CoordinatorEvents } from './coordinator/shard-coordinator.js';
import { MAX_ENTITY_ID_LENGTH } from './protocol/messages.js';
import { MAX_NUMBER_OF_SHARDS, type ShardedTypeConfig } from './core/sharded-type.js';

/** What `ClusterSharding.entityTypes()` tells of each initialised type. */
export interface EntityTypeFacts {
  readonly numberOfShards: number;
  readonly role: string | undefined;
  /** How its entity ids map to shards: `shard-of` and operators compute with it. */
  readonly shardIdFunction: ShardIdFunction;
  /** Whether its entities commit to the node's entity store. */
  readonly durable: boolean;
  /** Its entities active on this node now (created, not passivated or stopped). */
  readonly activeEntities: number;
}

/** The facts of an initialised type, as `ClusterSharding.entityTypes()` lists them. */
export function typeFacts(type: {
  readonly settings: ShardedTypeConfig;
  readonly region: { localEntityCount(): number };
}): EntityTypeFacts {
  const { numberOfShards, role, shardIdFunction, durable } = type.settings;
  return { numberOfShards, role, shardIdFunction, durable, activeEntities: type.region.localEntityCount() };
}

/** What ClusterSharding is built from: transport, membership, replicated placements, optional settings. */
export interface ClusterShardingOptions {
  readonly transport: Transport;
  readonly membership: Membership;
  /**
   * This node's replica of the explicit-placement store with its replication (a `PlacementReplication`
   * over the same transport and membership). It belongs to the caller, who closes it after `shutdown()`.
   */
  readonly placements: ReplicatedPlacements;
  /** Overrides of `DEFAULT_SHARDING_CONFIG`. */
  readonly config?: Partial<ShardingConfig>;
  /** Defaults to a silent logger. */
  readonly logger?: Logger;
  /** What this node's coordinators report as it happens (metrics). */
  readonly events?: CoordinatorEvents;
  /**
   * Clock and timers of the coordinators, regions, asks, coordinator requests and entity timers (`ctx.timers`);
   * default systemScheduler (the process timers, unref'd). Tests inject a ManualScheduler, or drive the default
   * with fake timers.
   */
  readonly scheduler?: Scheduler;
  /** The node's entity store (its group commit), needed by types initialised with `durable: true`. */
  readonly entityStore?: EntityStoreContext;
}

/** Throws `invalid_argument` unless the options hold a transport, a membership and placements of one node. */
export function checkShardingOptions(options: ClusterShardingOptions): void {
  const { transport, membership, placements } = options;
  if (typeof transport?.send !== 'function' || typeof transport.onMessage !== 'function') {
    throw invalid('ClusterSharding needs a transport');
  }
  if (typeof membership?.members !== 'function' || typeof membership.onChange !== 'function') {
    throw invalid('ClusterSharding needs a membership');
  }
  if (typeof placements?.store?.snapshot !== 'function' || typeof placements.whenReady !== 'function') {
    throw invalid('ClusterSharding needs its placements (a PlacementReplication)');
  }
  if (!transport.self.equals(membership.self)) {
    throw invalid(
      `transport (${transport.self.toString()}) and membership (${membership.self.toString()}) belong to different nodes`,
    );
  }
}

/** Throws `invalid_argument` unless `entityId` is a string the wire carries (1..MAX_ENTITY_ID_LENGTH). */
export function checkEntityId(entityId: string): void {
  if (typeof entityId !== 'string' || entityId.length === 0 || entityId.length > MAX_ENTITY_ID_LENGTH) {
    throw invalid(
      `entity id must be a string of 1..${MAX_ENTITY_ID_LENGTH} characters, got ${JSON.stringify(entityId)}`,
    );
  }
}

/** Throws `invalid_argument` for anything but an array of at most MAX_NUMBER_OF_SHARDS integers. */
export function checkShardIds(shardIds: ReadonlyArray<number>): void {
  if (
    !Array.isArray(shardIds) ||
    shardIds.length > MAX_NUMBER_OF_SHARDS ||
    !shardIds.every((id) => Number.isSafeInteger(id))
  ) {
    throw invalid(`shardIds must be an array of at most ${MAX_NUMBER_OF_SHARDS} integers`);
  }
}

function invalid(message: string): ActorTsError {
  return new ActorTsError('invalid_argument', message);
}
