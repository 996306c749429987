// The region of one entity type on one node: routes every message for the type (home cache, a bounded
// buffer for shards whose home is not known yet, forwarding to remote regions), hosts this node's shards,
// and plays the region's side of registration and hand-off. A node without the type's role runs the
// region in proxy mode: it routes but never hosts.
import type { Logger } from '../../logging.js';
import type { MessageRoutedTo, ReplyTo, ShardingMessage } from '../protocol/messages.js';
import { HomeCache, memberMap } from './home-cache.js';
import { RegionBuffer, fromWire, toWire, type Envelope } from './region-buffer.js';
import { RegionHost } from './region-host.js';
import { RegionSelf, type RegionMode } from './region-self.js';
import type { Shard, ShardEntityOptions } from './shard.js';
import type { StoppedStates } from './shard-state.js';
import { asRestore, type StateMessage } from '../protocol/state-messages.js';
import { RegionLeave } from './region-leave.js';
import { ReliableDelivery } from './reliable-delivery.js';
import type { RegionStats } from './region-stats.js';
import type { ShardedTypeConfig } from '../core/sharded-type.js';
import type { Cancellable } from '../../cluster/scheduler.js';
import type { ShardingContext } from '../core/sharding-context.js';

/** What became of a message handed to the region. */
export type DeliveryResult = 'local' | 'forwarded' | 'buffered' | 'dropped';

export class ShardRegion {
  private readonly homes = new HomeCache((member) => this.ctx.events?.onFailoverStep?.(member, 'first-message'));
  private readonly host: RegionHost;
  private readonly buffer: RegionBuffer;
  private readonly leave: RegionLeave;
  private readonly reliable: ReliableDelivery;
  private coordinator: string | undefined;
  /** The coordinator that acknowledged our registration, if it is still the current one. */
  private registeredWith: string | undefined;
  private readonly self: RegionSelf;
  private retryTimer: Cancellable | undefined;
  private stopped = false;
  private readonly counters = {
    hopLimitDrops: 0,
    messagesForwarded: 0,
    messagesDeliveredLocally: 0,
    shardHomeRequests: 0,
    latePipeDrops: 0,
    messagesInvalid: 0,
  };

  constructor(
    readonly settings: ShardedTypeConfig,
    private readonly ctx: ShardingContext,
    private readonly logger: Logger,
    entities: Omit<ShardEntityOptions, 'onLatePipe' | 'scheduler'>,
  ) {
    this.buffer = new RegionBuffer(ctx.config.bufferSize, logger);
    this.self = new RegionSelf(settings.role);
    this.reliable = new ReliableDelivery(ctx.config);
    this.leave = new RegionLeave({
      typeName: settings.typeName,
      hosted: () => this.host.shards.size,
      buffered: () => this.buffer.size,
      retained: () => this.host.retained.size,
    });
    const onLatePipe = (): void => void this.counters.latePipeDrops++;
    const onInvalid = (): void => void this.counters.messagesInvalid++;
    this.host = RegionHost.forType(
      settings,
      ctx,
      logger,
      { ...entities, onLatePipe, onInvalid },
      (shardId, handOffId, stopped) => this.onShardStopped(shardId, handOffId, stopped),
    );
  }

  get typeName(): string {
    return this.settings.typeName;
  }

  get isProxy(): boolean {
    return this.resolveMode() === 'proxy';
  }

  start(coordinator: string | undefined): void {
    this.retryTimer = this.ctx.scheduler.setInterval(() => this.retry(), this.ctx.config.retryIntervalMs);
    this.onMembershipChange(coordinator);
  }

  /** Entities active here now (created, not passivated or stopped). */
  localEntityCount(): number {
    return this.host.shards.entityCount();
  }

  /** Hosted shard ids, ascending (shards being handed off are no longer counted). */
  localShards(): number[] {
    return this.host.shards.running();
  }

  stats(): RegionStats {
    return {
      proxy: this.isProxy,
      localShards: this.localShards().length,
      localEntities: this.host.shards.entityCount(),
      bufferedMessages: this.buffer.size,
      bufferOverflowDrops: this.buffer.overflowDrops,
      ...this.counters,
      ...this.host.stats(),
      ...this.reliable.stats(),
    };
  }

