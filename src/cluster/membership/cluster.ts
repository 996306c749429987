// One node's membership in the cluster, as the rest of the runtime sees it: joins through seed nodes,
// gossips the member state and the reachability table, heartbeats its segment of the heartbeat ring into a
// failure detector, acts on the split-brain decision, runs the leader's status transitions, and performs a
// graceful leave. Sharding consumes it
// through the `Membership` interface plus the self-lifecycle events (whenUp, onSelfDown, onSelfRemoved).
// This facade wires the parts together: membership-core.ts (state and commit), gossip-exchange.ts,
// reachability.ts (heartbeats and downing), self-lifecycle.ts (join, Up, leave, this node's end).
import type { FailoverTimeline } from './failover-timeline.js';
import { randomUUID } from 'node:crypto';
import { ActorTsError } from '../../errors.js';
import { silentLogger, type Logger } from '../../logging.js';
import type { NodeAddress } from '../address.js';
import { clusterChannel } from './cluster-channel.js';
import { resolveClusterConfig, type ClusterConfig, type ClusterConfigInput } from './config.js';
import { memberKey } from './gossip.js';
import { GossipExchange } from './gossip-exchange.js';
import { isConverged, leaderOf } from './leader-actions.js';
import { isGone, type DepartedMember, type MemberInfo, type Membership } from '../member.js';
import { MembershipCore } from './membership-core.js';
import type { ClusterMessage } from './messages.js';
import { Reachability } from './reachability.js';
import { ClockWatch } from './clock-watch.js';
import { systemScheduler, type Scheduler } from '../scheduler.js';
import { SelfLifecycle, type SelfDownCause } from './self-lifecycle.js';
import type { Transport } from '../transport/transport.js';

export type { SelfDownCause } from './self-lifecycle.js';

/** What a Cluster is built from: its transport, configuration and logger. */
export interface ClusterOptions {
  readonly transport: Transport;
  readonly config?: ClusterConfigInput;
  /** Clock and timers; default the process's (so `vi.useFakeTimers()` applies). */
  readonly scheduler?: Scheduler;
  /** Default: silent. */
  readonly logger?: Logger;
  /** Source of randomness for the choice of gossip peers (and of those news is passed on to); default Math.random. */
  readonly random?: () => number;
  /** Identifies this run of the node; default the transport's incarnation when it has one, else a random UUID. */
  readonly incarnation?: string;
  /** Where this node's failover phases are recorded (detected, suspected-confirmed, decided); default none. */
  readonly failoverTimeline?: FailoverTimeline;
  /** The wall clock compared with the peers' to find this node's clock offset; default the scheduler's `now`. */
  readonly wallClock?: () => number;
}

/**
 * This node's cluster membership: joins through the seeds, gossips member state, runs the failure detector and the
 * leader's downing decisions, and leaves gracefully. Call `start()` to join.
 */
export class Cluster implements Membership {
  readonly self: NodeAddress;
  readonly incarnation: string;
  readonly config: ClusterConfig;

  private readonly core: MembershipCore;
  private readonly lifecycle: SelfLifecycle;
  private readonly reachability: Reachability;
  /** This node's clock against its peers' (offset, skew), measured on heartbeats. */
  readonly clock: ClockWatch;
  private readonly exchange: GossipExchange;
  private unsubscribe: (() => void) | undefined;
  private unsubscribeLost: (() => void) | undefined;

  constructor(options: ClusterOptions) {
    this.config = resolveClusterConfig(options.config);
    this.self = options.transport.self;
    this.incarnation = options.incarnation ?? options.transport.incarnation ?? randomUUID();
    if (this.incarnation.length === 0 || this.incarnation.length > 128) {
      throw new ActorTsError('invalid_argument', 'incarnation must be 1..128 characters');
    }
    this.core = new MembershipCore({
      self: this.self,
      incarnation: this.incarnation,
      selfKey: memberKey(this.self, this.incarnation),
      config: this.config,
      scheduler: options.scheduler ?? systemScheduler,
      logger: (options.logger ?? silentLogger()).child({ node: this.self.toString() }),
      channel: clusterChannel(options.transport),
      random: options.random ?? Math.random,
    });
    this.lifecycle = new SelfLifecycle(this.core, () => this.shutdown());
    const { scheduler, logger } = this.core;
    this.clock = new ClockWatch({
      maxClockOffsetMs: this.config.maxClockOffsetMs,
      wallClock: options.wallClock ?? (() => scheduler.now()),
      logger,
    });
    this.reachability = new Reachability(
      this.core,
      () => this.lifecycle.downSelfAsMinority(),
      this.clock,
      options.failoverTimeline,
    );
    this.core.afterCommit = () => {
      this.lifecycle.observeSelf();
      this.reachability.onCommitted();
    };
    this.exchange = new GossipExchange(this.core, this.lifecycle, this.core.random);
  }

