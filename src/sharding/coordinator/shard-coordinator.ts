// The shard coordinator of one entity type: a singleton on the oldest Up member that decides every shard's
// home. Regions register with the shards they host (so a coordinator that takes over rebuilds the map from
// live nodes), ask for homes, and take part in hand-offs that the coordinator runs for rebalancing, manual
// moves and graceful leaves. Its state is in memory only: the regions are the source of truth.
//
// This class is the dispatcher: each message and each timer is one dispatch, whose handlers record what they
// decide in one Effects (effects.ts: events applied to the one state, sends, timers), run once they return.
// Handlers: hand-offs.ts (the protocol), allocation.ts (homes, through the strategy), operator-requests.ts,
// membership.ts (the warm-up gate, the down-removal margin, the failover report); state.ts holds the state and
// its events; insight.ts answers explain and dry runs. Below the class: the coordinator's settings and stats,
// and buildParts, which makes the parts it dispatches to.
import { isGone, type MemberInfo } from '../../cluster/member.js';
import type { Cancellable, Scheduler } from '../../cluster/scheduler.js';
import type { Logger } from '../../logging.js';
import { Allocator, ShardHomes } from './allocation.js';
import {
  UNTRACED_OLDER_MEMBERS,
  olderMembersGoneSince,
  DownRemovalMargin,
  memberMap,
  FailoverReport,
  WarmUpGate,
} from './membership.js';
import { Dispatcher, type CoordinatorReport, type CoordinatorTimer, type Effects } from './effects.js';
import { HandOffs } from './hand-offs.js';
import { HandOffStates } from './hand-off-states.js';
import { CoordinatorCordons, OperatorRequests } from './operator-requests.js';
import { CoordinatorState } from './state.js';
import type { InsightRequest } from '../protocol/insight-messages.js';
import type { ShardingMessage, TypedShardingMessage } from '../protocol/messages.js';
import type { ShardingContext, DeliveryEvents } from '../core/sharding-context.js';
import type { NodeAddress } from '../../cluster/address.js';
import type { ProbeResult } from '../../cluster/transport/transport.js';
import { oldestUpMember } from '../../cluster/member-order.js';
import { type InsightSettings, coordinatorInsight } from './insight.js';
import { NO_CORDONS } from '../placements/cordon-view.js';

export class ShardCoordinator {
  private readonly state: CoordinatorState;
  private readonly gate: WarmUpGate;
  private readonly margin: DownRemovalMargin;
  private readonly operator: OperatorRequests;
  private readonly insight: (request: InsightRequest) => ShardingMessage;
  private readonly handOffs: HandOffs;
  private readonly states: HandOffStates; // entity state between the old host's stop and the new home's start
  private readonly allocator: Allocator;
  private readonly homes: ShardHomes;
  private readonly failovers: FailoverReport;
  private readonly scheduler: Scheduler;
  private readonly timers: Cancellable[] = [];
  private readonly dispatcher: Dispatcher;
  private rebalanceQueued = false;
  private stopped = false;
  private rebalanceRounds = 0;

  constructor(
    readonly settings: CoordinatorConfig,
    private readonly ctx: ShardingContext,
    private readonly logger: Logger,
  ) {
    // The clock and every timer (retry, rebalance, warm-up, margin, hand-offs): the node's, which tests replace.
    this.scheduler = ctx.scheduler;
    const parts = buildParts(settings, ctx, logger, this.scheduler, {
      membershipChanged: () => this.onMembershipChange(),
    });
    ({ state: this.state, gate: this.gate, margin: this.margin, operator: this.operator } = parts);
    ({ insight: this.insight, handOffs: this.handOffs, states: this.states, allocator: this.allocator } = parts);
    ({ homes: this.homes, failovers: this.failovers } = parts);
    this.dispatcher = new Dispatcher(
      this.state,
      this.scheduler,
      {
        send: (to, message) => ctx.send(to, message),
        report: (report) => this.reported(report),
      },
      (fx, timer) => this.fired(fx, timer),
    );
  }

