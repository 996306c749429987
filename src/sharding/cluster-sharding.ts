// The sharding runtime of one node (Pekko's ClusterSharding extension): initialises entity types, hands out
// entity references, runs one region per type and, on the oldest Up member, that type's coordinator. It owns
// the node's sharding traffic: everything the transport delivers for sharding is dispatched from here.
import { PlacementStore, type PlacementLog } from '../../crdt/index.js';
import { NodeAddress } from '../cluster/address.js';
import type { Membership } from '../cluster/member.js';
import type { Transport } from '../cluster/transport.js';
import { isFamilyMessage, type WireMessage } from '../cluster/wire-message.js';
import { ActorTsError } from '../errors.js';
import { silentLogger, type Logger } from '../logging.js';
import { resolveShardingConfig, type ShardingConfig } from './config.js';
import type { AskOptions, EntityBehavior, EntityOutcome, EntityRef } from './entity.js';
import {
  MAX_ENTITY_ID_LENGTH,
  MAX_ERROR_LENGTH,
  MAX_SHARD_ID,
  SHARDING_MESSAGES,
  TYPE_NAME_PATTERN,
  type RegionLocation,
  type ReplyTo,
  type ShardingMessage,
  type TypedShardingMessage,
} from './messages.js';
import { PlacementGossip } from './placement-gossip.js';
import { ShardCoordinator, coordinatorNode, type CoordinatorStats } from './shard-coordinator.js';
import { shardIdFor } from './shard-id.js';
import { ShardRegion, type RegionStats, type ShardingContext } from './shard-region.js';
import { LeastShardAllocationStrategy, type AllocationStrategy } from './strategies/index.js';

export interface ClusterShardingOptions {
  readonly transport: Transport;
  readonly membership: Membership;
  /** Overrides of `DEFAULT_SHARDING_CONFIG`. */
  readonly config?: Partial<ShardingConfig>;
  /** Defaults to a silent logger. */
  readonly logger?: Logger;
  /**
   * The node's replica of the explicit-placement store, replicated to every member over the transport.
   * Default: a new store written as this node (`self.toString()`), anti-entropy every 1000 ms.
   */
  readonly placements?: {
    readonly store?: PlacementStore;
    readonly antiEntropyIntervalMs?: number;
    /** For the store built here (not a given `store`); see PlacementStoreOptions. */
    readonly compactAfterItems?: number;
  };
}

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
}

export interface ShardLocations {
  readonly regions: ReadonlyArray<RegionLocation>;
  /** Shards whose hand-off is in progress: still listed under the region they are leaving until they stopped. */
  readonly handingOff: ReadonlyArray<number>;
}

export interface RebalanceNowResult {
  /** Shards whose hand-off started (or was already running). */
  readonly accepted: number[];
  /** Shard ids outside 0 .. numberOfShards - 1. */
  readonly unknown: number[];
  /** Shards without a home: nothing to move; their next message allocates them through the strategy. */
  readonly homeless: number[];
}

export interface TypeStats {
  readonly region: RegionStats;
  /** Present on the node that runs this type's coordinator. */
  readonly coordinator?: CoordinatorStats;
}

export interface ShardingStats {
  readonly types: Readonly<Record<string, TypeStats>>;
  readonly asksTimedOut: number;
  /** Sharding messages for a type not initialised here, or for a coordinator that does not run here. */
  readonly unroutableMessages: number;
  /** Sends the transport refused (a message that cannot be encoded). */
  readonly sendFailures: number;
}

interface ShardedType {
  readonly settings: {
    readonly typeName: string;
    readonly numberOfShards: number;
    readonly behavior: EntityBehavior;
    readonly role: string | undefined;
    readonly strategy: AllocationStrategy;
  };
  readonly region: ShardRegion;
  coordinator: ShardCoordinator | undefined;
  coordinatorAddress: string | undefined;
}