  /** Called on every membership change with the type's current coordinator node. */
  onMembershipChange(coordinator: string | undefined): void {
    if (this.stopped) return;
    if (coordinator !== this.coordinator) {
      this.logger.debug({ coordinator }, 'coordinator changed');
      this.coordinator = coordinator;
      this.registeredWith = undefined;
      this.register();
    } else if (this.registeredWith === undefined) {
      this.register();
    }
    // Messages already sent to a home that is gone are lost (tell and ask: at most once; a send is retried).
    const members = memberMap(this.ctx.membership.members());
    this.homes.update(members, this.ctx.selfKey);
    // Held messages go on once their home is reachable again, or ask for a new home once it is gone.
    for (const shardId of this.buffer.shardIds()) {
      const home = this.homes.get(shardId);
      if (home === undefined) this.requestHome(shardId);
      else if (!this.homes.isUnreachable(home)) this.flush(shardId);
    }
    if (this.self.gone(members.get(this.ctx.selfKey)) && this.host.shards.size > 0) {
      // This node was downed (a minority side downs itself) or removed: the coordinator has dropped our
      // shards and will re-home them, so the local copies must stop now or they would run twice.
      this.logger.warn({ shards: this.localShards() }, 'this node is no longer a member: stopping its shards');
      this.homes.forgetLocal(this.ctx.selfKey);
      void this.stopAllShardsLocally();
    } else if (this.leave.active && coordinator === undefined) {
      void this.stopAllShardsLocally();
    }
  }

  /** Routes one message: to a local shard, to its remote home, or into the buffer until the home is known. */
  deliver(envelope: Envelope): DeliveryResult {
    if (this.stopped) return 'dropped';
    const { shardId } = envelope;
    const home = this.homes.get(shardId);
    if (home === this.ctx.selfKey) {
      const shard = this.ensureShard(shardId);
      if (shard !== undefined && !shard.isStopping) {
        this.counters.messagesDeliveredLocally++;
        this.host.deliver(shard, envelope);
        return 'local';
      }
      // The shard is still stopping from an earlier hand-off: hold the message until it is gone.
      return this.hold(envelope);
    }
    if (home !== undefined && this.homes.isUnreachable(home)) {
      // Held, not written into a likely dead connection, until the home is reachable or re-homed (a timed-out
      // ask still here can say it was never delivered). Its home is known: nothing to ask.
      return this.buffer.add(envelope) === 'dropped' ? 'dropped' : 'buffered';
    }
    if (home !== undefined) {
      if (envelope.hops >= this.ctx.config.maxForwardHops) {
        this.counters.hopLimitDrops++;
        this.logger.warn({ shardId, home, hops: envelope.hops }, 'message dropped: forwarded too often');
        return 'dropped';
      }
      this.counters.messagesForwarded++;
      this.ctx.send(home, toWire(this.typeName, envelope));
      return 'forwarded';
    }
    return this.hold(envelope);
  }

  /** Starts a reliable send (routed now, retried on every tick until withdrawn); `dropped` over the bounds. */
  openSend(shardId: number, entityId: string, payload: unknown, replyTo: ReplyTo): DeliveryResult {
    const envelope = this.reliable.open(shardId, entityId, payload, replyTo);
    if (envelope === undefined) return 'dropped';
    const result = this.deliver(envelope);
    if (result === 'dropped') this.reliable.closed(replyTo.askId);
    else this.reliable.routed(replyTo.askId, result);
    return result;
  }

  /**
   * This node's ask or send `askId` settled: taken back from the buffer, a send's retries end. True when no
   * copy of it ever left this node (it is never applied).
   */
  withdraw(askId: number): boolean {
    const withdrawn = this.buffer.withdrawAsk(askId) && !this.reliable.hasLeft(askId);
    this.reliable.closed(askId);
    return withdrawn;
  }

  /** One of this node's asks or sends to `shardId` was answered by its entity (a failover's first message). */
  answered(shardId: number): void {
    this.homes.answered(shardId);
  }