  /** A dispatch's report, to whoever listens (the events of the settings; the node's wiring). */
  private reported(report: CoordinatorReport): void {
    const { events, typeName } = this.settings;
    switch (report.kind) {
      case 'hand-off-completed':
        return events?.onHandOffCompleted?.(typeName, report.seconds);
      case 'entities-lost':
        return events?.onEntitySnapshots?.(typeName, 'lost', report.entities);
      case 'failover-step':
        return events?.onFailoverStep?.(report.member, report.phase);
      case 'rebalance-round':
        return events?.onRebalanceRound?.(typeName);
      case 'region-added':
        // After the dispatch and its sends: the callback may start a rebalance, a dispatch of its own.
        return queueMicrotask(() => this.settings.onRegionAdded?.());
    }
  }

  get typeName(): string {
    return this.settings.typeName;
  }

  start(): void {
    const { retryIntervalMs, rebalanceIntervalMs, coordinatorWarmupMs } = this.ctx.config;
    this.logger.info({ warmupMs: coordinatorWarmupMs }, 'coordinator started');
    this.timers.push(this.scheduler.setInterval(() => this.retry(), retryIntervalMs));
    this.timers.push(this.scheduler.setInterval(() => this.rebalanceRound(), rebalanceIntervalMs));
    this.dispatch((fx) => this.started(fx));
  }