interface PendingAsk {
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

type CoordinatorRequest =
  | { readonly type: 'GetShardLocations'; readonly typeName: string; readonly requestId: number }
  | { readonly type: 'RebalanceNow'; readonly typeName: string; readonly requestId: number; readonly shardIds: number[] }
  | { readonly type: 'RequestRebalance'; readonly typeName: string; readonly requestId: number };

type CoordinatorAnswer = Extract<ShardingMessage, { type: 'ShardLocations' | 'RebalanceNowResult' | 'RebalanceRequested' }>;

interface PendingRequest {
  readonly request: CoordinatorRequest;
  readonly answerType: CoordinatorAnswer['type'];
  readonly resolve: (answer: CoordinatorAnswer) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
  readonly retry: NodeJS.Timeout;
}

const MAX_NUMBER_OF_SHARDS = MAX_SHARD_ID + 1;
const REGION_BOUND = new Set<string>([
  'RegisterAck',
  'RegisterRequired',
  'ShardHome',
  'HostShard',
  'BeginHandOff',
  'HandOff',
  'GracefulShutdownAck',
  'EntityEnvelope',
]);
const COORDINATOR_BOUND = new Set<string>([
  'RegisterRegion',
  'GetShardHome',
  'ShardStarted',
  'BeginHandOffAck',
  'ShardStopped',
  'GracefulShutdownRequest',
  'GetShardLocations',
  'RebalanceNow',
  'RequestRebalance',
]);

export class ClusterSharding {
  readonly self: NodeAddress;
  readonly config: ShardingConfig;
  /** This node's replica of the explicit placements of every type (see ExternalAllocationController). */
  readonly placementStore: PlacementStore;
  private readonly placementGossip: PlacementGossip;
  private readonly rebalanceSoon = new Set<string>();
  private readonly selfKey: string;
  private readonly transport: Transport;
  private readonly membership: Membership;
  private readonly logger: Logger;
  private readonly types = new Map<string, ShardedType>();
  private readonly addresses = new Map<string, NodeAddress>();
  private readonly asks = new Map<number, PendingAsk>();
  private readonly requests = new Map<number, PendingRequest>();
  private readonly context: ShardingContext;
  private readonly unsubscribe: Array<() => void> = [];
  private nextId = 1;
  private stopped = false;
  private shutdownPromise: Promise<void> | undefined;
  private readonly counters = { asksTimedOut: 0, unroutableMessages: 0, sendFailures: 0 };

  constructor(options: ClusterShardingOptions) {
    const { transport, membership } = options;
    if (typeof transport?.send !== 'function' || typeof transport.onMessage !== 'function') {
      throw new ActorTsError('invalid_argument', 'ClusterSharding needs a transport');
    }
    if (typeof membership?.members !== 'function' || typeof membership.onChange !== 'function') {
      throw new ActorTsError('invalid_argument', 'ClusterSharding needs a membership');
    }
    if (!transport.self.equals(membership.self)) {
      throw new ActorTsError(
        'invalid_argument',
        `transport (${transport.self.toString()}) and membership (${membership.self.toString()}) belong to different nodes`,
      );
    }
    this.config = resolveShardingConfig(options.config);
    this.transport = transport;
    transport.register(SHARDING_MESSAGES);
    this.membership = membership;
    this.self = membership.self;
    this.selfKey = this.self.toString();
    this.addresses.set(this.selfKey, this.self);
    this.logger = (options.logger ?? silentLogger()).child({ component: 'sharding' });
    this.context = {
      self: this.self,
      selfKey: this.selfKey,
      config: this.config,
      membership,
      send: (to, message) => this.send(to, message),
      reply: (replyTo, outcome) => this.reply(replyTo, outcome),
    };
    const placementLog = toPlacementLog(this.logger.child({ part: 'placements' }));
    this.placementStore =
      options.placements?.store ??
      new PlacementStore({
        node: this.selfKey,
        log: placementLog,
        ...(options.placements?.compactAfterItems === undefined ? {} : { compactAfterItems: options.placements.compactAfterItems }),
      });
    this.placementGossip = new PlacementGossip(this.placementStore, transport, membership, {
      log: placementLog,
      ...(options.placements?.antiEntropyIntervalMs !== undefined
        ? { antiEntropyIntervalMs: options.placements.antiEntropyIntervalMs }
        : {}),
    });
    this.unsubscribe.push(
      () => this.placementGossip.close(),
      this.placementStore.onChange((typeName) => this.placementsChanged(typeName)),
      transport.onMessage((from, message) => this.onTransportMessage(from, message)),
      membership.onChange(() => this.onMembershipChange()),
      membership.onLeaving(() => this.leaveGracefully()),
    );
  }