  /** Handles a message addressed to this region; a message claiming to come from a coordinator is checked. */
  handle(from: string, message: MessageRoutedTo<'region'>): void {
    if (this.stopped) return;
    if (message.type === 'EntityEnvelope') {
      this.deliver(fromWire(message));
      return;
    }
    // From a shard's old host too (protocol 10): kept until a HostShard names its transfer; completing the
    // transfer a HostShard waits for starts the shard.
    if (message.type === 'RestoreShardState') {
      if (!this.isProxy && this.host.transfer.received(message)) this.onShardHome(message.shardId, this.ctx.selfKey);
      return;
    }
    if (from !== this.coordinator) {
      // A former coordinator's late message, or a node that is not the coordinator: acting on it could
      // undo the current coordinator's decisions. Retries on the protocol make dropping safe.
      this.logger.debug(
        { from, type: message.type, coordinator: this.coordinator },
        'ignored message from a non-coordinator',
      );
      return;
    }
    switch (message.type) {
      case 'RegisterAck':
        this.registeredWith = from;
        for (const shardId of this.buffer.shardIds()) this.requestHome(shardId);
        if (this.leave.active) this.send({ type: 'GracefulShutdownRequest', typeName: this.typeName });
        return;
      case 'RegisterRequired':
        this.registeredWith = undefined;
        return this.register();
      case 'ShardHome':
        return this.onShardHome(message.shardId, message.region);
      case 'HostShard': {
        if (this.isProxy) return;
        if (this.host.expect(message.shardId, message.transferId, this.ctx.scheduler.now()) === 'waiting') return;
        const existed = this.host.shards.get(message.shardId) !== undefined;
        this.onShardHome(message.shardId, this.ctx.selfKey);
        // A new shard announces itself (ensureShard); a repeated HostShard still wants its acknowledgement.
        if (existed) this.send({ type: 'ShardStarted', typeName: this.typeName, shardId: message.shardId });
        return;
      }
      case 'BeginHandOff':
        this.homes.delete(message.shardId);
        this.send({ type: 'BeginHandOffAck', typeName: this.typeName, shardId: message.shardId });
        return this.host.sendEarly(message, this.sendState, this.flushCoordinator);
      case 'HandOff':
        return this.handOff(message.shardId, message.handOffId, message.to);
      case 'ShardStoppedAck':
        return this.leave.stopAcknowledged(message.shardId, message.handOffId);
      case 'ShardStateReleased':
        if (this.host.retained.released(message.shardId, message.handOffId)) this.leave.check();
        return;
      case 'GracefulShutdownAck':
        return this.leave.acknowledged();
    }
  }

  /**
   * Graceful leave: the coordinator hands off every local shard; resolves as region-leave.ts says. A proxy has
   * nothing to hand off. Bounded by the cluster's leave timeout: without a candidate for the shards, it waits.
   */
  gracefulShutdown(): Promise<void> {
    if (this.isProxy || this.stopped) return Promise.resolve();
    const { done, first } = this.leave.start();
    if (first) {
      this.logger.info({ shards: this.localShards().length }, 'region leaving: handing off shards');
      if (this.coordinator === undefined) void this.stopAllShardsLocally();
      else if (this.registeredWith !== undefined)
        this.send({ type: 'GracefulShutdownRequest', typeName: this.typeName });
    }
    return done;
  }

  /** Stops every local entity and all timers; buffered messages are dropped. */
  async shutdown(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.retryTimer?.cancel();
    this.buffer.clear();
    this.host.retained.clear();
    await this.host.shards.shutdown();
    this.leave.finish();
  }

  private onShardHome(shardId: number, region: string): void {
    if (region === this.ctx.selfKey) {
      if (this.isProxy) {
        this.logger.warn({ shardId }, 'coordinator named a proxy as shard home; ignored');
        return;
      }
      this.homes.set(shardId, region);
      this.ensureShard(shardId);
    } else {
      const local = this.host.shards.get(shardId);
      if (local !== undefined && !local.isStopping) {
        // Running here while told of another home: a second copy (a late registration lost a race after a
        // failover) or a stale ShardHome. The coordinator decides: this report makes it hand off a copy.
        this.logger.warn(
          { shardId, home: region },
          'told of another home for a shard running here; asking the coordinator',
        );
        this.send({ type: 'ShardStarted', typeName: this.typeName, shardId });
      } else {
        this.homes.set(shardId, region);
      }
    }
    this.flush(shardId);
  }

  private ensureShard(shardId: number): Shard | undefined {
    // Not before the state it was told to start with is in (its messages wait in the buffer meanwhile).
    if (this.isProxy || this.host.transfer.waitsFor(shardId)) return undefined;
    const { shard, started } = this.host.ensure(shardId);
    if (started) {
      this.logger.debug({ shardId }, 'shard started');
      // Every start is reported, so the coordinator can stop a copy started by a stale ShardHome or HostShard
      // that reached this region after the shard had moved on (messages reordered, e.g. across a reconnect).
      this.send({ type: 'ShardStarted', typeName: this.typeName, shardId });
    }
    return shard;
  }