  private started(fx: Effects): void {
    this.warmed(fx, this.gate.start(fx));
    const members = this.ctx.membership.members();
    // Regions re-register on seeing the coordinator move; this covers a coordinator restarted on the same node.
    const live = members.filter((member) => !isGone(member.status));
    for (const member of live)
      fx.send(member.address.toString(), { type: 'RegisterRequired', typeName: this.typeName });
    // Members already down get the rest of their margin, from when their downing was decided; older members
    // gone from the view from when the cluster saw them leave, or a full one from now (olderMembersGoneSince).
    const now = this.scheduler.now();
    this.margin.sawDown(members, now);
    const departed = this.ctx.membership.departed?.() ?? [];
    const since = olderMembersGoneSince(members, departed, this.ctx.self.toString(), now);
    if (since !== undefined) this.margin.sawGone(UNTRACED_OLDER_MEMBERS, since);
    const keys = memberMap(members);
    this.margin.schedule(fx, now, (key) => !keys.has(key) && !this.state.isRegion(key));
    this.warmed(fx, this.gate.check(fx));
    this.allocator.scheduleChange(fx);
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const timer of this.timers.splice(0)) timer.cancel();
    this.gate.stop();
    this.margin.stop();
    this.dispatcher.dispatch((fx) => this.handOffs.stop(fx));
    this.dispatcher.timers.cancelAll();
    this.states.clear();
    this.logger.info('coordinator stopped');
  }

  stats(): CoordinatorStats {
    const counts = this.state.counts;
    const handOffs = this.handOffs.counters;
    return {
      regions: counts.regions,
      proxies: counts.proxies,
      allocatedShards: counts.allocatedShards,
      warm: this.gate.isWarm,
      rebalanceInProgress: counts.handOffs,
      ...this.allocator.counters,
      rebalanceRounds: this.rebalanceRounds,
      handOffsStarted: handOffs.started,
      handOffsCompleted: handOffs.completed,
      handOffsTimedOut: handOffs.timedOut,
      waitingShards: this.state.waiting('no-home').length,
      handOffStateBytes: this.states.bytes,
    };
  }

  handle(from: string, message: TypedShardingMessage): void {
    if (this.stopped) return;
    this.dispatch((fx) => this.receive(fx, from, message));
  }

  private receive(fx: Effects, from: string, message: TypedShardingMessage): void {
    switch (message.type) {
      case 'RegisterRegion':
        return this.onRegister(fx, from, message);
      case 'GetShardHome':
        return this.onGetShardHome(fx, from, message.shardId);
      case 'ShardStarted':
        return this.onShardStarted(fx, from, message.shardId);
      case 'BeginHandOffAck':
        return this.homes.freedAll(fx, this.handOffs.acknowledged(fx, from, message.shardId));
      case 'ShardStateChunk':
        // Sent before the owner's ShardStopped, on the same connection.
        return this.states.chunk(fx, from, this.state.handOff(message.shardId), message);
      case 'ShardStopped': {
        fx.send(from, { ...message, type: 'ShardStoppedAck' });
        const { to } = this.state.handOff(message.shardId) ?? {};
        const freed = this.handOffs.stopped(fx, from, message.shardId, message.handOffId);
        // Its state went where the HandOff said (a region of protocol 10 obeys `to`), not here.
        if (to !== undefined && freed.length > 0)
          this.states.sentDirect(fx, message.shardId, from, message.handOffId, to);
        return this.homes.freedAll(fx, freed);
      }
      case 'ShardStateHeld': {
        if (!this.state.isRegion(from)) return;
        const inTransit = this.states.inTransit(fx, message.shardId, from);
        return this.handOffs.stateHeld(fx, from, message.shardId, message.handOffId, inTransit);
      }
      case 'GracefulShutdownRequest':
        return this.onGracefulShutdown(fx, from);
      // Operator requests: each answer needs the full map, so each waits until the coordinator is warm.
      case 'GetShardLocations':
        return this.whenWarm((fx) => this.operator.shardLocations(fx, from, message.requestId));
      case 'RebalanceNow':
        return this.whenWarm((fx) => this.operator.rebalanceNow(fx, from, message.requestId, message.shardIds));
      case 'RequestRebalance':
        return this.whenWarm((fx) => {
          this.rebalanceRound();
          fx.send(from, { type: 'RebalanceRequested', typeName: this.typeName, requestId: message.requestId });
        });
      case 'ExplainShard':
      case 'DryRunPlacements':
      case 'DryRunRebalance':
        return this.whenWarm((fx) => fx.send(from, this.insight(message)));
      case 'DrainRegion':
        return this.whenWarm((fx) => this.operator.drain(fx, from, message.requestId, message.region));
      default:
        this.logger.debug({ type: message.type, from }, 'ignored message not meant for the coordinator');
    }
  }

  /** Runs a rebalance round once the coordinator is warm (placements changed); asks again for homeless shards. */
  rebalanceSoon(): void {
    if (this.stopped || this.rebalanceQueued) return;
    if (this.gate.isWarm) {
      this.rebalanceRound();
      this.dispatch((fx) => this.homes.retryWaiting(fx));
      return;
    }
    // One queued round covers every change that arrives during warm-up.
    this.rebalanceQueued = true;
    this.gate.whenWarm(() => {
      this.rebalanceQueued = false;
      this.rebalanceRound();
      this.dispatch((fx) => this.homes.retryWaiting(fx));
    });
  }

  /**
   * Drops the regions of members that are down, removed or gone from the view; their shards lose their
   * home. A member downed by the others keeps its region for downRemovalMarginMs first: its shards are
   * handed off from it, so requests for them wait, a node that is down without knowing it may still stop
   * them and say so, and removing the region at the end of the margin gives each shard its new home.
   */
  onMembershipChange(): void {
    if (this.stopped) return;
    this.dispatch((fx) => this.membershipChanged(fx));
  }

  private membershipChanged(fx: Effects): void {
    const list = this.ctx.membership.members();
    const members = memberMap(list);
    const now = this.scheduler.now();
    // Every record, not one per address: a restarted process's record beside the old one's (sawDown).
    this.margin.sawDown(list, now);
    for (const joined of this.state.early.admitted(members))
      fx.send(joined, { type: 'RegisterRequired', typeName: this.typeName });
    for (const region of this.state.registered()) {
      const member = members.get(region);
      if (member !== undefined && !isGone(member.status)) continue;
      if (!this.state.isShuttingDown(region) && this.state.shardsOf(region).length > 0)
        this.margin.sawGone(region, now);
      if (this.margin.inMargin(region, now)) {
        for (const shardId of this.state.shardsOf(region)) this.handOffs.awaitStop(fx, shardId, region, 'down-margin');
        continue;
      }
      this.removeRegion(fx, region);
    }
    this.margin.schedule(fx, now, (key) => !members.has(key) && !this.state.isRegion(key));
    for (const key of this.gate.trackReturningMembers(fx))
      fx.send(key, { type: 'RegisterRequired', typeName: this.typeName });
    this.warmed(fx, this.gate.check(fx));
    this.homes.flushDeferred(fx);
  }

  /** Where every allocated shard lives, by region (regions without shards included), sorted. */
  locations(): Array<{ address: string; shards: number[] }> {
    return this.state.locations();
  }

  private onRegister(
    fx: Effects,
    from: string,
    registration: Extract<TypedShardingMessage, { type: 'RegisterRegion' }>,
  ): void {
    const { proxy, shards, stopping, retained } = registration;
    const member = this.ctx.membership.members().find((m) => m.address.toString() === from);
    if (member === undefined || isGone(member.status)) {
      if (member === undefined) this.state.early.note(from);
      return this.logger.debug({ from }, 'registration from a node that is not a live member ignored');
    }
    if (proxy) {
      fx.apply({ type: 'ProxyRegistered', region: from });
    } else {
      if (!this.state.isRegion(from)) {
        fx.apply({ type: 'RegionRegistered', region: from });
        this.logger.info({ region: from, shards: shards.length }, 'region registered');
        fx.report({ kind: 'region-added' });
      }
      this.homes.claimAll(fx, from, shards, this.settings.numberOfShards);
      for (const shardId of stopping) this.handOffs.adoptStopping(fx, from, shardId);
      for (const { shardId, handOffId } of retained)
        this.handOffs.stateHeld(fx, from, shardId, handOffId, this.states.inTransit(fx, shardId, from));
    }
    fx.send(from, { type: 'RegisterAck', typeName: this.typeName });
    this.warmed(fx, this.gate.check(fx));
    this.homes.flushDeferred(fx);
  }

  private onGetShardHome(fx: Effects, from: string, shardId: number): void {
    if (!this.state.isRegistered(from)) return fx.send(from, { type: 'RegisterRequired', typeName: this.typeName });
    const { numberOfShards } = this.settings;
    if (shardId >= numberOfShards)
      return this.logger.warn({ shardId, from, numberOfShards }, 'home requested for a shard out of range');
    // A shard being handed off is answered by the ShardHome broadcast that ends the hand-off.
    if (this.state.isHandingOff(shardId)) return;
    const home = this.state.homeOf(shardId);
    if (home !== undefined) fx.send(from, { type: 'ShardHome', typeName: this.typeName, shardId, region: home });
    else if (!this.gate.open) this.homes.defer(fx, shardId, from);
    else this.homes.allocateAndAnnounce(fx, shardId, [from]);
  }

  /**
   * A region started a shard, or runs one while told of another home. Only the known home may run it: a
   * copy started by a stale ShardHome or HostShard (delivered after a hand-off moved the shard on), or a
   * second copy after a failover, is handed off. A start of a shard with no home and no hand-off is
   * adopted, as a registration would be.
   */
  private onShardStarted(fx: Effects, from: string, shardId: number): void {
    fx.apply({ type: 'ShardStarted', region: from, shardId });
    this.failovers.shardStarted(fx, from, shardId);
    const home = this.state.homeOf(shardId);
    if (home === from) return this.states.started(fx, shardId);
    if (home !== undefined) {
      // A ShardHome naming the real home would not do: a region never stops a running shard on a ShardHome
      // (a stale one could name anybody).
      this.logger.warn({ shardId, home, copy: from }, 'a region runs a shard homed elsewhere; stopping that copy');
      this.handOffs.stopCopy(fx, from, shardId);
      return;
    }
    this.homes.adopt(fx, from, shardId);
  }

  private onGracefulShutdown(fx: Effects, from: string): void {
    if (!this.state.isRegion(from)) {
      fx.send(from, { type: 'RegisterRequired', typeName: this.typeName });
      return;
    }
    if (!this.state.isShuttingDown(from)) {
      fx.apply({ type: 'RegionLeaving', region: from });
      this.logger.info({ region: from }, 'region leaving: handing off its shards');
    }
    fx.send(from, { type: 'GracefulShutdownAck', typeName: this.typeName });
    for (const shardId of this.state.shardsOf(from)) this.handOffs.begin(fx, shardId, 'leave');
  }

  /** One rebalance round: the strategy names shards to move, each gets a hand-off. */
  private rebalanceRound(): void {
    if (this.stopped || !this.gate.isWarm) return;
    this.dispatch((fx) => this.runRebalanceRound(fx));
  }

  private runRebalanceRound(fx: Effects): void {
    this.rebalanceRounds++;
    fx.report({ kind: 'rebalance-round' });
    for (const shardId of this.allocator.shardsToRebalance()) this.handOffs.begin(fx, shardId, 'rebalance');
    // A placement change reaches the strategy through a round: its next expiry may have changed too.
    this.allocator.scheduleChange(fx);
  }

  private removeRegion(fx: Effects, region: string): void {
    const shards = this.state.shardsOf(region);
    fx.apply({ type: 'RegionTerminated', region });
    this.logger.info({ region, shards: shards.length }, 'region removed; its shards get new homes now');
    this.failovers.regionRemoved(fx, region, shards);
    // Its hand-offs complete, each shard freed and re-homed; the rest of its shards are re-homed with them.
    this.homes.freedAll(fx, this.handOffs.regionGone(fx, region));
    this.states.regionGone(fx, region);
    this.homes.rehome(fx, shards);
  }

  private retry(): void {
    if (this.stopped) return;
    this.dispatch((fx) => this.retryTick(fx));
  }

  private retryTick(fx: Effects): void {
    this.allocator.resendStarts(fx);
    this.handOffs.resend(fx);
    if (this.gate.isWarm) return;
    const unregistered = [...this.gate.expectedRegions()].filter((member) => !this.state.isRegistered(member));
    for (const member of unregistered) fx.send(member, { type: 'RegisterRequired', typeName: this.typeName });
  }

  /** The gate opened (`reason`, when it did): requests deferred until then are answered, queued actions run. */
  private warmed(fx: Effects, reason: string | undefined): void {
    if (reason === undefined) return;
    this.onWarm(fx, reason);
    for (const action of this.gate.takeQueued()) action();
  }

  private onWarm(fx: Effects, reason: string): void {
    const { regions, allocatedShards } = this.state.counts;
    this.logger.info({ reason, regions, shards: allocatedShards }, 'coordinator ready');
    if (this.gate.unknownHostsUnreachable()) {
      this.logger.warn(
        'an unreachable member has not registered: shards never heard of wait until it registers or is downed',
      );
    }
    this.homes.flushDeferred(fx);
  }

  /** A timer an effect started fired, in a dispatch of its own. */
  private fired(fx: Effects, timer: CoordinatorTimer): void {
    if (this.stopped) return;
    if (timer.type === 'hand-off-timeout') return this.handOffs.timeOut(fx, timer.shardId, timer.id);
    if (timer.type === 'warm-up') return this.warmed(fx, this.gate.elapsed());
    if (timer.type === 'margin-ended') return this.membershipChanged(fx);
    // The strategy's answers changed by time (a pin expired): a round, waiting shards asked again, and the
    // timer armed for the change after.
    this.logger.info('a placement rule expired: rebalancing now');
    this.rebalanceRound();
    this.homes.retryWaiting(fx);
    this.allocator.scheduleChange(fx);
  }

  private dispatch(work: (fx: Effects) => void): void {
    this.dispatcher.dispatch(work);
  }

  /** Runs `work` in a dispatch once the coordinator is warm, at once if it is. */
  private whenWarm(work: (fx: Effects) => void): void {
    this.gate.whenWarm(() => this.dispatch(work));
  }
}

