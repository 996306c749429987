// The sharding runtime of one node (Pekko's ClusterSharding extension): initialises entity types, hands out
// entity references, runs one region per type and, on the oldest Up member, that type's coordinator, and
// answers operator requests. The transport is used through ShardingLink, arriving messages are routed by
// message-router, entity references and their asks live in EntityRefs, coordinator requests wait in CoordinatorClient.
import type { PlacementStore } from '../../crdt/index.js';
import type { NodeAddress } from '../cluster/address.js';
import type { Membership } from '../cluster/member.js';
import { systemScheduler, type Scheduler } from '../cluster/scheduler.js';
import { ActorTsError } from '../errors.js';
import { silentLogger, type Logger } from '../logging.js';
import type { ReplicatedPlacements } from '../placement-replication/placement-replication.js';
import { resolveShardingConfig, type ShardingConfig } from './core/config.js';
import {
  CoordinatorClient,
  type AnswerTo,
  type CoordinatorRequestBody,
  type RebalanceNowResult,
  type ShardLocations,
} from './coordinator-client.js';
import type { RefOf, TypeOrName } from './core/typed-entity.js';
import { routeShardingMessage } from './message-router.js';
import { StoreCordons } from './placements/cordons.js';
import type { DrainMove, ShardingMessage } from './protocol/messages.js';
import { PlacementChanges } from './placements/placement-changes.js';
import { EntityRefs, refTarget } from './region/entity-refs.js';
import { listedPlacement } from './placements/placement-record.js';
import { explicitPlacementState } from './placements/explicit-placement-state.js';
import type { ExternalAllocationState } from './placements/placement-pin.js';
import { type CoordinatorEvents, ShardCoordinator, coordinatorNode } from './coordinator/shard-coordinator.js';
import { ShardRegion } from './region/shard-region.js';
import type { ShardingContext } from './core/sharding-context.js';
import { resolveShardedType, type ShardedTypeOptions, type ShardedTypeConfig } from './core/sharded-type.js';
import {
  checkEntityId,
  checkShardIds,
  checkShardingOptions,
  typeFacts,
  type ClusterShardingOptions,
  type EntityTypeFacts,
} from './cluster-sharding-input.js';
import { ShardingLink } from './protocol/sharding-link.js';
import type { ShardingStats, TypeStats } from './sharding-stats.js';

export type { RebalanceNowResult, ShardedTypeOptions, ShardLocations };
export type { ShardingStats, TypeStats } from './sharding-stats.js';
export type { ClusterShardingOptions, EntityTypeFacts } from './cluster-sharding-input.js';

interface ShardedType {
  readonly settings: ShardedTypeConfig;
  readonly region: ShardRegion;
  coordinator: ShardCoordinator | undefined;
  coordinatorAddress: string | undefined;
  /** False while this node sees the coordinator's node unreachable (requests to it fail fast meanwhile). */
  coordinatorReachable: boolean;
}

/** One node's sharding runtime: entity types (`init`), refs to entities anywhere (`entityRefFor`), shard moves. */
export class ClusterSharding {
  readonly self: NodeAddress;
  readonly config: ShardingConfig;
  /** This node's replica of the explicit placements of every type (see ExternalAllocationController). */
  readonly placementStore: PlacementStore;
  /** The cluster-wide cordons, as this node's replica holds them (every coordinator here honours them). */
  readonly cordons: StoreCordons;
  private readonly placements: ReplicatedPlacements;
  private readonly changes: PlacementChanges;
  private readonly membership: Membership;
  private readonly logger: Logger;
  private readonly events: CoordinatorEvents | undefined;
  private readonly scheduler: Scheduler;
  private readonly pinViews = new Map<string, () => ExternalAllocationState>();
  private readonly types = new Map<string, ShardedType>();
  private readonly link: ShardingLink;
  private readonly refs: EntityRefs;
  private readonly requests: CoordinatorClient;
  private readonly context: ShardingContext;
  private readonly sendTimeouts = { delivered: 0, notDelivered: 0 };
  private readonly unsubscribe: Array<() => void> = [];
  private stopped = false;
  private shutdownPromise: Promise<void> | undefined;
  private unroutableMessages = 0;