  /** Starts the region (and, on the oldest Up member, the coordinator) of an entity type. Call it on every node. */
  init(options: ShardedTypeOptions): void {
    this.requireRunning();
    if (typeof options !== 'object' || options === null) throw invalid('init options must be an object');
    const { typeName, behavior, numberOfShards = 1000, allocationStrategy, role } = options;
    if (typeof typeName !== 'string' || !TYPE_NAME_PATTERN.test(typeName)) {
      throw invalid(`typeName must match ${String(TYPE_NAME_PATTERN)}, got ${JSON.stringify(typeName)}`);
    }
    if (this.types.has(typeName)) throw invalid(`entity type "${typeName}" is already initialised`);
    if (typeof behavior !== 'function') throw invalid('behavior must be a function (ctx) => { receive(message) }');
    if (!Number.isInteger(numberOfShards) || numberOfShards < 1 || numberOfShards > MAX_NUMBER_OF_SHARDS) {
      throw invalid(`numberOfShards must be an integer in 1..${MAX_NUMBER_OF_SHARDS}, got ${String(numberOfShards)}`);
    }
    if (role !== undefined && (typeof role !== 'string' || role.length === 0)) throw invalid('role must be a non-empty string');
    if (
      allocationStrategy !== undefined &&
      (typeof allocationStrategy !== 'object' ||
        allocationStrategy === null ||
        typeof allocationStrategy.allocate !== 'function' ||
        typeof allocationStrategy.rebalance !== 'function')
    ) {
      throw invalid('allocationStrategy must implement allocate() and rebalance()');
    }
    const strategy = allocationStrategy ?? new LeastShardAllocationStrategy({ cluster: this.membership });
    const settings = { typeName, numberOfShards, behavior, role, strategy };
    const logger = this.logger.child({ typeName });
    const region = new ShardRegion(settings, this.context, logger);
    const type: ShardedType = { settings, region, coordinator: undefined, coordinatorAddress: undefined };
    this.types.set(typeName, type);
    this.updateCoordinator(type);
    region.start(type.coordinatorAddress);
    logger.info({ numberOfShards, role, proxy: region.isProxy }, 'entity type initialised');
  }

  /** The initialised types and their shard counts. */
  entityTypes(): ReadonlyMap<string, { readonly numberOfShards: number; readonly role: string | undefined }> {
    return new Map([...this.types].map(([name, type]) => [name, { numberOfShards: type.settings.numberOfShards, role: type.settings.role }]));
  }

  /** Where a type's coordinator runs as this node sees it (undefined while no member is Up). */
  coordinatorFor(typeName: string): NodeAddress | undefined {
    const address = this.requireType(typeName).coordinatorAddress;
    return address === undefined ? undefined : this.addressOf(address);
  }

  entityRefFor(typeName: string, entityId: string): EntityRef {
    this.requireRunning();
    const type = this.requireType(typeName);
    if (typeof entityId !== 'string' || entityId.length === 0 || entityId.length > MAX_ENTITY_ID_LENGTH) {
      throw invalid(`entity id must be a string of 1..${MAX_ENTITY_ID_LENGTH} characters, got ${JSON.stringify(entityId)}`);
    }
    const shardId = shardIdFor(entityId, type.settings.numberOfShards);
    return {
      typeName,
      entityId,
      shardId,
      tell: (message: unknown): void => {
        this.requireRunning();
        type.region.deliver({ shardId, entityId, payload: message, hops: 0 });
      },
      ask: <R = unknown>(message: unknown, options: AskOptions = {}): Promise<R> =>
        this.ask<R>(type, shardId, entityId, message, options),
    };
  }

  /** Where every allocated shard of a type lives, as the coordinator knows it (asked from any node). */
  async getShardLocations(typeName: string): Promise<ShardLocations> {
    const answer = await this.requestCoordinator(typeName, (requestId) => ({ type: 'GetShardLocations', typeName, requestId }), 'ShardLocations');
    return answer.type === 'ShardLocations' ? { regions: answer.regions, handingOff: answer.handingOff } : { regions: [], handingOff: [] };
  }