// The coordinator's public types: its settings, its stats, and where it runs. Its parts never name them (a part
// takes what it reads, as insight.ts's InsightSettings), so they can live beside the class.

/** A coordinator's settings: what its answers read (InsightSettings) and the rest. */
export interface CoordinatorConfig extends InsightSettings {
  readonly typeName: string;
  readonly role: string | undefined;
  /** Called when a region registers for the first time (a new candidate may be the target of a pin). */
  readonly onRegionAdded?: () => void;
  /** What the coordinator reports as it happens (metrics). */
  readonly events?: CoordinatorEvents;
  /** Probes a node's address (Transport.probe): a downed member confirmed dead needs no removal margin. */
  readonly probe?: (to: NodeAddress) => Promise<ProbeResult>;
}

/** Events a coordinator reports; each must be cheap and must not throw. */
export interface CoordinatorEvents extends DeliveryEvents {
  /** A hand-off of `typeName` ended with the shard stopped, `seconds` after it started. */
  onHandOffCompleted?(typeName: string, seconds: number): void;
  /** The coordinator of `typeName` ran a rebalance round (whether or not it moved anything). */
  onRebalanceRound?(typeName: string): void;
}

/** Statistics of a type's coordinator, on the node that runs it. */
export interface CoordinatorStats {
  /** Non-proxy regions registered. */
  readonly regions: number;
  readonly proxies: number;
  readonly allocatedShards: number;
  /** True once every expected region registered (or the warm-up ended). */
  readonly warm: boolean;
  readonly allocations: number;
  /** Strategy results that were not a current candidate (or threw) and were replaced by a candidate. */
  readonly invalidAllocations: number;
  readonly rebalanceRounds: number;
  readonly rebalanceInProgress: number;
  readonly handOffsStarted: number;
  readonly handOffsCompleted: number;
  readonly handOffsTimedOut: number;
  /** Shards the strategy has no home for now (a require pin no candidate satisfies), waiting for a change. */
  readonly waitingShards: number;
  /** Entity state held for shards between their old host's stop and their new home's start. */
  readonly handOffStateBytes: number;
}

