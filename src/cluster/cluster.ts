// One node's membership in the cluster: joins through seed nodes, gossips the member state, heartbeats
// every member into a failure detector, applies the keep-majority downing rule, runs the leader's status
// transitions, and performs a graceful leave. Sharding consumes it through the `Membership` interface
// plus the self-lifecycle events below (whenUp, onSelfDown, onSelfRemoved).
import { randomUUID } from 'node:crypto';
import { ActorTsError } from '../errors.js';
import { silentLogger, type Logger } from '../logging.js';
import type { NodeAddress } from './address.js';
import { resolveClusterConfig, type ClusterConfig, type ClusterConfigInput } from './config.js';
import { decideDowning } from './downing.js';
import { FailureDetectorRegistry } from './failure-detector.js';
import {
  EMPTY_GOSSIP,
  contentDigest,
  fromWire,
  keyOf,
  memberKey,
  mergeGossip,
  pruneMembers,
  sameGossip,
  statusRank,
  toWire,
  updateMembers,
  type GossipState,
  type MemberRecord,
} from './gossip.js';
import { isConverged, leaderActions, leaderOf } from './leader-actions.js';
import type { MemberInfo, Membership, MemberStatus } from './member.js';
import { compareAddresses } from './member-order.js';
import { CLUSTER_MESSAGES, type ClusterMessage } from './messages.js';
import { isFamilyMessage, type WireMessage } from './wire-message.js';
import { systemScheduler, type Cancellable, type Scheduler } from './scheduler.js';
import type { Transport } from './transport.js';

export interface ClusterOptions {
  readonly transport: Transport;
  readonly config?: ClusterConfigInput;
  /** Clock and timers; default the process's (so `vi.useFakeTimers()` applies). */
  readonly scheduler?: Scheduler;
  /** Default: silent. */
  readonly logger?: Logger;
  /** Source of randomness for the choice of gossip peers; default Math.random. */
  readonly random?: () => number;
  /** Identifies this run of the node; default the transport's incarnation when it has one, else a random UUID. */
  readonly incarnation?: string;
}

/** Why this node was downed: by the cluster's decision (or an operator), or by itself on a minority side. */
export type SelfDownCause = 'downed-by-cluster' | 'minority-side';

const GONE: ReadonlySet<MemberStatus> = new Set<MemberStatus>(['down', 'removed']);

export class Cluster implements Membership {
  readonly self: NodeAddress;
  readonly incarnation: string;
  readonly config: ClusterConfig;

  private readonly transport: Transport;
  private readonly scheduler: Scheduler;
  private readonly logger: Logger;
  private readonly random: () => number;
  private readonly selfKey: string;
  private readonly detectors: FailureDetectorRegistry;

  private gossip: GossipState = EMPTY_GOSSIP;
  private readonly unreachableSince = new Map<string, number>();
  private readonly joiningSince = new Map<string, number>();
  // When this node first saw each member as removed; the record is pruned removedRetentionMs later.
  private readonly removedSince = new Map<string, number>();
  private heartbeatSequence = 0;

  private started = false;
  private joined = false;
  private stopped = false;
  private wasUp = false;
  private downCause: SelfDownCause | undefined;
  private leaving: Promise<void> | undefined;
  private viewDigest = '';

  private readonly timers: Cancellable[] = [];
  private joinTimer: Cancellable | undefined;
  private unsubscribe: (() => void) | undefined;

  private readonly changeListeners = new Set<() => void>();
  private readonly leavingTasks = new Set<() => Promise<void>>();
  private readonly selfDownListeners = new Set<(cause: SelfDownCause) => void>();
  private readonly selfRemovedListeners = new Set<() => void>();
  private readonly upWaiters: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  private readonly stopWaiters: Array<() => void> = [];