  constructor(options: ClusterShardingOptions) {
    checkShardingOptions(options);
    const { transport, membership, placements } = options;
    this.config = resolveShardingConfig(options.config);
    this.membership = membership;
    this.self = membership.self;
    this.placements = placements;
    this.placementStore = placements.store;
    this.cordons = new StoreCordons(placements.store);
    this.changes = new PlacementChanges(placements.store, {
      typeNames: () => this.types.keys(),
      coordinator: (typeName) => this.types.get(typeName)?.coordinator,
      stopped: () => this.stopped,
    });
    this.logger = (options.logger ?? silentLogger()).child({ component: 'sharding' });
    this.events = options.events;
    this.scheduler = options.scheduler ?? systemScheduler;
    this.link = new ShardingLink(transport, this.logger);
    // Sends unless stopped; false when the message was refused (see ShardingLink.send).
    const send = (to: string, message: ShardingMessage): boolean => !this.stopped && this.link.send(to, message);
    this.refs = new EntityRefs({
      selfKey: this.link.selfKey,
      scheduler: this.scheduler,
      config: this.config,
      send,
      requireRunning: () => this.requireRunning(),
      onSendTimeout: (typeName, delivered) => {
        this.sendTimeouts[delivered ? 'delivered' : 'notDelivered']++;
        this.events?.onSendTimeout?.(typeName, delivered);
      },
    });
    this.requests = new CoordinatorClient({
      send,
      scheduler: this.scheduler,
      requestTimeoutMs: this.config.requestTimeoutMs,
      retryIntervalMs: this.config.retryIntervalMs,
    });
    this.context = {
      self: this.self,
      selfKey: this.link.selfKey,
      config: this.config,
      membership,
      scheduler: this.scheduler,
      send,
      flush: (to) => this.link.flush(to),
      protocolWith: (to) => this.link.protocolOf(to),
      events: this.events,
      reply: (replyTo, outcome) => this.refs.reply(replyTo, outcome),
      entityStore: options.entityStore,
    };
    this.link.listen((from, message) => this.dispatch(from, message));
    this.unsubscribe.push(
      () => this.link.close(),
      this.placementStore.onChange((typeName) => this.changes.changed(typeName)),
      membership.onChange(() => this.onMembershipChange()),
      membership.onLeaving(() => this.leaveGracefully()),
    );
  }

  /** Starts the region (and, on the oldest Up member, the coordinator) of an entity type. Call it on every node. */
  init(options: ShardedTypeOptions): void {
    this.requireRunning();
    const settings = resolveShardedType(options, this.membership);
    if (this.types.has(settings.typeName)) {
      throw new ActorTsError('invalid_argument', `entity type "${settings.typeName}" is already initialised`);
    }
    const logger = this.logger.child({ typeName: settings.typeName });
    const region = new ShardRegion(settings, this.context, logger, {
      entityRef: (entityId) => this.refs.refFor(refTarget(type), entityId),
    });
    const type: ShardedType = {
      settings,
      region,
      coordinator: undefined,
      coordinatorAddress: undefined,
      coordinatorReachable: true,
    };
    this.types.set(settings.typeName, type);
    this.updateCoordinator(type);
    region.start(type.coordinatorAddress);
    logger.info(
      {
        numberOfShards: settings.numberOfShards,
        shardIdFunction: settings.shardIdFunction,
        role: settings.role,
        proxy: region.isProxy,
      },
      'entity type initialised',
    );
  }

  /** The initialised types and their shard counts. */
  entityTypes(): ReadonlyMap<string, EntityTypeFacts> {
    return new Map([...this.types].map(([name, type]) => [name, typeFacts(type)]));
  }

  /** Where a type's coordinator runs as this node sees it (undefined while no member is Up). */
  coordinatorFor(typeName: string): NodeAddress | undefined {
    const address = this.requireType(typeName).coordinatorAddress;
    return address === undefined ? undefined : this.link.addressOf(address);
  }

  entityRefFor<T extends TypeOrName>(of: T, entityId: string): RefOf<T> {
    this.requireRunning();
    const type = this.requireType(typeof of === 'string' ? of : (of as { typeName: string }).typeName);
    checkEntityId(entityId);
    return this.refs.refFor(refTarget(type), entityId) as RefOf<T>;
  }

