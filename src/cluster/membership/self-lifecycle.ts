// This node's own way through the cluster: joining through the seeds (or forming a cluster), becoming Up,
// a graceful leave, and the end of its membership: downed (by the cluster or by itself) or removed. The
// end may be learnt late: a node paused or cut off long enough finds the others already removed it, or
// pruned it to a tombstone. Node-level shutdown hangs on onSelfDown, so it fires once, and before
// onSelfRemoved whenever the removal was not the end of this node's own graceful leave.
import { ActorTsError } from '../../errors.js';
import type { NodeAddress } from '../address.js';
import type { NodeAttributes } from '../attributes.js';
import { statusRank, type MemberRecord } from './gossip.js';
import { subscribe, type MembershipCore } from './membership-core.js';
import type { Cancellable } from '../scheduler.js';

/** Why this node was downed: by the cluster's decision (or an operator), or by itself on a minority side. */
export type SelfDownCause = 'downed-by-cluster' | 'minority-side';

export class SelfLifecycle {
  private wasUp = false;
  private ended = false;
  private downCause: SelfDownCause | undefined;
  private leaving: Promise<void> | undefined;
  private joinTimer: Cancellable | undefined;
  private readonly leavingTasks = new Set<() => Promise<void>>();
  private readonly selfDownListeners = new Set<(cause: SelfDownCause) => void>();
  private readonly selfRemovedListeners = new Set<() => void>();
  private readonly upWaiters: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  private readonly stopWaiters: Array<() => void> = [];

  /** `stop` stops the whole membership (timers, message handling); it calls `onStopped` here. */
  constructor(
    private readonly core: MembershipCore,
    private readonly stop: () => void,
  ) {}

  /** Sends Join to the other seeds until welcomed; the first seed forms the cluster when nobody answers. */
  startJoining(): void {
    const { config, scheduler, logger, self } = this.core;
    const otherSeeds = config.seedNodes.filter((s) => !s.equals(self));
    if (otherSeeds.length === 0) {
      this.formCluster('no other seed nodes');
      return;
    }
    logger.info({ seeds: config.seedNodes.map(String) }, 'joining cluster');
    this.sendJoin(otherSeeds);
    this.joinTimer = scheduler.setInterval(() => this.sendJoin(otherSeeds), config.retryJoinIntervalMs);
    this.core.timers.push(this.joinTimer);
    if (config.seedNodes[0]?.equals(self)) {
      this.core.timers.push(
        scheduler.setTimeout(() => {
          if (!this.core.joined && !this.core.stopped)
            this.formCluster('no seed node answered within seedNodeTimeoutMs');
        }, config.seedNodeTimeoutMs),
      );
    }
  }

  /** The first gossip that knows this node arrived: it is in the cluster. */
  welcomed(via: NodeAddress): void {
    if (this.core.joined) return;
    this.core.joined = true;
    this.joinTimer?.cancel();
    this.core.logger.info({ via: via.toString() }, 'welcomed into the cluster');
  }

  onLeaving(task: () => Promise<void>): () => void {
    return subscribe(this.leavingTasks, task);
  }

  onSelfDown(listener: (cause: SelfDownCause) => void): () => void {
    return subscribe(this.selfDownListeners, listener);
  }

  onSelfRemoved(listener: () => void): () => void {
    return subscribe(this.selfRemovedListeners, listener);
  }

  whenUp(): Promise<void> {
    if (this.wasUp) return Promise.resolve();
    if (this.core.stopped) return Promise.reject(notUp());
    return new Promise((resolve, reject) => this.upWaiters.push({ resolve, reject }));
  }

  leave(): Promise<void> {
    this.leaving ??= this.runLeave();
    return this.leaving;
  }

  /** This node is on a minority side: it downs itself so the majority can take its shards over. */
  downSelfAsMinority(): void {
    const self = this.core.selfRecord();
    if (!self) return;
    this.downCause = 'minority-side';
    this.core.applyOwnChanges([this.core.downed(self)]);
  }

  /** Gossip carries a tombstone of this incarnation: the others removed and pruned it while it was away. */
  selfTombstoned(): void {
    const self = this.core.selfRecord();
    if (!self || this.core.stopped) return;
    this.core.logger.warn('the cluster pruned this incarnation: it was removed while unreachable');
    const members = new Map(this.core.gossip.members);
    members.set(this.core.selfKey, { ...self, status: 'removed' });
    this.core.gossip = { ...this.core.gossip, members };
    this.observeSelf();
  }

  /** Runs after every commit: resolves whenUp, and ends this node's membership when its record says so. */
  observeSelf(): void {
    const self = this.core.selfRecord();
    if (!self || this.core.stopped || this.ended) return;
    if (
      !this.wasUp &&
      statusRank(self.status) >= statusRank('up') &&
      statusRank(self.status) <= statusRank('exiting')
    ) {
      this.wasUp = true;
      this.core.logger.info({ upNumber: self.upNumber }, 'this node is Up');
      for (const waiter of this.upWaiters.splice(0)) waiter.resolve();
    }
    if (self.status === 'down' || self.status === 'removed') this.end(self);
  }