  /**
   * Asks the coordinator to hand these shards off now and re-allocate them through the strategy (so an
   * explicit placement decides where they go). Resolves once the coordinator accepted, with the shards it
   * could not move: `unknown` (out of range) and `homeless` (no home yet). Throws `invalid_argument` for
   * anything but an array of integers.
   */
  async rebalanceNow(typeName: string, shardIds: ReadonlyArray<number>): Promise<RebalanceNowResult> {
    this.requireType(typeName);
    if (!Array.isArray(shardIds) || shardIds.length > MAX_NUMBER_OF_SHARDS || !shardIds.every((id) => Number.isSafeInteger(id))) {
      throw invalid(`shardIds must be an array of at most ${MAX_NUMBER_OF_SHARDS} integers`);
    }
    const ids = [...new Set(shardIds)];
    const answer = await this.requestCoordinator(typeName, (requestId) => ({ type: 'RebalanceNow', typeName, requestId, shardIds: ids }), 'RebalanceNowResult');
    if (answer.type !== 'RebalanceNowResult') return { accepted: [], unknown: [], homeless: [] };
    return { accepted: [...answer.accepted], unknown: [...answer.unknown], homeless: [...answer.homeless] };
  }

  /**
   * Asks the coordinator to run a rebalance round now rather than at its next tick (e.g. after explicit
   * placements changed). Resolves when the round ran; the hand-offs it started may still be in progress.
   */
  async requestRebalance(typeName: string): Promise<void> {
    await this.requestCoordinator(typeName, (requestId) => ({ type: 'RequestRebalance', typeName, requestId }), 'RebalanceRequested');
  }

  /** Shards of a type hosted on this node, ascending. */
  localShards(typeName: string): number[] {
    return this.requireType(typeName).region.localShards();
  }

  stats(): ShardingStats {
    const types: Record<string, TypeStats> = {};
    for (const [name, type] of this.types) {
      types[name] = type.coordinator ? { region: type.region.stats(), coordinator: type.coordinator.stats() } : { region: type.region.stats() };
    }
    return { types, ...this.counters };
  }

  /**
   * Stops this node's sharding: coordinators and regions stop, local entities are stopped (their `stop`
   * hooks run), pending asks and requests reject with `not_running`. The transport is not closed: it
   * belongs to the caller. For a graceful exit that hands shards to other nodes, leave the cluster first.
   */
  shutdown(): Promise<void> {
    this.shutdownPromise ??= this.doShutdown();
    return this.shutdownPromise;
  }

  private async doShutdown(): Promise<void> {
    this.stopped = true;
    for (const unsubscribe of this.unsubscribe.splice(0)) unsubscribe();
    for (const type of this.types.values()) {
      type.coordinator?.stop();
      type.coordinator = undefined;
    }
    const stopping = new ActorTsError('not_running', 'cluster sharding was shut down');
    for (const ask of this.asks.values()) {
      clearTimeout(ask.timer);
      ask.reject(stopping);
    }
    this.asks.clear();
    for (const request of this.requests.values()) {
      clearTimeout(request.timer);
      clearInterval(request.retry);
      request.reject(stopping);
    }
    this.requests.clear();
    await Promise.all([...this.types.values()].map((type) => type.region.shutdown()));
    this.logger.info('sharding stopped');
  }

  /**
   * Waits, at most `timeoutMs`, until this node's placement replica may take writes: the node has joined
   * and applied a full sync from a peer (or has none). Past the bound it logs and lets the write go ahead.
   */
  async placementsReady(timeoutMs = 5_000): Promise<void> {
    if (await this.placementGossip.whenReady(timeoutMs)) return;
    this.logger.warn({ timeoutMs }, 'writing placements before a first sync with any peer completed');
  }

  /** Replication counters of this node's placement replica. */
  placementReplicationStats(): ReturnType<PlacementGossip['stats']> {
    return this.placementGossip.stats();
  }

  /**
   * A placement of a type changed (here or on another node): the coordinator, if it runs here, starts a
   * rebalance round at once rather than at its next tick. Changes arriving together share one round.
   */
  private placementsChanged(typeName: string): void {
    const type = this.types.get(typeName);
    if (this.stopped || type?.coordinator === undefined || this.rebalanceSoon.has(typeName)) return;
    this.rebalanceSoon.add(typeName);
    queueMicrotask(() => {
      this.rebalanceSoon.delete(typeName);
      if (!this.stopped) type.coordinator?.rebalanceSoon();
    });
  }

  /** A pinned target may just have become able to take its shards (it joined, or its region registered). */
  private placementsMayApply(typeName: string): void {
    if (this.placementStore.snapshot(typeName).placements.size > 0) this.placementsChanged(typeName);
  }

  private async leaveGracefully(): Promise<void> {
    if (this.stopped) return;
    await Promise.all([...this.types.values()].map((type) => type.region.gracefulShutdown()));
  }

