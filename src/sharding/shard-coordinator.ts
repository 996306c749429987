// The shard coordinator of one entity type: a singleton on the oldest Up member that decides every shard's
// home. Regions register with the shards they host (so a coordinator that takes over rebuilds the map from
// live nodes), ask for homes, and take part in hand-offs that the coordinator runs for rebalancing, manual
// moves and graceful leaves. Its state is in memory only: the regions are the source of truth.
import { randomInt } from 'node:crypto';
import { NodeAddress } from '../cluster/address.js';
import { oldestUpMember } from '../cluster/member-order.js';
import type { MemberInfo, MemberStatus } from '../cluster/member.js';
import type { Logger } from '../logging.js';
import type { ShardingMessage, TypedShardingMessage } from './messages.js';
import type { ShardingContext } from './shard-region.js';
import type { AllocationStrategy } from './strategies/index.js';

export interface CoordinatorSettings {
  readonly typeName: string;
  readonly numberOfShards: number;
  readonly role: string | undefined;
  readonly strategy: AllocationStrategy;
  /** Called when a region registers for the first time (a new candidate may be the target of a pin). */
  readonly onRegionAdded?: () => void;
}

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
}

/** Which node runs the coordinator of a type: the cluster's singleton placement, the oldest Up member with the role. */
export function coordinatorNode(members: ReadonlyArray<MemberInfo>, role: string | undefined): MemberInfo | undefined {
  return oldestUpMember(members, role);
}

interface HandOffState {
  readonly shardId: number;
  /** Sent with HandOff and echoed by ShardStopped: only the report of this very stop ends the hand-off. */
  readonly id: number;
  readonly owner: string;
  phase: 'begin' | 'handoff';
  /** Regions (and proxies) that have not yet acknowledged BeginHandOff. */
  readonly pendingAcks: Set<string>;
  readonly timer: NodeJS.Timeout;
}

/** How many RebalanceNow answers are kept for repeated requests. */
const REMEMBERED_ANSWERS = 256;
/** Members whose regions are gone for good. */
const GONE: ReadonlySet<MemberStatus> = new Set<MemberStatus>(['down', 'removed']);
/** Members whose regions may still host shards a new coordinator must hear about before allocating. */
const MAY_HOST: ReadonlySet<MemberStatus> = new Set<MemberStatus>(['up', 'leaving', 'exiting']);

export class ShardCoordinator {
  /** Non-proxy regions and their shards, each set in allocation order (oldest first). */
  private readonly regions = new Map<string, Set<number>>();
  private readonly proxies = new Set<string>();
  private readonly homes = new Map<number, string>();
  /** Shards sent HostShard and not yet confirmed with ShardStarted. */
  private readonly hostPending = new Map<number, string>();
  private readonly handOffs = new Map<number, HandOffState>();
  private readonly shuttingDown = new Set<string>();
  /** GetShardHome requests for never-seen shards that arrived during warm-up. */
  private readonly deferred = new Map<number, Set<string>>();
  /** Recent RebalanceNow answers by requester and request id, oldest first. */
  private readonly rebalanceAnswers = new Map<string, ShardingMessage>();
  /** Operator requests that arrived during warm-up (their answers need the full map). */
  private readonly afterWarmup: Array<() => void> = [];
  /** Members last seen unreachable and unregistered (they may host shards this coordinator never heard of). */
  private readonly awaitedUnreachable = new Set<string>();
  private warm = false;
  private rebalanceQueued = false;
  /**
   * The next hand-off id. Random start, so ids of earlier coordinators (whose HandOffs a region may still
   * answer late) do not collide with this one's.
   */
  private nextHandOffId = randomInt(1, 2 ** 47);
  private stopped = false;
  private warmupTimer: NodeJS.Timeout | undefined;
  private marginTimer: NodeJS.Timeout | undefined;
  // When this coordinator first saw each member down: see inDownRemovalMargin.
  private readonly downSince = new Map<string, number>();
  private retryTimer: NodeJS.Timeout | undefined;
  private rebalanceTimer: NodeJS.Timeout | undefined;
  private readonly counters = {
    allocations: 0,
    invalidAllocations: 0,
    rebalanceRounds: 0,
    handOffsStarted: 0,
    handOffsCompleted: 0,
    handOffsTimedOut: 0,
  };