  /** Starts joining through the seed nodes (or forms a cluster, see `ClusterConfig.seedNodes`). Idempotent. */
  start(): void {
    const { core } = this;
    if (core.started || core.stopped) return;
    core.started = true;
    this.unsubscribe = core.channel.listen((from, message) => this.onMessage(from, message));
    this.unsubscribeLost = core.channel.onConnectionLost((peer) => this.reachability.onConnectionLost(peer));
    core.timers.push(core.scheduler.setInterval(() => this.reachability.tick(), this.config.heartbeatIntervalMs));
    core.timers.push(core.scheduler.setInterval(() => this.exchange.tick(), this.config.gossipIntervalMs));
    this.lifecycle.startJoining();
  }

  /** Size of the replicated membership state: member records (any status) and tombstones of pruned ones. */
  gossipSize(): { readonly records: number; readonly tombstones: number } {
    return { records: this.core.gossip.members.size, tombstones: this.core.gossip.tombstones.size };
  }

  members(): ReadonlyArray<MemberInfo> {
    return this.core.members();
  }

  /** See `Membership.departed`: members this node saw leave the view after reaching Up, oldest first. */
  departed(): ReadonlyArray<DepartedMember> {
    return this.core.departures.list();
  }

  /** This node as the cluster sees it; undefined before it joined. */
  selfMember(): MemberInfo | undefined {
    const record = this.core.selfRecord();
    return record ? this.core.info(record) : undefined;
  }

  /** The current membership leader in this node's view. */
  leader(): NodeAddress | undefined {
    return leaderOf(this.core.gossip, this.core.unreachableKeys())?.address;
  }

  /** Whether every live member has seen this node's current membership state. */
  isConverged(): boolean {
    return this.core.joined && isConverged(this.core.gossip, this.core.unreachableKeys());
  }

  onChange(listener: () => void): () => void {
    return this.core.onChange(listener);
  }

  onLeaving(task: () => Promise<void>): () => void {
    return this.lifecycle.onLeaving(task);
  }

  /**
   * Fires once when this node is down: it must stop hosting (its shards are taken over elsewhere). Also
   * fires, before onSelfRemoved, when this node learns only afterwards that the others removed it.
   */
  onSelfDown(listener: (cause: SelfDownCause) => void): () => void {
    return this.lifecycle.onSelfDown(listener);
  }

  /** Fires once when this node has been removed: after a graceful leave, or by the others while it was away. */
  onSelfRemoved(listener: () => void): () => void {
    return this.lifecycle.onSelfRemoved(listener);
  }

  /** Resolves when this node is Up (at once if it already was); rejects if it stops or is downed first. */
  whenUp(): Promise<void> {
    return this.lifecycle.whenUp();
  }

  /**
   * Graceful leave: runs every onLeaving task (bounded by leaveTimeoutMs), then walks this node through
   * leaving -> exiting -> removed (bounded by exitTimeoutMs) and stops. Calling it again returns the same promise.
   */
  leave(): Promise<void> {
    return this.lifecycle.leave();
  }

  /**
   * Marks every live incarnation of `address` down (an operator's decision); downing self stops this node.
   * Other members take a downing only from the member they take as leader (gossip-guard.ts): decided on any
   * other node it stays that node's view until the leader decides the same.
   */
  down(address: NodeAddress): void {
    const { core } = this;
    if (core.stopped || !core.joined) return;
    const targets = [...core.gossip.members.values()].filter((r) => r.address.equals(address) && !isGone(r.status));
    if (targets.length === 0) return;
    core.logger.warn({ member: address.toString() }, 'downing member on request');
    core.applyOwnChanges(targets.map((r) => core.downed(r)));
  }

  /** Stops timers and message handling without leaving (the process is going away or was downed). Idempotent. */
  shutdown(): void {
    const { core } = this;
    if (core.stopped) return;
    core.stopped = true;
    for (const timer of core.timers) timer.cancel();
    core.timers.length = 0;
    this.reachability.close();
    this.unsubscribe?.();
    this.unsubscribeLost?.();
    this.lifecycle.onStopped();
    core.logger.info({ status: core.selfRecord()?.status }, 'cluster membership stopped');
  }

  private onMessage(from: NodeAddress, message: ClusterMessage): void {
    if (this.core.stopped) return;
    switch (message.type) {
      case 'Heartbeat':
        return this.reachability.onHeartbeat(from, message);
      case 'HeartbeatAck':
        return this.reachability.onHeartbeatAck(from, message);
      case 'Join':
        return this.exchange.onJoin(from, message);
      case 'Gossip':
        return this.exchange.onGossip(from, message.gossip);
      case 'GossipNews':
        return this.exchange.onNews(from, message.gossip);
      case 'GossipStatus':
        return this.exchange.onStatus(from, message);
      case 'GossipAsk':
        return this.exchange.onAsk(from, message.keys);
    }
  }
}