  constructor(options: ClusterOptions) {
    this.config = resolveClusterConfig(options.config);
    this.transport = options.transport;
    this.transport.register(CLUSTER_MESSAGES);
    this.self = options.transport.self;
    this.incarnation = options.incarnation ?? options.transport.incarnation ?? randomUUID();
    if (this.incarnation.length === 0 || this.incarnation.length > 128) {
      throw new ActorTsError('invalid_argument', 'incarnation must be 1..128 characters');
    }
    this.scheduler = options.scheduler ?? systemScheduler;
    this.logger = (options.logger ?? silentLogger()).child({ node: this.self.toString() });
    this.random = options.random ?? Math.random;
    this.selfKey = memberKey(this.self, this.incarnation);
    this.detectors = new FailureDetectorRegistry(this.config.failureDetector);
  }

  /** Starts joining through the seed nodes (or forms a cluster, see `ClusterConfig.seedNodes`). Idempotent. */
  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.unsubscribe = this.transport.onMessage((from, message) => this.onMessage(from, message));
    this.timers.push(this.scheduler.setInterval(() => this.heartbeatTick(), this.config.heartbeatIntervalMs));
    this.timers.push(this.scheduler.setInterval(() => this.gossipTick(), this.config.gossipIntervalMs));
    const seeds = this.config.seedNodes;
    const otherSeeds = seeds.filter((s) => !s.equals(this.self));
    const firstSeed = seeds[0];
    if (otherSeeds.length === 0) {
      this.formCluster('no other seed nodes');
      return;
    }
    this.logger.info({ seeds: seeds.map(String) }, 'joining cluster');
    this.sendJoin(otherSeeds);
    this.joinTimer = this.scheduler.setInterval(() => this.sendJoin(otherSeeds), this.config.retryJoinIntervalMs);
    this.timers.push(this.joinTimer);
    if (firstSeed?.equals(this.self)) {
      this.timers.push(
        this.scheduler.setTimeout(() => {
          if (!this.joined && !this.stopped) this.formCluster('no seed node answered within seedNodeTimeoutMs');
        }, this.config.seedNodeTimeoutMs),
      );
    }
  }

  /** Size of the replicated membership state: member records (any status) and tombstones of pruned ones. */
  gossipSize(): { readonly records: number; readonly tombstones: number } {
    return { records: this.gossip.members.size, tombstones: this.gossip.tombstones.size };
  }

  members(): ReadonlyArray<MemberInfo> {
    return [...this.gossip.members.values()]
      .filter((r) => r.status !== 'removed')
      .sort((a, b) => compareAddresses(a.address, b.address) || (a.incarnation < b.incarnation ? -1 : 1))
      .map((r) => this.info(r));
  }

  /** This node as the cluster sees it; undefined before it joined. */
  selfMember(): MemberInfo | undefined {
    const record = this.gossip.members.get(this.selfKey);
    return record ? this.info(record) : undefined;
  }

  /** The current membership leader in this node's view. */
  leader(): NodeAddress | undefined {
    return leaderOf(this.gossip, this.unreachableKeys())?.address;
  }

  /** Whether every live member has seen this node's current membership state. */
  isConverged(): boolean {
    return this.joined && isConverged(this.gossip, this.unreachableKeys());
  }

  onChange(listener: () => void): () => void {
    return subscribe(this.changeListeners, listener);
  }

  onLeaving(task: () => Promise<void>): () => void {
    return subscribe(this.leavingTasks, task);
  }

  /** Fires once when this node is down: it must stop hosting (its shards are taken over elsewhere). */
  onSelfDown(listener: (cause: SelfDownCause) => void): () => void {
    return subscribe(this.selfDownListeners, listener);
  }

  /** Fires once when this node has been removed after a graceful leave. */
  onSelfRemoved(listener: () => void): () => void {
    return subscribe(this.selfRemovedListeners, listener);
  }

  /** Resolves when this node is Up (at once if it already was); rejects if it stops or is downed first. */
  whenUp(): Promise<void> {
    if (this.wasUp) return Promise.resolve();
    if (this.stopped) return Promise.reject(notUp());
    return new Promise((resolve, reject) => this.upWaiters.push({ resolve, reject }));
  }

  /**
   * Graceful leave: runs every onLeaving task (bounded by leaveTimeoutMs), then walks this node through
   * leaving -> exiting -> removed (bounded by exitTimeoutMs) and stops. Calling it again returns the same promise.
   */
  leave(): Promise<void> {
    this.leaving ??= this.runLeave();
    return this.leaving;
  }

  /** Marks every live incarnation of `address` down (an operator's decision); downing self stops this node. */
  down(address: NodeAddress): void {
    if (this.stopped || !this.joined) return;
    const targets = [...this.gossip.members.values()].filter((r) => r.address.equals(address) && !GONE.has(r.status));
    if (targets.length === 0) return;
    this.logger.warn({ member: address.toString() }, 'downing member on request');
    this.applyOwnChanges(targets.map((r) => ({ ...r, status: 'down' as const })));
  }

  /** Stops timers and message handling without leaving (the process is going away or was downed). Idempotent. */
  shutdown(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const timer of this.timers) timer.cancel();
    this.timers.length = 0;
    this.unsubscribe?.();
    for (const waiter of this.upWaiters.splice(0)) waiter.reject(notUp());
    for (const resolve of this.stopWaiters.splice(0)) resolve();
    this.logger.info({ status: this.gossip.members.get(this.selfKey)?.status }, 'cluster membership stopped');
  }

  // ---- message handling --------------------------------------------------------------------------------

  private onMessage(from: NodeAddress, message: WireMessage): void {
    if (this.stopped || !isFamilyMessage(CLUSTER_MESSAGES, message)) return;
    switch (message.type) {
      case 'Heartbeat':
        return this.onHeartbeat(from, message);
      case 'HeartbeatAck': {
        const key = memberKey(from, message.incarnation);
        const record = this.gossip.members.get(key);
        if (record && !GONE.has(record.status)) this.detectors.heartbeat(key, this.scheduler.now());
        return;
      }
      case 'Join':
        return this.onJoin(from, message);
      case 'Gossip':
        return this.onGossip(from, message.gossip);
      default:
        return;
    }
  }

  private onHeartbeat(from: NodeAddress, message: Extract<ClusterMessage, { type: 'Heartbeat' }>): void {
    const key = memberKey(from, message.incarnation);
    const record = this.gossip.members.get(key);
    if ((record && GONE.has(record.status)) || this.gossip.tombstones.has(key)) {
      // A downed or removed node still running: tell it, instead of keeping it alive.
      this.sendGossip(from);
      return;
    }
    this.transport.send(from, { type: 'HeartbeatAck', sequence: message.sequence, incarnation: this.incarnation });
  }

  private onJoin(from: NodeAddress, message: Extract<ClusterMessage, { type: 'Join' }>): void {
    if (!this.joined) return;
    const key = memberKey(from, message.incarnation);
    const existing = this.gossip.members.get(key);
    if ((existing && GONE.has(existing.status)) || this.gossip.tombstones.has(key)) {
      this.logger.info({ member: key, status: existing?.status ?? 'pruned' }, 'ignoring join of a downed or removed incarnation');
      this.sendGossip(from);
      return;
    }
    const changes: MemberRecord[] = [];
    for (const record of this.gossip.members.values()) {
      if (record.address.equals(from) && record.incarnation !== message.incarnation && !GONE.has(record.status)) {
        this.logger.info({ member: keyOf(record) }, 'a new incarnation of this node is joining: downing the old one');
        changes.push({ ...record, status: 'down' });
      }
    }
    if (!existing) {
      this.logger.info({ member: key, appVersion: message.appVersion, roles: message.roles }, 'member joining');
      changes.push({
        address: from,
        incarnation: message.incarnation,
        status: 'joining',
        appVersion: message.appVersion,
        roles: [...message.roles],
        upNumber: 0,
      });
    }
    if (changes.length > 0) this.applyOwnChanges(changes);
    if (!this.stopped) this.sendGossip(from);
  }

  private onGossip(from: NodeAddress, wire: Parameters<typeof fromWire>[0]): void {
    const incoming = fromWire(wire);
    // Gossip that does not know this node is from another cluster, or this node is not welcomed yet.
    if (!incoming.members.has(this.selfKey)) return;
    if (!this.joined) {
      this.joined = true;
      this.joinTimer?.cancel();
      this.logger.info({ via: from.toString() }, 'welcomed into the cluster');
    }
    this.commit(mergeGossip(this.gossip, incoming, this.selfKey), false);
    // Push-pull: answer when this node knows more (or has seen more) than the sender told us.
    if (!this.stopped && !sameGossip(this.gossip, incoming)) this.sendGossip(from);
  }

  // ---- periodic work --------------------------------------------------------------------------------

  private sendJoin(seeds: ReadonlyArray<NodeAddress>): void {
    if (this.joined || this.stopped) return;
    for (const seed of seeds) {
      this.transport.send(seed, {
        type: 'Join',
        incarnation: this.incarnation,
        appVersion: this.config.appVersion,
        roles: [...this.config.roles],
      });
    }
  }

  private formCluster(reason: string): void {
    this.logger.info({ reason }, 'forming a new cluster');
    this.joined = true;
    this.joinTimer?.cancel();
    const record: MemberRecord = {
      address: this.self,
      incarnation: this.incarnation,
      status: 'joining',
      appVersion: this.config.appVersion,
      roles: [...this.config.roles],
      upNumber: 0,
    };
    this.commit({ members: new Map([[this.selfKey, record]]), seen: new Set([this.selfKey]), tombstones: new Map() }, true);
  }

  private heartbeatTick(): void {
    if (!this.joined || this.stopped) return;
    const now = this.scheduler.now();
    for (const [key, record] of this.gossip.members) {
      if (key === this.selfKey || GONE.has(record.status)) continue;
      // Start the clock on first contact, so a member that never answers still becomes unreachable.
      if (!this.detectors.isMonitoring(key)) this.detectors.heartbeat(key, now);
      this.transport.send(record.address, { type: 'Heartbeat', sequence: ++this.heartbeatSequence, incarnation: this.incarnation });
    }
    this.updateReachability(now);
    this.runDowning(now);
    if (!this.stopped) this.commit(this.gossip, false);
  }

  private gossipTick(): void {
    if (!this.joined || this.stopped) return;
    this.pruneRemoved();
    this.commit(this.gossip, false);
    if (this.stopped) return;
    const peers = this.livePeers().filter((r) => !this.unreachableSince.has(keyOf(r)));
    const unseen = peers.filter((r) => !this.gossip.seen.has(keyOf(r)));
    const pool = unseen.length > 0 ? unseen : peers;
    const target = pool[Math.floor(this.random() * pool.length)];
    if (target) this.sendGossip(target.address);
  }

  /** Turns records removed longer than removedRetentionMs into tombstones, and expires old tombstones. */
  private pruneRemoved(): void {
    const now = this.scheduler.now();
    const due: string[] = [];
    for (const [key, record] of this.gossip.members) {
      if (record.status !== 'removed' || key === this.selfKey) continue;
      const since = this.removedSince.get(key) ?? now;
      this.removedSince.set(key, since);
      if (now - since >= this.config.removedRetentionMs) due.push(key);
    }
    for (const key of this.removedSince.keys()) if (due.includes(key) || !this.gossip.members.has(key)) this.removedSince.delete(key);
    const next = pruneMembers(this.gossip, due, now, now - this.config.tombstoneTtlMs, this.selfKey);
    if (next === this.gossip) return;
    if (due.length > 0) this.logger.info({ members: due }, 'pruning removed members from the gossip');
    this.commit(next, false);
  }

  private updateReachability(now: number): void {
    for (const [key, record] of this.gossip.members) {
      if (key === this.selfKey || GONE.has(record.status) || !this.detectors.isMonitoring(key)) continue;
      const available = this.detectors.isAvailable(key, now);
      if (!available && !this.unreachableSince.has(key)) {
        this.unreachableSince.set(key, now);
        this.logger.warn({ member: key, phi: this.detectors.phi(key, now) }, 'marking member unreachable');
      } else if (available && this.unreachableSince.delete(key)) {
        this.logger.info({ member: key }, 'member reachable again');
      }
    }
  }

  private runDowning(now: number): void {
    const decision = decideDowning({
      selfKey: this.selfKey,
      members: [...this.gossip.members.entries()].map(([key, r]) => ({
        key,
        address: r.address,
        status: r.status,
        reachable: !this.unreachableSince.has(key),
        unreachableSinceMs: this.unreachableSince.get(key),
      })),
      nowMs: now,
      downAfterMs: this.config.downAfterMs,
      minorityDownAfterMs: this.config.minorityDownAfterMs,
    });
    if (decision.kind === 'down-self') {
      this.logger.warn(
        { unreachable: [...this.unreachableSince.keys()] },
        'this node is on a minority side of the cluster: downing itself',
      );
      this.downCause = 'minority-side';
      const self = this.gossip.members.get(this.selfKey);
      if (self) this.applyOwnChanges([{ ...self, status: 'down' }]);
    } else if (decision.kind === 'down-unreachable') {
      this.logger.warn({ members: decision.keys }, 'downing unreachable members (this side holds the majority)');
      const records = decision.keys.flatMap((key) => {
        const r = this.gossip.members.get(key);
        return r ? [{ ...r, status: 'down' as const }] : [];
      });
      this.applyOwnChanges(records);
    }
  }

  // ---- state changes --------------------------------------------------------------------------------

  private applyOwnChanges(records: ReadonlyArray<MemberRecord>): void {
    this.commit(updateMembers(this.gossip, records, this.selfKey), true);
  }

  /**
   * Installs a new state: runs the leader's transitions on it, spreads own decisions to every live member,
   * forgets members that are gone, and fires the events the change implies.
   */
  private commit(next: GossipState, ownDecision: boolean): void {
    const before = this.gossip;
    let state = next;
    const transitions = leaderActions({
      state,
      selfKey: this.selfKey,
      unreachable: this.unreachableKeys(),
      nowMs: this.scheduler.now(),
      joiningSinceMs: this.joiningSince,
      weaklyUpAfterMs: this.config.weaklyUpAfterMs,
    });
    if (transitions.length > 0) {
      for (const t of transitions) this.logger.info({ member: keyOf(t), status: t.status, upNumber: t.upNumber }, 'leader moves member');
      state = updateMembers(state, transitions, this.selfKey);
    }
    this.gossip = state;
    const contentChanged = contentDigest(state.members) !== contentDigest(before.members);
    if (contentChanged) this.afterContentChange(before, ownDecision || transitions.length > 0);
    this.observeSelf();
    this.notifyIfViewChanged();
  }

  private afterContentChange(before: GossipState, spread: boolean): void {
    const now = this.scheduler.now();
    const newlyGone: NodeAddress[] = [];
    for (const [key, record] of this.gossip.members) {
      if (record.status === 'joining') {
        if (!this.joiningSince.has(key)) this.joiningSince.set(key, now);
      } else {
        this.joiningSince.delete(key);
      }
      if (GONE.has(record.status)) {
        this.detectors.remove(key);
        this.unreachableSince.delete(key);
        const previous = before.members.get(key);
        if (key !== this.selfKey && (!previous || statusRank(previous.status) < statusRank(record.status))) {
          newlyGone.push(record.address);
        }
      }
      const previous = before.members.get(key);
      if (!previous || previous.status !== record.status) {
        this.logger.debug({ member: key, from: previous?.status, to: record.status }, 'member status changed');
      }
    }
    if (!spread) return;
    const targets = new Map<string, NodeAddress>();
    for (const r of this.livePeers()) targets.set(r.address.toString(), r.address);
    // Members just downed or removed are told directly: they are no longer gossip targets.
    for (const address of newlyGone) targets.set(address.toString(), address);
    for (const address of targets.values()) this.sendGossip(address);
  }

  private observeSelf(): void {
    const self = this.gossip.members.get(this.selfKey);
    if (!self || this.stopped) return;
    if (!this.wasUp && statusRank(self.status) >= statusRank('up') && statusRank(self.status) <= statusRank('exiting')) {
      this.wasUp = true;
      this.logger.info({ upNumber: self.upNumber }, 'this node is Up');
      for (const waiter of this.upWaiters.splice(0)) waiter.resolve();
    }
    if (self.status === 'down') {
      const cause = this.downCause ?? 'downed-by-cluster';
      this.logger.warn({ cause }, 'this node is down: stopping');
      this.notifyIfViewChanged();
      this.shutdown();
      for (const listener of [...this.selfDownListeners]) this.safely(() => listener(cause), 'onSelfDown listener');
    } else if (self.status === 'removed') {
      this.logger.info('this node was removed from the cluster');
      this.notifyIfViewChanged();
      this.shutdown();
      for (const listener of [...this.selfRemovedListeners]) this.safely(listener, 'onSelfRemoved listener');
    }
  }

  private notifyIfViewChanged(): void {
    const digest = this.members()
      .map((m) => `${m.address.toString()}|${m.status}|${m.upNumber}|${m.reachable ? 1 : 0}`)
      .join(',');
    if (digest === this.viewDigest) return;
    this.viewDigest = digest;
    for (const listener of [...this.changeListeners]) this.safely(listener, 'onChange listener');
  }

  private async runLeave(): Promise<void> {
    if (!this.started || this.stopped) {
      this.shutdown();
      return;
    }
    this.logger.info({ tasks: this.leavingTasks.size }, 'leaving the cluster: running leave tasks');
    await this.runLeavingTasks();
    if (this.stopped) return;
    const self = this.gossip.members.get(this.selfKey);
    if (!this.joined || !self) {
      this.shutdown();
      return;
    }
    const stoppedPromise = new Promise<void>((resolve) => this.stopWaiters.push(resolve));
    const timeout = this.scheduler.setTimeout(() => {
      this.logger.warn({ status: this.gossip.members.get(this.selfKey)?.status }, 'leave did not complete within exitTimeoutMs: stopping');
      this.shutdown();
    }, this.config.exitTimeoutMs);
    this.timers.push(timeout);
    if (statusRank(self.status) < statusRank('leaving')) {
      this.logger.info('marking this node leaving');
      this.applyOwnChanges([{ ...self, status: 'leaving' }]);
    }
    await stoppedPromise;
  }

  private async runLeavingTasks(): Promise<void> {
    const tasks = [...this.leavingTasks];
    if (tasks.length === 0) return;
    let timer: Cancellable | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = this.scheduler.setTimeout(() => resolve('timeout'), this.config.leaveTimeoutMs);
    });
    const all = Promise.allSettled(tasks.map((task) => Promise.resolve().then(task))).then((results) => {
      for (const result of results) {
        if (result.status === 'rejected') {
          this.logger.error({ err: String(result.reason) }, 'a leave task failed; leaving anyway');
        }
      }
      return 'done' as const;
    });
    const outcome = await Promise.race([all, timedOut]);
    timer?.cancel();
    if (outcome === 'timeout') this.logger.warn({ leaveTimeoutMs: this.config.leaveTimeoutMs }, 'leave tasks timed out; leaving anyway');
  }

  // ---- helpers --------------------------------------------------------------------------------

  private sendGossip(to: NodeAddress): void {
    this.transport.send(to, { type: 'Gossip', gossip: toWire(this.gossip) });
  }

  /** Other members that are neither down nor removed. */
  private livePeers(): MemberRecord[] {
    return [...this.gossip.members.entries()]
      .filter(([key, r]) => key !== this.selfKey && !GONE.has(r.status))
      .map(([, r]) => r);
  }

  private unreachableKeys(): ReadonlySet<string> {
    return new Set(this.unreachableSince.keys());
  }

  private info(record: MemberRecord): MemberInfo {
    const key = keyOf(record);
    const reachable = key === this.selfKey || (!GONE.has(record.status) && !this.unreachableSince.has(key));
    return {
      address: record.address,
      status: record.status,
      appVersion: record.appVersion,
      upNumber: record.upNumber,
      reachable,
      roles: record.roles,
    };
  }

  private safely(fn: () => void, what: string): void {
    try {
      fn();
    } catch (error) {
      this.logger.error({ err: error instanceof Error ? error.message : String(error) }, `${what} threw`);
    }
  }
}

function subscribe<A extends unknown[], R>(set: Set<(...args: A) => R>, fn: (...args: A) => R): () => void {
  // A fresh wrapper per call, so one function registered twice is two registrations with separate unsubscribes.
  const entry = (...args: A): R => fn(...args);
  set.add(entry);
  return () => {
    set.delete(entry);
  };
}

function notUp(): ActorTsError {
  return new ActorTsError('not_running', 'the cluster node stopped before it was Up');
}