  constructor(
    readonly settings: CoordinatorSettings,
    private readonly ctx: ShardingContext,
    private readonly logger: Logger,
  ) {}

  get typeName(): string {
    return this.settings.typeName;
  }

  start(): void {
    const { retryIntervalMs, rebalanceIntervalMs, coordinatorWarmupMs } = this.ctx.config;
    this.logger.info({ warmupMs: coordinatorWarmupMs }, 'coordinator started');
    this.retryTimer = setInterval(() => this.retry(), retryIntervalMs);
    this.rebalanceTimer = setInterval(() => this.rebalanceRound(), rebalanceIntervalMs);
    this.warmupTimer = setTimeout(() => this.becomeWarm('warm-up time elapsed'), coordinatorWarmupMs);
    for (const timer of [this.retryTimer, this.rebalanceTimer, this.warmupTimer]) timer.unref?.();
    // Regions re-register on seeing the coordinator move; this covers a coordinator restarted on the same node.
    for (const member of this.ctx.membership.members()) {
      if (!GONE.has(member.status)) this.send(member.address.toString(), { type: 'RegisterRequired', typeName: this.typeName });
    }
    for (const key of this.unregisteredUnreachable()) this.awaitedUnreachable.add(key);
    // Members already down when this coordinator starts get their margin from now: it cannot know more.
    const now = Date.now();
    for (const member of this.ctx.membership.members()) if (member.status === 'down') this.downSince.set(member.address.toString(), now);
    this.scheduleMarginEnd(now);
    this.checkWarm();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.retryTimer);
    clearInterval(this.rebalanceTimer);
    clearTimeout(this.warmupTimer);
    clearTimeout(this.marginTimer);
    for (const handOff of this.handOffs.values()) clearTimeout(handOff.timer);
    this.handOffs.clear();
    this.logger.info('coordinator stopped');
  }

  stats(): CoordinatorStats {
    return {
      regions: this.regions.size,
      proxies: this.proxies.size,
      allocatedShards: this.homes.size,
      warm: this.warm,
      rebalanceInProgress: this.handOffs.size,
      ...this.counters,
    };
  }

  handle(from: string, message: TypedShardingMessage): void {
    if (this.stopped) return;
    switch (message.type) {
      case 'RegisterRegion':
        this.onRegister(from, message.proxy, message.shards, message.stopping);
        return;
      case 'GetShardHome':
        this.onGetShardHome(from, message.shardId);
        return;
      case 'ShardStarted':
        this.onShardStarted(from, message.shardId);
        return;
      case 'BeginHandOffAck':
        this.onBeginHandOffAck(from, message.shardId);
        return;
      case 'ShardStopped': {
        const handOff = this.handOffs.get(message.shardId);
        // Only the owner's answer to this hand-off's HandOff ends it. Anything else (a copy stopping elsewhere,
        // a late or duplicated report of an earlier stop, one answering a former coordinator) is no news, and
        // acting on it could allocate a shard that still runs.
        if (handOff !== undefined && handOff.phase === 'handoff' && handOff.owner === from && handOff.id === message.handOffId) {
          this.finishHandOff(handOff, true);
        }
        return;
      }
      case 'GracefulShutdownRequest':
        this.onGracefulShutdown(from);
        return;
      case 'GetShardLocations':
        this.whenWarm(() =>
          this.send(from, {
            type: 'ShardLocations',
            typeName: this.typeName,
            requestId: message.requestId,
            regions: this.locations(),
            handingOff: [...this.handOffs.keys()].sort((a, b) => a - b),
          }),
        );
        return;
      case 'RebalanceNow':
        this.whenWarm(() => this.onRebalanceNow(from, message.requestId, message.shardIds));
        return;
      case 'RequestRebalance':
        this.whenWarm(() => {
          this.rebalanceRound();
          this.send(from, { type: 'RebalanceRequested', typeName: this.typeName, requestId: message.requestId });
        });
        return;
      default:
        this.logger.debug({ type: message.type, from }, 'ignored message not meant for the coordinator');
    }
  }

  /** Runs a rebalance round as soon as the coordinator is warm (explicit placements changed). */
  rebalanceSoon(): void {
    if (this.stopped || this.rebalanceQueued) return;
    if (this.warm) {
      this.rebalanceRound();
      return;
    }
    // One queued round covers every change that arrives during warm-up.
    this.rebalanceQueued = true;
    this.afterWarmup.push(() => {
      this.rebalanceQueued = false;
      this.rebalanceRound();
    });
  }

  /**
   * Drops the regions of members that are down, removed or gone from the view; their shards lose their
   * home. A member downed by the others keeps its region for downRemovalMarginMs first.
   */
  onMembershipChange(): void {
    if (this.stopped) return;
    const members = this.memberMap();
    const now = Date.now();
    for (const [key, member] of members) if (member.status === 'down' && !this.downSince.has(key)) this.downSince.set(key, now);
    for (const region of [...this.regions.keys(), ...this.proxies]) {
      const member = members.get(region);
      if (member !== undefined && !GONE.has(member.status)) continue;
      // Gone while still holding shards it did not hand off: downed by the others, whether this view shows
      // it down or, the leader having removed it in the same gossip round, not at all any more.
      if (!this.downSince.has(region) && !this.shuttingDown.has(region) && (this.regions.get(region)?.size ?? 0) > 0) {
        this.downSince.set(region, now);
      }
      if (this.inDownRemovalMargin(region, now)) {
        this.awaitStopOnDownRegion(region);
        continue;
      }
      this.removeRegion(region);
    }
    this.scheduleMarginEnd(now, members);
    this.trackReturningMembers();
    this.checkWarm();
    this.flushDeferred();
  }

  /** Where every allocated shard lives, by region (regions without shards included), sorted. */
  locations(): Array<{ address: string; shards: number[] }> {
    return [...this.regions]
      .map(([address, shards]) => ({ address, shards: [...shards].sort((a, b) => a - b) }))
      .sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  }

  private onRegister(from: string, proxy: boolean, shards: ReadonlyArray<number>, stopping: ReadonlyArray<number>): void {
    const member = this.memberMap().get(from);
    if (member === undefined || GONE.has(member.status)) {
      this.logger.debug({ from }, 'registration from a node that is not a live member ignored');
      return;
    }
    if (proxy) {
      this.proxies.add(from);
    } else {
      let owned = this.regions.get(from);
      if (owned === undefined) {
        owned = new Set();
        this.regions.set(from, owned);
        this.logger.info({ region: from, shards: shards.length }, 'region registered');
        queueMicrotask(() => this.settings.onRegionAdded?.());
      }
      for (const shardId of shards) {
        if (shardId >= this.settings.numberOfShards) continue;
        const home = this.homes.get(shardId);
        if (home === undefined) {
          this.homes.set(shardId, from);
          owned.add(shardId);
        } else if (home !== from) {
          // Two regions claim one shard: the home already known wins, and the news makes the other stop its copy.
          this.logger.warn({ shardId, home, claimant: from }, 'shard claimed by two regions');
          this.send(from, { type: 'ShardHome', typeName: this.typeName, shardId, region: home });
        }
        if (this.hostPending.get(shardId) === from) this.hostPending.delete(shardId);
      }
      for (const shardId of stopping) this.adoptStopping(from, shardId);
    }
    this.send(from, { type: 'RegisterAck', typeName: this.typeName });
    this.checkWarm();
    this.flushDeferred();
  }

  /**
   * A region reports a shard it is still stopping (a former coordinator handed it off and was lost before
   * the ShardStopped). Its entities may run until then, so the shard is treated as being handed off from
   * that region: not allocatable, its GetShardHome requests wait, and it is allocated once that region
   * answers this coordinator's HandOff with ShardStopped, or is removed. A shard with a known home is left
   * alone: the claim is stale (a repeated registration) or about a copy already told to stop, and a live
   * home must never be erased.
   */
  private adoptStopping(from: string, shardId: number): void {
    if (shardId >= this.settings.numberOfShards || this.homes.has(shardId) || this.handOffs.has(shardId)) return;
    this.logger.info({ shardId, region: from }, 'shard still stopping on a region: allocating it once it stopped');
    this.trackHandOff(shardId, from, 'handoff', new Set());
  }

  private onGetShardHome(from: string, shardId: number): void {
    if (!this.isRegistered(from)) {
      this.send(from, { type: 'RegisterRequired', typeName: this.typeName });
      return;
    }
    if (shardId >= this.settings.numberOfShards) {
      this.logger.warn({ shardId, from, numberOfShards: this.settings.numberOfShards }, 'home requested for a shard out of range');
      return;
    }
    // A shard being handed off is answered by the ShardHome broadcast that ends the hand-off.
    if (this.handOffs.has(shardId)) return;
    const home = this.homes.get(shardId);
    if (home !== undefined) {
      this.send(from, { type: 'ShardHome', typeName: this.typeName, shardId, region: home });
      return;
    }
    if (!this.warm || this.unknownHostsUnreachable()) {
      const waiting = this.deferred.get(shardId) ?? new Set<string>();
      waiting.add(from);
      this.deferred.set(shardId, waiting);
      return;
    }
    this.allocateAndAnnounce(shardId, [from]);
  }

  /**
   * True while a member that may host shards of this type is unreachable and has not registered: it may run
   * any shard this coordinator has never heard of (the coordinator moved while it was cut off), so giving
   * such a shard a home now could run it twice. The wait ends when the member registers (it is reachable
   * again) or is downed (keep-majority downing bounds it by downAfterMs; a minority side downs itself).
   */
  private unknownHostsUnreachable(): boolean {
    if (this.unregisteredUnreachable().length > 0) return true;
    // Just downed and never registered with this coordinator: it may still run shards nobody here knows of.
    const now = Date.now();
    return [...this.downSince.keys()].some((key) => !this.isRegistered(key) && this.inDownRemovalMargin(key, now));
  }

  /**
   * The shards of a region kept through its member's removal margin are handed off from it: requests for
   * them wait, a node that is down without knowing it may still stop them and say so, and removing the
   * region at the end of the margin completes the hand-off and gives each shard its new home.
   */
  private awaitStopOnDownRegion(region: string): void {
    for (const shardId of this.regions.get(region) ?? []) {
      if (!this.handOffs.has(shardId)) this.trackHandOff(shardId, region, 'handoff', new Set());
    }
  }

  /**
   * True while `member` was seen down less than downRemovalMarginMs ago: a node downed by the others may not
   * know it yet and keeps running its shards until gossip tells it, so they are not started elsewhere.
   */
  private inDownRemovalMargin(member: string, now: number): boolean {
    const since = this.downSince.get(member);
    return since !== undefined && now < since + this.ctx.config.downRemovalMarginMs;
  }

  /** Re-runs the membership check when the earliest margin still running ends; forgets ended ones. */
  private scheduleMarginEnd(now: number, members: ReadonlyMap<string, MemberInfo> = this.memberMap()): void {
    clearTimeout(this.marginTimer);
    let next = Infinity;
    for (const [key, since] of this.downSince) {
      const end = since + this.ctx.config.downRemovalMarginMs;
      if (end > now) next = Math.min(next, end);
      else if (!members.has(key) && !this.regions.has(key)) this.downSince.delete(key);
    }
    if (next === Infinity || this.stopped) return;
    this.marginTimer = setTimeout(() => this.onMembershipChange(), next - now);
    this.marginTimer.unref?.();
  }

  private unregisteredUnreachable(): string[] {
    const role = this.settings.role;
    return this.ctx.membership
      .members()
      .filter(
        (m) =>
          MAY_HOST.has(m.status) &&
          !m.reachable &&
          (role === undefined || (m.roles ?? []).includes(role)) &&
          !this.isRegistered(m.address.toString()),
      )
      .map((m) => m.address.toString());
  }

  /**
   * A member that was unreachable and unregistered is reachable again: its region is about to register the
   * shards it kept running, so the coordinator waits for it once more (bounded by the warm-up time) before
   * it allocates shards it has never heard of.
   */
  private trackReturningMembers(): void {
    const now = new Set(this.unregisteredUnreachable());
    const returning = [...this.awaitedUnreachable].filter((key) => !now.has(key) && this.expectedRegions().includes(key) && !this.isRegistered(key));
    this.awaitedUnreachable.clear();
    for (const key of now) this.awaitedUnreachable.add(key);
    if (returning.length === 0 || !this.warm || this.stopped) return;
    this.warm = false;
    this.logger.info({ members: returning }, 'unregistered members reachable again: waiting for their regions');
    clearTimeout(this.warmupTimer);
    this.warmupTimer = setTimeout(() => this.becomeWarm('warm-up time elapsed'), this.ctx.config.coordinatorWarmupMs);
    this.warmupTimer.unref?.();
    for (const key of returning) this.send(key, { type: 'RegisterRequired', typeName: this.typeName });
  }

  /** Answers the GetShardHome requests that waited for the warm-up or for an unreachable member. */
  private flushDeferred(): void {
    if (!this.warm || this.stopped || this.deferred.size === 0 || this.unknownHostsUnreachable()) return;
    const deferred = [...this.deferred];
    this.deferred.clear();
    for (const [shardId, requesters] of deferred) {
      if (this.handOffs.has(shardId)) continue;
      const home = this.homes.get(shardId);
      if (home === undefined) this.allocateAndAnnounce(shardId, requesters);
      else for (const requester of requesters) this.send(requester, { type: 'ShardHome', typeName: this.typeName, shardId, region: home });
    }
  }

  private onGracefulShutdown(from: string): void {
    if (!this.regions.has(from)) {
      this.send(from, { type: 'RegisterRequired', typeName: this.typeName });
      return;
    }
    if (!this.shuttingDown.has(from)) this.logger.info({ region: from }, 'region leaving: handing off its shards');
    this.shuttingDown.add(from);
    this.send(from, { type: 'GracefulShutdownAck', typeName: this.typeName });
    for (const shardId of [...(this.regions.get(from) ?? [])]) {
      if (!this.handOffs.has(shardId)) this.startHandOff(shardId);
    }
  }

  private onRebalanceNow(from: string, requestId: number, shardIds: ReadonlyArray<number>): void {
    // A requester re-sends until answered; a repeat whose answer was lost must not move the shards again.
    const key = `${from}#${requestId}`;
    const earlier = this.rebalanceAnswers.get(key);
    if (earlier !== undefined) {
      this.send(from, earlier);
      return;
    }
    const accepted: number[] = [];
    const unknown: number[] = [];
    const homeless: number[] = [];
    for (const shardId of new Set(shardIds)) {
      if (!Number.isInteger(shardId) || shardId < 0 || shardId >= this.settings.numberOfShards) unknown.push(shardId);
      else if (this.handOffs.has(shardId)) accepted.push(shardId);
      else if (!this.homes.has(shardId)) homeless.push(shardId);
      else {
        this.startHandOff(shardId);
        accepted.push(shardId);
      }
    }
    this.logger.info({ accepted, unknown, homeless, from }, 'manual rebalance');
    const answer: ShardingMessage = { type: 'RebalanceNowResult', typeName: this.typeName, requestId, accepted, unknown, homeless };
    this.rebalanceAnswers.set(key, answer);
    if (this.rebalanceAnswers.size > REMEMBERED_ANSWERS) {
      const oldest = this.rebalanceAnswers.keys().next().value;
      if (oldest !== undefined) this.rebalanceAnswers.delete(oldest);
    }
    this.send(from, answer);
  }

  /** One rebalance round: the strategy names shards to move, each gets a hand-off. */
  private rebalanceRound(): void {
    if (this.stopped || !this.warm) return;
    this.counters.rebalanceRounds++;
    const candidates = this.candidates();
    if (candidates.length === 0 || this.homes.size === 0) return;
    let chosen: ReadonlySet<number>;
    try {
      chosen = this.settings.strategy.rebalance(this.currentShards(), candidates, new Set(this.handOffs.keys()));
    } catch (error) {
      this.logger.error({ err: error instanceof Error ? error.message : String(error) }, 'allocation strategy rebalance threw');
      return;
    }
    for (const shardId of chosen) {
      if (this.homes.has(shardId) && !this.handOffs.has(shardId)) this.startHandOff(shardId);
    }
  }

  private startHandOff(shardId: number): void {
    const owner = this.homes.get(shardId);
    if (owner === undefined) return;
    this.trackHandOff(shardId, owner, 'begin', new Set([...this.regions.keys(), ...this.proxies]));
  }

  private trackHandOff(shardId: number, owner: string, phase: HandOffState['phase'], pendingAcks: Set<string>): void {
    const timer = setTimeout(() => {
      const handOff = this.handOffs.get(shardId);
      if (handOff !== undefined) this.finishHandOff(handOff, false);
    }, this.ctx.config.handOffTimeoutMs);
    timer.unref?.();
    const id = this.nextHandOffId;
    this.nextHandOffId = id >= Number.MAX_SAFE_INTEGER ? 1 : id + 1;
    const handOff: HandOffState = { shardId, id, owner, phase, pendingAcks, timer };
    this.handOffs.set(shardId, handOff);
    this.hostPending.delete(shardId);
    this.counters.handOffsStarted++;
    this.logger.debug({ shardId, owner, phase }, 'hand-off started');
    this.sendHandOffMessages(handOff);
  }

  private onBeginHandOffAck(from: string, shardId: number): void {
    const handOff = this.handOffs.get(shardId);
    if (handOff === undefined || handOff.phase !== 'begin') return;
    handOff.pendingAcks.delete(from);
    this.advance(handOff);
  }

  /** Moves to the HandOff phase once every region stopped routing to the shard. */
  private advance(handOff: HandOffState): void {
    if (handOff.phase !== 'begin' || handOff.pendingAcks.size > 0) return;
    handOff.phase = 'handoff';
    if (!this.regions.has(handOff.owner)) {
      this.finishHandOff(handOff, true);
      return;
    }
    this.sendHandOffMessages(handOff);
  }

  private sendHandOffMessages(handOff: HandOffState): void {
    const { shardId } = handOff;
    if (handOff.phase === 'begin') {
      for (const region of handOff.pendingAcks) this.send(region, { type: 'BeginHandOff', typeName: this.typeName, shardId });
    } else {
      this.send(handOff.owner, { type: 'HandOff', typeName: this.typeName, shardId, handOffId: handOff.id });
    }
  }

  /**
   * Ends a hand-off. On success the shard is allocated again at once (through the strategy) and every region
   * learns the new home; on timeout it stays with its owner, and the regions that forgot the home learn it
   * again.
   */
  /**
   * A region started a shard, or runs one while told of another home. Only the known home may run it: a
   * copy started by a stale ShardHome or HostShard (delivered after a hand-off moved the shard on), or a
   * second copy after a failover, is handed off. A start of a shard with no home and no hand-off is
   * adopted, as a registration would be.
   */
  private onShardStarted(from: string, shardId: number): void {
    if (this.hostPending.get(shardId) === from) this.hostPending.delete(shardId);
    const home = this.homes.get(shardId);
    if (home === from) return;
    if (home !== undefined) {
      // A HandOff of its own (an id no hand-off waits for, so its ShardStopped changes nothing here): a
      // ShardHome naming the real home would not do, since a region never stops a running shard on a
      // ShardHome (a stale one could name anybody).
      this.logger.warn({ shardId, home, copy: from }, 'a region runs a shard homed elsewhere; stopping that copy');
      const handOffId = this.nextHandOffId;
      this.nextHandOffId = handOffId >= Number.MAX_SAFE_INTEGER ? 1 : handOffId + 1;
      this.send(from, { type: 'HandOff', typeName: this.typeName, shardId, handOffId });
      return;
    }
    const owned = this.regions.get(from);
    if (owned === undefined || this.handOffs.has(shardId) || this.deferred.has(shardId)) return;
    this.homes.set(shardId, from);
    owned.add(shardId);
  }

  private finishHandOff(handOff: HandOffState, ok: boolean): void {
    const { shardId, owner } = handOff;
    clearTimeout(handOff.timer);
    this.handOffs.delete(shardId);
    if (ok) {
      this.counters.handOffsCompleted++;
      if (this.homes.get(shardId) === owner) this.homes.delete(shardId);
      this.regions.get(owner)?.delete(shardId);
      this.logger.debug({ shardId, from: owner }, 'hand-off complete');
      if (!this.warm || this.unknownHostsUnreachable()) {
        // For the reason GetShardHome waits: a region not heard from yet may run this shard. It is allocated
        // (and announced to whoever asks) once the coordinator is warm.
        if (!this.deferred.has(shardId)) this.deferred.set(shardId, new Set());
        return;
      }
      const region = this.allocate(shardId);
      if (region === undefined) {
        this.logger.info({ shardId }, 'no candidate region after hand-off; the shard is allocated on its next message');
        return;
      }
      this.broadcast({ type: 'ShardHome', typeName: this.typeName, shardId, region });
      return;
    }
    this.counters.handOffsTimedOut++;
    this.logger.warn({ shardId, owner, timeoutMs: this.ctx.config.handOffTimeoutMs }, 'hand-off timed out; shard stays');
    const owned = this.regions.get(owner);
    if (!this.homes.has(shardId) && owned !== undefined) {
      // A shard adopted as stopping has no home yet; its owner may still be stopping it, so it is the only
      // safe home (it restarts the shard there, after the stop, on the next message).
      this.homes.set(shardId, owner);
      owned.add(shardId);
    }
    const home = this.homes.get(shardId);
    if (home !== undefined) this.broadcast({ type: 'ShardHome', typeName: this.typeName, shardId, region: home });
  }

  private allocateAndAnnounce(shardId: number, requesters: Iterable<string>): void {
    const region = this.allocate(shardId);
    // No candidate yet: the requesters keep their messages buffered and ask again on their retry tick.
    if (region === undefined) return;
    for (const requester of requesters) this.send(requester, { type: 'ShardHome', typeName: this.typeName, shardId, region });
  }

  /**
   * Chooses a home through the strategy and records it. A result that is not a current candidate (or a
   * strategy that throws) is a bug in the strategy; it is logged and replaced by the candidate with the
   * fewest shards, because a shard must never be left without a home while candidates exist.
   */
  private allocate(shardId: number): string | undefined {
    const candidates = this.candidates();
    if (candidates.length === 0) return undefined;
    const byKey = new Map(candidates.map((address) => [address.toString(), address]));
    let chosen: string | undefined;
    let problem: string | undefined;
    try {
      const result: unknown = this.settings.strategy.allocate(shardId, candidates, this.currentShards());
      const key = result instanceof NodeAddress ? result.toString() : typeof result === 'string' ? result : undefined;
      if (key !== undefined && byKey.has(key)) chosen = key;
      else problem = `returned ${describe(result)}, which is not a current candidate`;
    } catch (error) {
      problem = `threw: ${error instanceof Error ? error.message : String(error)}`;
    }
    if (chosen === undefined) {
      chosen = this.leastLoaded(candidates);
      this.counters.invalidAllocations++;
      this.logger.error(
        { shardId, candidates: [...byKey.keys()], fallback: chosen },
        `allocation strategy ${problem ?? 'failed'}; using a candidate instead`,
      );
    }
    this.counters.allocations++;
    this.homes.set(shardId, chosen);
    let owned = this.regions.get(chosen);
    if (owned === undefined) {
      owned = new Set();
      this.regions.set(chosen, owned);
    }
    owned.add(shardId);
    this.hostPending.set(shardId, chosen);
    this.send(chosen, { type: 'HostShard', typeName: this.typeName, shardId });
    this.logger.debug({ shardId, region: chosen }, 'shard allocated');
    return chosen;
  }

  private leastLoaded(candidates: ReadonlyArray<NodeAddress>): string {
    let best: string | undefined;
    let bestCount = Infinity;
    for (const address of candidates) {
      const key = address.toString();
      const count = this.regions.get(key)?.size ?? 0;
      if (count < bestCount || (count === bestCount && best !== undefined && key < best)) {
        best = key;
        bestCount = count;
      }
    }
    // candidates is non-empty, so best is set.
    return best ?? String(candidates[0]);
  }

  /** Registered, non-proxy regions on Up members with the type's role that are not leaving. */
  private candidates(): NodeAddress[] {
    const role = this.settings.role;
    const result: NodeAddress[] = [];
    for (const member of this.ctx.membership.members()) {
      const key = member.address.toString();
      if (member.status !== 'up' || !this.regions.has(key) || this.shuttingDown.has(key)) continue;
      if (role !== undefined && !(member.roles ?? []).includes(role)) continue;
      result.push(member.address);
    }
    return result;
  }

  /** A copy for the strategy: it must not see later changes, nor be able to make any. */
  private currentShards(): Map<string, Set<number>> {
    return new Map([...this.regions].map(([key, shards]) => [key, new Set(shards)]));
  }

  private removeRegion(region: string): void {
    const shards = this.regions.get(region) ?? new Set<number>();
    this.regions.delete(region);
    this.proxies.delete(region);
    this.shuttingDown.delete(region);
    for (const shardId of shards) {
      if (this.homes.get(shardId) === region) this.homes.delete(shardId);
      if (this.hostPending.get(shardId) === region) this.hostPending.delete(shardId);
    }
    this.logger.info({ region, shards: shards.size }, 'region removed; its shards are allocated again on next use');
    for (const handOff of [...this.handOffs.values()]) {
      if (handOff.owner === region) {
        // The owner is gone, so its entities are too: the move is complete.
        this.finishHandOff(handOff, true);
      } else if (handOff.pendingAcks.delete(region)) {
        this.advance(handOff);
      }
    }
  }

  private retry(): void {
    if (this.stopped) return;
    for (const [shardId, region] of this.hostPending) this.send(region, { type: 'HostShard', typeName: this.typeName, shardId });
    for (const handOff of this.handOffs.values()) this.sendHandOffMessages(handOff);
    if (!this.warm) {
      for (const member of this.expectedRegions()) {
        if (!this.isRegistered(member)) this.send(member, { type: 'RegisterRequired', typeName: this.typeName });
      }
    }
  }

  /** Reachable members that may host shards of this type; the warm-up waits for their registrations. */
  private expectedRegions(): string[] {
    const role = this.settings.role;
    return this.ctx.membership
      .members()
      .filter((m) => MAY_HOST.has(m.status) && m.reachable && (role === undefined || (m.roles ?? []).includes(role)))
      .map((m) => m.address.toString());
  }

  private checkWarm(): void {
    if (this.warm || this.stopped) return;
    if (this.expectedRegions().every((address) => this.isRegistered(address))) this.becomeWarm('every region registered');
  }

  private becomeWarm(reason: string): void {
    if (this.warm || this.stopped) return;
    this.warm = true;
    clearTimeout(this.warmupTimer);
    this.logger.info({ reason, regions: this.regions.size, shards: this.homes.size }, 'coordinator ready');
    if (this.unknownHostsUnreachable()) {
      this.logger.warn('an unreachable member has not registered: shards never heard of wait until it registers or is downed');
    }
    this.flushDeferred();
    for (const action of this.afterWarmup.splice(0)) action();
  }

  private whenWarm(action: () => void): void {
    if (this.warm) action();
    else this.afterWarmup.push(action);
  }

  private isRegistered(address: string): boolean {
    return this.regions.has(address) || this.proxies.has(address);
  }

  private broadcast(message: ShardingMessage): void {
    for (const region of [...this.regions.keys(), ...this.proxies]) this.send(region, message);
  }

  private memberMap(): Map<string, MemberInfo> {
    const map = new Map<string, MemberInfo>();
    for (const member of this.ctx.membership.members()) map.set(member.address.toString(), member);
    return map;
  }

  private send(to: string, message: ShardingMessage): void {
    this.ctx.send(to, message);
  }
}

function describe(value: unknown): string {
  if (value instanceof NodeAddress) return value.toString();
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === undefined || value === null) return String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