/** Which node runs the coordinator of a type: the cluster's singleton placement, the oldest Up member with the role. */
export function coordinatorNode(members: ReadonlyArray<MemberInfo>, role: string | undefined): MemberInfo | undefined {
  return oldestUpMember(members, role);
}

// Builds the parts a coordinator dispatches to, in dependency order, each given the concrete parts it reads
// (no ports: a call lands on the code that answers it). The parts record what they decide in the dispatch's
// Effects; the one call back is an input: a member's death confirmed by a probe.

/** Inputs that reach the coordinator from outside a dispatch. */
export interface CoordinatorInputs {
  /** A member's death was confirmed (its margin ended): the membership check runs again. */
  membershipChanged(): void;
}

export interface CoordinatorParts {
  readonly state: CoordinatorState;
  readonly gate: WarmUpGate;
  readonly margin: DownRemovalMargin;
  readonly operator: OperatorRequests;
  /** The answer to an explain or dry-run request, changing nothing (insight.ts). */
  readonly insight: (request: InsightRequest) => ShardingMessage;
  readonly handOffs: HandOffs;
  /** Entity state between the old host's stop and the new home's start. */
  readonly states: HandOffStates;
  readonly allocator: Allocator;
  readonly homes: ShardHomes;
  readonly failovers: FailoverReport;
}