  private ask<R>(type: ShardedType, shardId: number, entityId: string, message: unknown, options: AskOptions): Promise<R> {
    if (this.stopped) return Promise.reject(new ActorTsError('not_running', 'cluster sharding was shut down'));
    const timeoutMs = options.timeoutMs ?? this.config.askTimeoutMs;
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 2_147_483_647) {
      return Promise.reject(invalid(`ask timeoutMs must be an integer in 1..2147483647, got ${String(timeoutMs)}`));
    }
    const askId = this.nextId++;
    return new Promise<R>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (!this.asks.delete(askId)) return;
        this.counters.asksTimedOut++;
        reject(new ActorTsError('timeout', `ask to ${type.settings.typeName}/${entityId} timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      this.asks.set(askId, { resolve: resolve as (value: unknown) => void, reject, timer });
      const result = type.region.deliver({ shardId, entityId, payload: message, hops: 0, replyTo: { node: this.selfKey, askId } });
      if (result === 'dropped') {
        this.settleAsk(askId, {
          ok: false,
          error: `message to ${type.settings.typeName}/${entityId} dropped: region buffer full (bufferSize ${this.config.bufferSize})`,
        }, 'buffer_overflow');
      }
    });
  }

  private reply(replyTo: ReplyTo, outcome: EntityOutcome): void {
    if (replyTo.node === this.selfKey) {
      this.settleAsk(replyTo.askId, outcome, 'entity_failed');
      return;
    }
    const failure = (error: string): ShardingMessage => ({
      type: 'EntityReply',
      askId: replyTo.askId,
      ok: false,
      error: error.slice(0, MAX_ERROR_LENGTH),
    });
    if (outcome.ok) {
      const sent = this.send(replyTo.node, { type: 'EntityReply', askId: replyTo.askId, ok: true, value: outcome.value });
      // An answer the wire cannot carry still owes the asker an answer, rather than a timeout.
      if (!sent) this.send(replyTo.node, failure('the entity answered with a value that cannot be serialised'));
    } else {
      this.send(replyTo.node, failure(outcome.error));
    }
  }

  private settleAsk(askId: number, outcome: EntityOutcome, failure: 'entity_failed' | 'buffer_overflow'): void {
    const ask = this.asks.get(askId);
    if (ask === undefined) return;
    this.asks.delete(askId);
    clearTimeout(ask.timer);
    if (outcome.ok) ask.resolve(outcome.value);
    else ask.reject(new ActorTsError(failure, outcome.error));
  }

  /** Sends a request to the type's coordinator, re-sending it every retry interval until answered or timed out. */
  private requestCoordinator(
    typeName: string,
    build: (requestId: number) => CoordinatorRequest,
    answerType: CoordinatorAnswer['type'],
  ): Promise<CoordinatorAnswer> {
    this.requireRunning();
    const type = this.requireType(typeName);
    const requestId = this.nextId++;
    const request = build(requestId);
    const sendIt = (): void => {
      if (type.coordinatorAddress !== undefined) this.send(type.coordinatorAddress, request);
    };
    return new Promise<CoordinatorAnswer>((resolve, reject) => {
      const timeoutMs = this.config.requestTimeoutMs;
      const timer = setTimeout(() => {
        const pending = this.requests.get(requestId);
        if (pending === undefined) return;
        this.requests.delete(requestId);
        clearInterval(pending.retry);
        const where = type.coordinatorAddress ?? 'no coordinator (no Up member)';
        reject(new ActorTsError('timeout', `${request.type} for "${typeName}" got no answer from ${where} within ${timeoutMs} ms`));
      }, timeoutMs);
      const retry = setInterval(sendIt, this.config.retryIntervalMs);
      this.requests.set(requestId, { request, answerType, resolve, reject, timer, retry });
      sendIt();
    });
  }

  private onCoordinatorAnswer(answer: CoordinatorAnswer): void {
    const pending = this.requests.get(answer.requestId);
    if (pending === undefined || pending.answerType !== answer.type || pending.request.typeName !== answer.typeName) return;
    this.requests.delete(answer.requestId);
    clearTimeout(pending.timer);
    clearInterval(pending.retry);
    pending.resolve(answer);
  }

  private onTransportMessage(from: NodeAddress, message: WireMessage): void {
    if (this.stopped || !isFamilyMessage(SHARDING_MESSAGES, message)) return;
    const key = from.toString();
    if (!this.addresses.has(key)) this.addresses.set(key, from);
    this.dispatch(key, message);
  }

  private dispatch(from: string, message: ShardingMessage): void {
    if (this.stopped) return;
    switch (message.type) {
      case 'EntityReply':
        this.settleAsk(message.askId, message.ok ? { ok: true, value: message.value } : { ok: false, error: message.error }, 'entity_failed');
        return;
      case 'ShardLocations':
      case 'RebalanceNowResult':
      case 'RebalanceRequested':
        this.onCoordinatorAnswer(message);
        return;
      default:
        this.route(from, message);
    }
  }

  private route(from: string, message: TypedShardingMessage): void {
    const type = this.types.get(message.typeName);
    if (type !== undefined && REGION_BOUND.has(message.type)) {
      type.region.handle(from, message);
      return;
    }
    if (type?.coordinator !== undefined && COORDINATOR_BOUND.has(message.type)) {
      type.coordinator.handle(from, message);
      return;
    }
    this.counters.unroutableMessages++;
    this.logger.debug({ from, type: message.type, typeName: message.typeName }, 'sharding message with no recipient here dropped');
  }

  private onMembershipChange(): void {
    if (this.stopped) return;
    for (const type of this.types.values()) {
      this.updateCoordinator(type);
      type.coordinator?.onMembershipChange();
      type.region.onMembershipChange(type.coordinatorAddress);
      this.placementsMayApply(type.settings.typeName);
    }
  }

  /** Starts or stops this node's coordinator for a type as the oldest Up member changes. */
  private updateCoordinator(type: ShardedType): void {
    const node = coordinatorNode(this.membership.members(), type.settings.role);
    type.coordinatorAddress = node?.address.toString();
    if (node !== undefined) this.addresses.set(type.coordinatorAddress ?? '', node.address);
    const shouldRun = type.coordinatorAddress === this.selfKey;
    if (shouldRun && type.coordinator === undefined) {
      type.coordinator = new ShardCoordinator(
        {
          typeName: type.settings.typeName,
          numberOfShards: type.settings.numberOfShards,
          role: type.settings.role,
          strategy: type.settings.strategy,
          onRegionAdded: () => this.placementsMayApply(type.settings.typeName),
        },
        this.context,
        this.logger.child({ typeName: type.settings.typeName, part: 'coordinator' }),
      );
      type.coordinator.start();
    } else if (!shouldRun && type.coordinator !== undefined) {
      type.coordinator.stop();
      type.coordinator = undefined;
    }
  }

  /**
   * Local messages skip the transport but stay asynchronous, so no handler ever re-enters another. Returns
   * false when the transport refused the message (it cannot be encoded); a loss on the way is not seen here.
   */
  private send(to: string, message: ShardingMessage): boolean {
    if (this.stopped) return false;
    if (to === this.selfKey) {
      queueMicrotask(() => this.dispatch(this.selfKey, message));
      return true;
    }
    const address = this.addressOf(to);
    if (address === undefined) {
      this.counters.sendFailures++;
      this.logger.warn({ to, type: message.type }, 'cannot send to an invalid address');
      return false;
    }
    try {
      this.transport.send(address, message);
      return true;
    } catch (error) {
      this.counters.sendFailures++;
      this.logger.warn({ to, type: message.type, err: error instanceof Error ? error.message : String(error) }, 'send failed');
      return false;
    }
  }

  private addressOf(key: string): NodeAddress | undefined {
    let address = this.addresses.get(key);
    if (address === undefined) {
      address = NodeAddress.tryParse(key);
      if (address !== undefined) this.addresses.set(key, address);
    }
    return address;
  }

  private requireType(typeName: string): ShardedType {
    const type = typeof typeName === 'string' ? this.types.get(typeName) : undefined;
    if (type === undefined) throw new ActorTsError('unknown_type', `entity type ${JSON.stringify(typeName)} is not initialised on this node`);
    return type;
  }

  private requireRunning(): void {
    if (this.stopped) throw new ActorTsError('not_running', 'cluster sharding was shut down');
  }
}

function toPlacementLog(logger: Logger): PlacementLog {
  return (event) => logger[event.level]({ ...event.details }, event.message);
}

function invalid(message: string): ActorTsError {
  return new ActorTsError('invalid_argument', message);
}
