// Heartbeats, reachability and the downing decision. Heartbeats go to every live member each
// heartbeatIntervalMs; acks feed the failure detector, and a heartbeat received counts as a sign of life
// too, so both ends of a cut link measure their silence from the same last exchange. Reachability and
// downing are not only evaluated on the heartbeat tick: a timer is set for the next moment anything can
// change (a member's phi crossing the threshold, a downing delay running out), so the minority's shorter
// delay takes effect by its full margin before the majority's, whatever the phase of either side's tick.
// A member whose acks stop for two heartbeat intervals gets its connection replaced every interval until
// they come back (`Transport.reconnect`): a link restored after a cut then works at once, not when TCP's
// retransmission backoff next tries.
import type { NodeAddress } from './address.js';
import { decideDowning, nextDowningDeadlineMs, type DowningInput } from './downing.js';
import { memberKey } from './gossip.js';
import { isGone } from './member.js';
import type { MembershipCore } from './membership-core.js';
import type { ClusterMessage } from './messages.js';
import type { Cancellable } from './scheduler.js';

/** The least stagger: well above the time a decision takes to travel two hops. */
export const DOWNING_STAGGER_MS = 100;

/**
 * Extra wait per lower-addressed unreachable member on a majority side (see downing.ts). It must exceed how
 * far apart the two ends of a cut link start their downing clocks, or the higher address may decide first:
 * each end marks the other unreachable when its own failure detector crosses the threshold, measured from
 * the last message it got, and those differ by up to a heartbeat interval (plus the detectors' deviation;
 * 0.7 s was seen between network namespaces). Two heartbeat intervals cover that; the rule it makes is
 * plain: across a cut link between two nodes that both still reach a majority, the lower address stays.
 */
export function downingStaggerMs(heartbeatIntervalMs: number): number {
  return Math.max(DOWNING_STAGGER_MS, 2 * heartbeatIntervalMs);
}

/** Heartbeat intervals without an ack after which the connection to a member is replaced. */
export const RECONNECT_AFTER_INTERVALS = 2;

type Heartbeat = Extract<ClusterMessage, { type: 'Heartbeat' }>;
type HeartbeatAck = Extract<ClusterMessage, { type: 'HeartbeatAck' }>;

export class Reachability {
  private sequence = 0;
  /** When each monitored member last acked a heartbeat (or when heartbeats to it started). */
  private readonly lastAckAt = new Map<string, number>();
  private deadline: { readonly atMs: number; readonly timer: Cancellable } | undefined;

  /** `downSelf` is called when this node finds itself on a minority side. */
  constructor(
    private readonly core: MembershipCore,
    private readonly downSelf: () => void,
  ) {}

  onHeartbeat(from: NodeAddress, message: Heartbeat): void {
    const { core } = this;
    const key = memberKey(from, message.incarnation);
    const record = core.gossip.members.get(key);
    if ((record && isGone(record.status)) || core.gossip.tombstones.has(key)) {
      // A downed or removed node still running: tell it, instead of keeping it alive.
      core.sendGossip(from);
      return;
    }
    if (record) core.detectors.alive(key, core.scheduler.now());
    core.channel.send(from, { type: 'HeartbeatAck', sequence: message.sequence, incarnation: core.incarnation });
  }

  onHeartbeatAck(from: NodeAddress, message: HeartbeatAck): void {
    const key = memberKey(from, message.incarnation);
    const record = this.core.gossip.members.get(key);
    if (record && !isGone(record.status)) {
      const now = this.core.scheduler.now();
      this.core.detectors.heartbeat(key, now);
      this.lastAckAt.set(key, now);
    }
  }