/** The parts of one coordinator, over one state. */
export function buildParts(
  settings: CoordinatorConfig,
  ctx: ShardingContext,
  logger: Logger,
  scheduler: Scheduler,
  inputs: CoordinatorInputs,
): CoordinatorParts {
  const { typeName, role, strategy, events } = settings;
  const { config } = ctx;
  const state = new CoordinatorState(() => scheduler.now());
  const basics = { typeName, state, logger };
  const members = () => ctx.membership.members();
  const states = new HandOffStates({ typeName, maxBytes: config.maxHandOffStateBytes, logger });
  const cordons = new CoordinatorCordons(settings.cordons ?? NO_CORDONS, () => scheduler.now());
  const allocator = new Allocator({ ...basics, role, strategy, cordons, members, states });
  const margin = new DownRemovalMargin(config.downRemovalMarginMs, scheduler, {
    confirmed: () => inputs.membershipChanged(),
    ...(settings.probe === undefined ? {} : { probe: settings.probe }),
  });
  const now = (): number => scheduler.now();
  const gate = new WarmUpGate({ role, warmupMs: config.coordinatorWarmupMs, logger, members, state, margin, now });
  const homes = new ShardHomes({ typeName, logger, allocator, gate, states });
  const handOffs = new HandOffs({
    typeName,
    logger,
    now: () => scheduler.now(),
    timeoutMs: config.handOffTimeoutMs,
    numberOfShards: settings.numberOfShards,
    likelyHome: (shardId, owner) => allocator.likelyHome(shardId, owner),
    isCandidate: (region) => allocator.isCandidate(region),
    protocolWith: (node) => ctx.protocolWith?.(node),
  });
  const { numberOfShards } = settings;
  const operator = new OperatorRequests({ typeName, numberOfShards, strategy, logger, cordons, handOffs, allocator });
  const insight = coordinatorInsight(settings, state, { candidates: () => allocator.candidates(), members, now });
  const failovers = new FailoverReport(events?.onFailoverStep !== undefined);
  return {
    state,
    gate,
    margin,
    operator,
    insight,
    handOffs,
    states,
    allocator,
    homes,
    failovers,
  };
}