  /**
   * A type's explicit placements as this node's replica holds them, read as the external strategy's state: the
   * view `externalAllocationStrategy(fallback, getState)` takes, from the same store explain and cordons read.
   * The same function for every call with one type; it works before the type is initialised.
   */
  placementState(typeName: string): () => ExternalAllocationState {
    let view = this.pinViews.get(typeName);
    if (view === undefined) {
      // Validates the name the way the store does, so a bad one fails here and not at the first allocation.
      this.placementStore.snapshot(typeName);
      view = explicitPlacementState(() => this.placementStore.snapshot(typeName));
      this.pinViews.set(typeName, view);
    }
    return view;
  }

  /** Where every allocated shard of a type lives, as the coordinator knows it (asked from any node). */
  async getShardLocations(typeName: string): Promise<ShardLocations> {
    const { regions, handingOff } = await this.request(typeName, { type: 'GetShardLocations', typeName });
    return { regions, handingOff };
  }

  /**
   * Asks the coordinator to hand these shards off now and re-allocate them through the strategy (so an
   * explicit placement decides where they go). Resolves once the coordinator accepted, with the shards it
   * could not move: `unknown` (out of range) and `unallocated` (no home yet; also as `homeless`, deprecated). Throws `invalid_argument` for
   * anything but an array of integers.
   */
  async rebalanceNow(typeName: string, shardIds: ReadonlyArray<number>): Promise<RebalanceNowResult> {
    this.requireType(typeName);
    checkShardIds(shardIds);
    const answer = await this.request(typeName, { type: 'RebalanceNow', typeName, shardIds: [...new Set(shardIds)] });
    // The wire field keeps its old name (`homeless`): peers of earlier releases send and read it.
    const unallocated = [...answer.homeless];
    return { accepted: [...answer.accepted], unknown: [...answer.unknown], unallocated, homeless: unallocated };
  }

  /**
   * Asks the coordinator to run a rebalance round now rather than at its next tick (e.g. after explicit
   * placements changed). Resolves when the round ran; the hand-offs it started may still be in progress.
   */
  async requestRebalance(typeName: string): Promise<void> {
    await this.request(typeName, { type: 'RequestRebalance', typeName });
  }

  /**
   * Asks the type's coordinator to treat `region` as cordoned and hand off every shard it hosts. Resolves
   * with the moves started (each with the home the strategy picks now), or `noCapacity` when no other region
   * may take them (nothing moved). Write the cordon first (`cordons.write`): this only starts the hand-offs.
   */
  async drain(
    typeName: string,
    region: NodeAddress,
  ): Promise<{ readonly moves: readonly DrainMove[]; readonly noCapacity: boolean }> {
    const { moves, noCapacity } = await this.request(typeName, {
      type: 'DrainRegion',
      typeName,
      region: region.toString(),
    });
    return { moves: [...moves], noCapacity };
  }

  /** Shards of a type hosted on this node, ascending. */
  localShards(typeName: string): number[] {
    return this.requireType(typeName).region.localShards();
  }

  stats(): ShardingStats {
    const types: Record<string, TypeStats> = {};
    for (const [name, type] of this.types) {
      types[name] = type.coordinator
        ? { region: type.region.stats(), coordinator: type.coordinator.stats() }
        : { region: type.region.stats() };
    }
    return {
      types,
      asksTimedOut: this.refs.timedOut,
      sendTimeouts: { ...this.sendTimeouts },
      unroutableMessages: this.unroutableMessages,
      sendFailures: this.link.sendFailures,
    };
  }

  /**
   * Stops this node's sharding: coordinators and regions stop, local entities are stopped (their `stop` hooks
   * run), pending asks and requests reject with `not_running`. The transport and the placements are not closed:
   * they belong to the caller. For a graceful exit that hands shards to other nodes, leave the cluster first.
   */
  shutdown(): Promise<void> {
    this.shutdownPromise ??= this.doShutdown();
    return this.shutdownPromise;
  }

  /**
   * Waits, at most `timeoutMs`, until this node's placement replica may take writes: the node has joined
   * and applied a full sync from a peer (or has none). Past the bound it logs and lets the write go ahead.
   */
  async placementsReady(timeoutMs = 5_000): Promise<void> {
    if (await this.placements.whenReady(timeoutMs)) return;
    this.logger.warn({ timeoutMs }, 'writing placements before a first sync with any peer completed');
  }