  /**
   * HandOff: stop the shard, its state to `to` when named. Already gone (a repeated HandOff, a coordinator that
   * lost the state in transit or sends it elsewhere now, a shard never started here): the state kept from its
   * stop goes again, under this id, then the report.
   */
  private handOff(shardId: number, handOffId: number, to: string | undefined): void {
    this.homes.delete(shardId);
    if (this.host.handOff(shardId, handOffId, to)) return;
    for (const chunk of this.host.retained.reship(shardId, handOffId)) this.sendState(chunk, to);
    this.send({ type: 'ShardStopped', typeName: this.typeName, shardId, handOffId });
  }

  /** A state chunk to the new home `to` (as its RestoreShardState), or to the coordinator without one. */
  private readonly sendState = (chunk: Extract<StateMessage, { type: 'ShardStateChunk' }>, to?: string): void => {
    if (to === undefined) this.send(chunk);
    else this.ctx.send(to, asRestore(chunk));
  };

  /** Writes out what was sent to the coordinator in this tick, not at its end (a report it waits for). */
  private readonly flushCoordinator = (): void => {
    if (this.coordinator !== undefined) this.ctx.flush?.(this.coordinator);
  };

  private onShardStopped(shardId: number, handOffId: number | undefined, stopped: StoppedStates): void {
    if (this.stopped) return;
    this.logger.debug({ shardId }, 'shard stopped');
    // The state to the coordinator ahead of the report (same connection), or straight to the new home the HandOff
    // named after it, which goes out at once: the coordinator acts on it while this node packs the state.
    const report = (id: number): void => {
      this.send({ type: 'ShardStopped', typeName: this.typeName, shardId, handOffId: id });
      this.flushCoordinator();
      this.leave.stopReported(shardId, id);
    };
    this.host.stopped(shardId, handOffId, stopped, this.coordinator, this.sendState, report);
    this.flush(shardId);
    this.leave.check();
  }

  private hold(envelope: Envelope): DeliveryResult {
    const result = this.buffer.add(envelope);
    if (result === 'dropped') return 'dropped';
    // The first message for a shard asks for its home; later ones wait for the same answer.
    if (result === 'first') this.requestHome(envelope.shardId);
    return 'buffered';
  }

  private flush(shardId: number): void {
    if (!this.homes.has(shardId)) return;
    const queue = this.buffer.take(shardId);
    if (queue === undefined) return;
    for (const envelope of queue) this.deliver(envelope);
    this.leave.check();
  }

  private requestHome(shardId: number): void {
    // A shard still stopping here will be flushed when it is gone, one waiting for its state once that is in;
    // asking now could only return this node.
    if (this.host.shards.get(shardId)?.isStopping === true || this.host.transfer.waitsFor(shardId)) return;
    if (this.coordinator === undefined || this.registeredWith === undefined) return;
    this.counters.shardHomeRequests++;
    this.send({ type: 'GetShardHome', typeName: this.typeName, shardId });
  }

  private register(): void {
    const mode = this.resolveMode();
    if (mode === 'unknown' || this.coordinator === undefined) return;
    this.send(this.host.registration(this.typeName, mode === 'proxy'));
  }

  private retry(): void {
    if (this.stopped) return;
    this.host.tick();
    for (const copy of this.reliable.retries((e) => e.replyTo !== undefined && this.buffer.holdsAsk(e.replyTo.askId))) {
      if (copy.reliable !== undefined) this.reliable.routed(copy.reliable.seq, this.deliver(copy));
    }
    if (this.registeredWith === undefined) {
      this.register();
      return;
    }
    for (const { shardId, handOffId } of this.host.retained.overdue())
      this.send({ type: 'ShardStateHeld', typeName: this.typeName, shardId, handOffId });
    for (const shardId of this.buffer.shardIds()) if (!this.homes.has(shardId)) this.requestHome(shardId);
    for (const message of this.leave.retryMessages()) this.send(message);
  }

  /** With no coordinator anywhere there is no one to hand off to: stop locally so the leave can finish. */
  private async stopAllShardsLocally(): Promise<void> {
    await this.host.stopAll();
    if (this.host.shards.size === 0) this.leave.finish();
  }

  private resolveMode(): RegionMode {
    const known = this.self.known;
    return known !== 'unknown'
      ? known
      : this.self.resolve(memberMap(this.ctx.membership.members()).get(this.ctx.selfKey));
  }

  private send(message: ShardingMessage): void {
    if (this.coordinator !== undefined) this.ctx.send(this.coordinator, message);
  }
}