  /** Called by `stop`: nothing waits for Up or for the end of a leave any more. */
  onStopped(): void {
    for (const waiter of this.upWaiters.splice(0)) waiter.reject(notUp());
    for (const resolve of this.stopWaiters.splice(0)) resolve();
  }

  private end(self: MemberRecord): void {
    this.ended = true;
    // Removed without having been downed is the end of a graceful leave; anything else is a downing,
    // possibly learnt only now that the cluster already removed this node.
    const downed =
      self.status === 'down' ||
      self.downedAtMs !== undefined ||
      this.downCause !== undefined ||
      this.leaving === undefined;
    const cause = this.downCause ?? 'downed-by-cluster';
    if (self.status === 'down') this.core.logger.warn({ cause }, 'this node is down: stopping');
    // The end of a leave this node asked for is news, not a warning.
    else if (!downed) this.core.logger.info('this node left the cluster (its leave completed): stopping');
    else this.core.logger.warn({ downed }, 'this node was removed from the cluster: stopping');
    this.core.notifyIfViewChanged();
    this.stop();
    if (downed)
      for (const listener of [...this.selfDownListeners])
        this.core.safely(() => listener(cause), 'onSelfDown listener');
    if (self.status === 'removed')
      for (const listener of [...this.selfRemovedListeners]) this.core.safely(listener, 'onSelfRemoved listener');
  }

  private sendJoin(seeds: ReadonlyArray<NodeAddress>): void {
    if (this.core.joined || this.core.stopped) return;
    const { config, incarnation } = this.core;
    for (const seed of seeds)
      this.core.channel.send(seed, {
        type: 'Join',
        incarnation,
        appVersion: config.appVersion,
        roles: [...config.roles],
        ...attributesField(config.attributes),
      });
  }

  private formCluster(reason: string): void {
    const { core } = this;
    core.logger.info({ reason }, 'forming a new cluster');
    core.joined = true;
    this.joinTimer?.cancel();
    const record: MemberRecord = {
      address: core.self,
      incarnation: core.incarnation,
      status: 'joining',
      appVersion: core.config.appVersion,
      roles: [...core.config.roles],
      ...attributesField(core.config.attributes),
      upNumber: 0,
    };
    core.commit(
      { members: new Map([[core.selfKey, record]]), seen: new Set([core.selfKey]), tombstones: new Map() },
      'push',
    );
  }

  private async runLeave(): Promise<void> {
    const { core } = this;
    if (!core.started || core.stopped) {
      this.stop();
      return;
    }
    core.logger.info({ tasks: this.leavingTasks.size }, 'leaving the cluster: running leave tasks');
    await this.runLeavingTasks();
    if (core.stopped) return;
    const self = core.selfRecord();
    if (!core.joined || !self) {
      this.stop();
      return;
    }
    const stoppedPromise = new Promise<void>((resolve) => this.stopWaiters.push(resolve));
    const timeout = core.scheduler.setTimeout(() => {
      core.logger.warn({ status: core.selfRecord()?.status }, 'leave did not complete within exitTimeoutMs: stopping');
      this.stop();
    }, core.config.exitTimeoutMs);
    core.timers.push(timeout);
    if (statusRank(self.status) < statusRank('leaving')) {
      core.logger.info('marking this node leaving');
      core.applyOwnChanges([{ ...self, status: 'leaving' }]);
    }
    await stoppedPromise;
  }

  private async runLeavingTasks(): Promise<void> {
    const { core } = this;
    const tasks = [...this.leavingTasks];
    if (tasks.length === 0) return;
    let timer: Cancellable | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = core.scheduler.setTimeout(() => resolve('timeout'), core.config.leaveTimeoutMs);
    });
    const all = Promise.allSettled(tasks.map((task) => Promise.resolve().then(task))).then((results) => {
      for (const result of results) {
        if (result.status === 'rejected')
          core.logger.error({ err: String(result.reason) }, 'a leave task failed; leaving anyway');
      }
      return 'done' as const;
    });
    const outcome = await Promise.race([all, timedOut]);
    timer?.cancel();
    if (outcome === 'timeout')
      core.logger.warn({ leaveTimeoutMs: core.config.leaveTimeoutMs }, 'leave tasks timed out; leaving anyway');
  }
}

function notUp(): ActorTsError {
  return new ActorTsError('not_running', 'the cluster node stopped before it was Up');
}

/** Attributes travel only when there are some: a node without them gossips what older nodes do. */
function attributesField(attributes: NodeAttributes): { attributes?: NodeAttributes } {
  return Object.keys(attributes).length === 0 ? {} : { attributes };
}