  private async doShutdown(): Promise<void> {
    // Acknowledgements of messages already processed: sent now, their senders need not retry them elsewhere.
    this.refs.flushReplies();
    this.stopped = true;
    for (const unsubscribe of this.unsubscribe.splice(0)) unsubscribe();
    for (const type of this.types.values()) {
      type.coordinator?.stop();
      type.coordinator = undefined;
    }
    const stopping = new ActorTsError('not_running', 'cluster sharding was shut down');
    this.refs.failAll(stopping);
    this.requests.failAll(stopping);
    await Promise.all([...this.types.values()].map((type) => type.region.shutdown()));
    this.logger.info('sharding stopped');
  }

  private async leaveGracefully(): Promise<void> {
    if (this.stopped) return;
    await Promise.all([...this.types.values()].map((type) => type.region.gracefulShutdown()));
  }

  /** Sends a request to the type's coordinator, wherever it runs at each retry (shard-insight.ts asks through it). */
  request<B extends CoordinatorRequestBody>(typeName: string, body: B): Promise<AnswerTo<B['type']>> {
    this.requireRunning();
    const type = this.requireType(typeName);
    return this.requests.request(body, () =>
      type.coordinatorAddress === undefined
        ? undefined
        : { key: type.coordinatorAddress, reachable: type.coordinatorReachable },
    );
  }

  private dispatch(from: string, message: ShardingMessage): void {
    if (this.stopped) return;
    const routed = routeShardingMessage(from, message, {
      region: (typeName) => this.types.get(typeName)?.region,
      coordinator: (typeName) => this.types.get(typeName)?.coordinator,
      entityReply: (reply) => this.refs.received(reply),
      coordinatorAnswer: (answer) => this.requests.onAnswer(answer),
    });
    if (routed) return;
    this.unroutableMessages++;
    const typeName = 'typeName' in message ? message.typeName : undefined;
    this.logger.debug({ from, type: message.type, typeName }, 'sharding message with no recipient here dropped');
  }

  private onMembershipChange(): void {
    if (this.stopped) return;
    for (const type of this.types.values()) {
      this.updateCoordinator(type);
      type.coordinator?.onMembershipChange();
      type.region.onMembershipChange(type.coordinatorAddress);
      this.changes.mayApply(type.settings.typeName);
    }
    this.requests.coordinatorChanged();
  }

  /** Starts or stops this node's coordinator for a type as the oldest Up member changes. */
  private updateCoordinator(type: ShardedType): void {
    const node = coordinatorNode(this.membership.members(), type.settings.role);
    type.coordinatorAddress = node === undefined ? undefined : this.link.remember(node.address);
    type.coordinatorReachable = node?.reachable ?? true;
    const shouldRun = type.coordinatorAddress === this.link.selfKey;
    if (shouldRun && type.coordinator === undefined) {
      const { typeName, numberOfShards, role, strategy } = type.settings;
      type.coordinator = new ShardCoordinator(
        {
          typeName,
          numberOfShards,
          role,
          strategy,
          onRegionAdded: () => this.changes.mayApply(typeName),
          listedPlacement: (shardId, now) => listedPlacement(this.placementStore, typeName, shardId, now),
          cordons: this.cordons,
          ...(this.events === undefined ? {} : { events: this.events }),
          ...(this.link.probe === undefined ? {} : { probe: this.link.probe }),
        },
        this.context,
        this.logger.child({ typeName, part: 'coordinator' }),
      );
      type.coordinator.start();
    } else if (!shouldRun && type.coordinator !== undefined) {
      type.coordinator.stop();
      type.coordinator = undefined;
    }
  }

  private requireType(typeName: string): ShardedType {
    const type = typeof typeName === 'string' ? this.types.get(typeName) : undefined;
    if (type === undefined)
      throw new ActorTsError(
        'unknown_type',
        `entity type ${JSON.stringify(typeName)} is not initialised on this node (it runs: ${[...this.types.keys()].join(', ') || 'none'})`,
      );
    return type;
  }

  private requireRunning(): void {
    if (this.stopped) throw new ActorTsError('not_running', 'cluster sharding was shut down');
  }
}