  /** Every heartbeatIntervalMs: heartbeats to every live member, then an evaluation. */
  tick(): void {
    const { core } = this;
    if (!core.joined || core.stopped) return;
    const now = core.scheduler.now();
    const reconnectAfterMs = RECONNECT_AFTER_INTERVALS * core.config.heartbeatIntervalMs;
    for (const key of this.lastAckAt.keys()) {
      const record = core.gossip.members.get(key);
      if (record === undefined || isGone(record.status)) this.lastAckAt.delete(key);
    }
    for (const [key, record] of core.gossip.members) {
      if (key === core.selfKey || isGone(record.status)) continue;
      // Start the clock on first contact, so a member that never answers still becomes unreachable.
      if (!core.detectors.isMonitoring(key)) core.detectors.heartbeat(key, now);
      const lastAck = this.lastAckAt.get(key);
      if (lastAck === undefined) this.lastAckAt.set(key, now);
      // Before the heartbeat, so the heartbeat is what dials the new connection.
      else if (now - lastAck >= reconnectAfterMs) core.channel.reconnect(record.address);
      core.channel.send(record.address, { type: 'Heartbeat', sequence: ++this.sequence, incarnation: core.incarnation });
    }
    this.evaluate();
  }

  stop(): void {
    this.deadline?.timer.cancel();
    this.deadline = undefined;
  }

  /** Updates reachability and applies the downing decision as of now, then sets the timer for the next change. */
  private evaluate(): void {
    const { core } = this;
    if (!core.joined || core.stopped) return;
    const now = core.scheduler.now();
    this.updateReachability(now);
    this.runDowning(now);
    if (core.stopped) return;
    core.commit(core.gossip, false);
    if (!core.stopped) this.plan(now);
  }

  private updateReachability(now: number): void {
    const { core } = this;
    for (const [key, record] of core.gossip.members) {
      if (key === core.selfKey || isGone(record.status) || !core.detectors.isMonitoring(key)) continue;
      const available = core.detectors.isAvailable(key, now);
      if (!available && !core.unreachableSince.has(key)) {
        core.unreachableSince.set(key, now);
        core.logger.warn({ member: key, phi: core.detectors.phi(key, now) }, 'marking member unreachable');
      } else if (available && core.unreachableSince.delete(key)) {
        core.logger.info({ member: key }, 'member reachable again');
      }
    }
  }

  private runDowning(now: number): void {
    const { core } = this;
    const decision = decideDowning(this.downingInput(now));
    if (decision.kind === 'down-self') {
      core.logger.warn({ unreachable: [...core.unreachableSince.keys()] }, 'this node is on a minority side of the cluster: downing itself');
      this.downSelf();
    } else if (decision.kind === 'down-unreachable') {
      core.logger.warn({ members: decision.keys }, 'downing unreachable members (this side holds the majority)');
      const records = decision.keys.flatMap((key) => {
        const r = core.gossip.members.get(key);
        return r ? [core.downed(r)] : [];
      });
      core.applyOwnChanges(records);
    }
  }

  /** One timer, at the earliest moment a reachable member turns unreachable or a downing delay runs out. */
  private plan(now: number): void {
    const { core } = this;
    let next = nextDowningDeadlineMs(this.downingInput(now));
    for (const [key, record] of core.gossip.members) {
      if (key === core.selfKey || isGone(record.status) || core.unreachableSince.has(key)) continue;
      const at = core.detectors.unavailableAtMs(key);
      if (at !== undefined && at > now && (next === undefined || at < next)) next = at;
    }
    if (next === undefined) {
      this.stop();
      return;
    }
    if (this.deadline?.atMs === next) return;
    this.stop();
    const timer = core.scheduler.setTimeout(() => {
      this.deadline = undefined;
      this.evaluate();
    }, next - now);
    this.deadline = { atMs: next, timer };
  }

  private downingInput(now: number): DowningInput {
    const { core } = this;
    return {
      selfKey: core.selfKey,
      members: [...core.gossip.members.entries()].map(([key, r]) => ({
        key,
        address: r.address,
        status: r.status,
        reachable: !core.unreachableSince.has(key),
        unreachableSinceMs: core.unreachableSince.get(key),
      })),
      nowMs: now,
      downAfterMs: core.config.downAfterMs,
      minorityDownAfterMs: core.config.minorityDownAfterMs,
      staggerMs: downingStaggerMs(core.config.heartbeatIntervalMs),
    };
  }
}
