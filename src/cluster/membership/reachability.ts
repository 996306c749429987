// Heartbeats, this node's reachability observations, and acting on the split-brain decision. Heartbeats go
// each heartbeatIntervalMs to the members the heartbeat ring assigns this node (heartbeat-ring.ts); acks
// feed the failure detector, and a heartbeat received counts as a sign of life too, so both ends of a cut
// link measure their silence from the same last exchange. What the detectors say becomes this node's row of
// the gossiped reachability table (reachability-table.ts); the decision (split-brain-decision.ts) is
// computed from the merged table, the same on every node that holds it, and acted on once:
// - by the decision's leader, downing the indirectly connected and the unreachable members, only after the
//   table has not changed for stableAfterMs (so the nodes of its side have merged the same table);
// - by each member of a side without a majority, downing itself minorityDownAfterMs after it first saw a
//   member unreachable: sooner than the majority's leader can act, so it stops hosting first.
// Nothing waits for the next tick: a timer is set for the next moment anything can change (a detector
// crossing the threshold, stable-after or the minority delay running out). A member whose acks stop for two
// heartbeat intervals gets its connection replaced every interval until they come back
// (`Transport.reconnect`): a link restored after a cut then works at once, not when TCP's backoff next tries.
import type { NodeAddress } from '../address.js';
import { keyOf, memberKey, reachabilityOf, updateReachability as withTable, type MemberRecord } from './gossip.js';
import { ringOrder, targetsOnRing, type RingMember } from './heartbeat-ring.js';
import { COUNTED_STATUSES, isGone, type MemberStatus } from '../member.js';
import type { MembershipCore } from './membership-core.js';
import type { ClusterMessage } from './messages.js';
import { withOwnRow, type UnreachableEdge } from './reachability-table.js';
import { DeathConfirmations } from './death-confirmation.js';
import type { FailoverTimeline } from './failover-timeline.js';
import type { Cancellable } from '../scheduler.js';
import { decideSplitBrain, type SplitBrainDecision } from './split-brain-decision.js';
import { decisionInput, heldOutOfRow } from './confirmed-rows.js';
import type { ClockWatch } from './clock-watch.js';

/** Heartbeat intervals without an ack after which the connection to a member is replaced. */
export const RECONNECT_AFTER_INTERVALS = 2;
/** Heartbeat intervals without an ack after which a member's address is probed (death-confirmation.ts). */
export const PROBE_AFTER_INTERVALS = 1.5;

/** The statuses whose lost connection is probed at once (Reachability.onConnectionLost). */
const PROBED_ON_CLOSE: ReadonlySet<MemberStatus> = new Set<MemberStatus>(['joining', 'weakly-up', 'up']);

type Heartbeat = Extract<ClusterMessage, { type: 'Heartbeat' }>;
type HeartbeatAck = Extract<ClusterMessage, { type: 'HeartbeatAck' }>;

export class Reachability {
  private sequence = 0;
  /** When each monitored member last acked a heartbeat (or when heartbeats to it started). */
  private readonly lastAckAt = new Map<string, number>();
  private deadline: { readonly atMs: number; readonly timer: Cancellable } | undefined;
  /** What the decision last depended on (the live edges, the members it counts), as of `stableSinceMs`. */
  private edgesText = '';
  private counted: { readonly list: readonly string[]; readonly text: string } = { list: [], text: '' };
  private stableSinceMs = 0;
  /** When a member held out of this node's row joins it (confirmed-rows.ts). */
  private rowDueAt: number | undefined;
  /** When the table last went from no unreachable member to some; undefined while there is none. */
  private firstUnreachableAtMs: number | undefined;
  private ringCache:
    { readonly members: ReadonlyMap<string, unknown>; readonly ring: ReadonlyArray<RingMember> } | undefined;

  private readonly confirmations: DeathConfirmations;

  /** `downSelf` is called when this node finds itself on a minority side. */
  constructor(
    private readonly core: MembershipCore,
    private readonly downSelf: () => void,
    private readonly clock: ClockWatch,
    private readonly timeline?: FailoverTimeline,
  ) {
    this.confirmations = new DeathConfirmations({
      probe: core.config.confirmDeaths ? core.channel.probe : undefined,
      scheduler: core.scheduler,
      onConfirmed: (key) => {
        core.logger.warn({ member: key }, 'member confirmed dead: its address refuses connections');
        const record = core.gossip.members.get(key);
        if (record !== undefined) this.timeline?.reached(record.address.toString(), 'suspected-confirmed');
        this.evaluate();
      },
    });
    // The view carries this evidence (MemberInfo.confirmedDead): the coordinator ends a downed member's margin
    // on it instead of probing the same address again.
    core.deathConfirmed = (key) => this.confirmations.confirmed(key, core.scheduler.now());
  }

  onHeartbeat(from: NodeAddress, message: Heartbeat): void {
    const { core } = this;
    const key = memberKey(from, message.incarnation);
    const record = core.gossip.members.get(key);
    if ((record && isGone(record.status)) || core.gossip.tombstones.has(key)) {
      // A downed or removed node still running: tell it, instead of keeping it alive.
      core.sendGossip(from);
      return;
    }
    if (record) {
      core.detectors.alive(key, core.scheduler.now());
      this.confirmations.alive(key);
    }
    core.channel.send(from, {
      type: 'HeartbeatAck',
      sequence: message.sequence,
      incarnation: core.incarnation,
      ...this.clock.answer(message.sentAtMs),
    });
  }

  onHeartbeatAck(from: NodeAddress, message: HeartbeatAck): void {
    const key = memberKey(from, message.incarnation);
    const record = this.core.gossip.members.get(key);
    if (record && !isGone(record.status) && this.lastAckAt.has(key)) {
      const now = this.core.scheduler.now();
      this.core.detectors.heartbeat(key, now);
      this.lastAckAt.set(key, now);
      this.confirmations.alive(key);
      this.clock.acked(key, message);
    }
  }

  /**
   * An open connection with `peer` ended from its side: probe each live incarnation at that address now instead
   * of after heartbeats fall silent. Only a confirmation (two refusals) acts on it (onConfirmed); a peer that
   * merely dropped a connection accepts the probe and nothing changes.
   */
  onConnectionLost(peer: NodeAddress): void {
    const { core } = this;
    if (!core.joined || core.stopped) return;
    for (const [key, record] of core.gossip.members) {
      // A leaving or exiting member closes its connections on its way out: its graceful path is not raced.
      if (!record.address.equals(peer) || !this.isLive(key) || !PROBED_ON_CLOSE.has(record.status)) continue;
      this.confirmations.suspect(key, record.address, true);
    }
  }

  /** Every heartbeatIntervalMs: heartbeats to the members of this node's ring segment, then an evaluation. */
  tick(): void {
    const { core } = this;
    if (!core.joined || core.stopped) return;
    const now = core.scheduler.now();
    const reconnectAfterMs = RECONNECT_AFTER_INTERVALS * core.config.heartbeatIntervalMs;
    const targets = new Set(this.targets());
    // A member this node no longer monitors: its detector would only go stale, and this node can no longer
    // vouch for it.
    for (const key of [...this.lastAckAt.keys()]) {
      if (targets.has(key)) continue;
      this.lastAckAt.delete(key);
      this.clock.forget(key);
      core.detectors.remove(key);
      core.unreachableSince.delete(key);
    }
    for (const key of targets) {
      const record = core.gossip.members.get(key);
      if (record === undefined) continue;
      // Start the clock on first contact, so a member that never answers still becomes unreachable.
      if (!core.detectors.isMonitoring(key)) core.detectors.heartbeat(key, now);
      const lastAck = this.lastAckAt.get(key);
      if (lastAck === undefined) this.lastAckAt.set(key, now);
      // Before the heartbeat, so the heartbeat is what dials the new connection.
      else if (now - lastAck >= reconnectAfterMs) core.channel.reconnect(record.address);
      if (lastAck !== undefined && now - lastAck >= PROBE_AFTER_INTERVALS * core.config.heartbeatIntervalMs) {
        this.confirmations.suspect(key, record.address);
      }
      core.channel.send(record.address, {
        type: 'Heartbeat',
        sequence: ++this.sequence,
        incarnation: core.incarnation,
        ...this.clock.stamp(),
      });
    }
    this.evaluate();
  }

  /** After every commit: a table merged from gossip may restart the stable-after clock or move a deadline. */
  onCommitted(): void {
    const { core } = this;
    if (!core.joined || core.stopped) return;
    const now = core.scheduler.now();
    this.observeTable(now);
    this.plan(now);
  }

  stop(): void {
    this.deadline?.timer.cancel();
    this.deadline = undefined;
  }

  /** Ends the probes too: the membership stopped. */
  close(): void {
    this.stop();
    this.confirmations.stop();
  }

  /**
   * The members this node heartbeats: its segment of the ring of live members. When this node itself sees
   * every member of its plain segment unreachable, it may be the one cut off: it then monitors every live
   * member, so that it learns within one detection period whether it is on a minority side (the ring alone
   * would tell it only k members at a time) and can down itself before the majority acts.
   */
  private targets(): string[] {
    const { core } = this;
    const ring = this.ring();
    const k = core.config.monitoredByNrOfMembers;
    const segment = targetsOnRing(ring, core.selfKey, k);
    if (
      segment.length > 0 &&
      segment.length < ring.length - 1 &&
      segment.every((key) => core.unreachableSince.has(key))
    ) {
      return ring.map((m) => m.key).filter((key) => key !== core.selfKey);
    }
    return targetsOnRing(ring, core.selfKey, k, core.unreachableKeys());
  }

  /** The ring of live members, sorted once per member-map change rather than on every tick. */
  private ring(): ReadonlyArray<RingMember> {
    const members = this.core.gossip.members;
    if (this.ringCache?.members !== members) {
      const live = [...members.entries()]
        .filter(([, r]) => !isGone(r.status))
        .map(([key, r]) => ({ key, address: r.address }));
      this.ringCache = { members, ring: ringOrder(live) };
    }
    return this.ringCache.ring;
  }

  /** Updates this node's row and applies the decision as of now, then sets the timer for the next change. */
  private evaluate(): void {
    const { core } = this;
    if (!core.joined || core.stopped) return;
    const now = core.scheduler.now();
    this.updateObservations(now);
    const current = reachabilityOf(core.gossip);
    const inRow = new Set(current.get(core.selfKey)?.subjects ?? []);
    const own = new Set([...core.unreachableSince.keys()].filter((key) => this.isLive(key)));
    const withRow = (row: Set<string>) => withTable(core.gossip, withOwnRow(current, core.selfKey, row), core.selfKey);
    // Confirmed deaths the leader downs at once stay out for now; one in the row already stays (confirmed-rows.ts).
    const { held, dueAt } = heldOutOfRow({
      selfKey: core.selfKey,
      now,
      unreachableSince: new Map(
        [...own].filter((k) => !inRow.has(k)).map((k) => [k, core.unreachableSince.get(k) ?? now]),
      ),
      confirmed: (key) => this.confirmations.confirmed(key, now),
      table: () => decisionInput(withRow(own)),
    });
    this.rowDueAt = dueAt;
    for (const key of held) own.delete(key);
    // A subject downed since stays until its record is gone (no edge counts it): else every row is sent again.
    for (const key of inRow) if (this.isDownStill(key)) own.add(key);
    // This node's own row: pushed to every live member at once, and not passed on by them (gossip-exchange.ts).
    core.commit(withRow(own), 'own');
    if (core.stopped) return;
    this.observeTable(now);
    this.act(now);
    if (core.stopped) return;
    core.commit(core.gossip, 'none');
    if (!core.stopped) this.plan(now);
  }

  private updateObservations(now: number): void {
    const { core } = this;
    // A member confirmed dead counts even before this node's first heartbeat to it (one that joined within the
    // last interval), so its confirmation does not wait for the next tick.
    const keys = new Set([...this.lastAckAt.keys(), ...this.confirmations.keys()]);
    for (const key of keys) {
      if (!this.isLive(key)) continue;
      const confirmed = this.confirmations.confirmed(key, now);
      if (!confirmed && !core.detectors.isMonitoring(key)) continue;
      const available = core.detectors.isAvailable(key, now) && !confirmed;
      if (!available && !core.unreachableSince.has(key)) {
        core.unreachableSince.set(key, now);
        // Only reachable members are clock references: this one's last reading ages from here on.
        this.clock.forget(key);
        core.logger.warn({ member: key, phi: core.detectors.phi(key, now), confirmed }, 'marking member unreachable');
        const address = core.gossip.members.get(key)?.address.toString();
        if (address !== undefined && this.timeline !== undefined) {
          this.timeline.open(address, now - (this.lastAckAt.get(key) ?? now));
          this.timeline.reached(address, 'detected');
          if (confirmed) this.timeline.reached(address, 'suspected-confirmed');
        }
      } else if (available && core.unreachableSince.delete(key)) {
        core.logger.info({ member: key }, 'member reachable again');
      }
    }
  }

  /** Restarts the stable-after clock when what the decision depends on changed. */
  private observeTable(now: number): void {
    const { core } = this;
    const edges = core.edges();
    const counted = countedKeys(core.gossip.members);
    const edgesText = edges.map(edgeText).join(',');
    // The counted keys are compared as text only when the member map changed (a new list object).
    const sameCounted = counted === this.counted.list || counted.join(',') === this.counted.text;
    if (sameCounted && edgesText === this.edgesText) {
      this.counted = { list: counted, text: this.counted.text };
      return;
    }
    this.edgesText = edgesText;
    this.counted = { list: counted, text: counted.join(',') };
    this.stableSinceMs = now;
    if (edges.length === 0) this.firstUnreachableAtMs = undefined;
    else this.firstUnreachableAtMs ??= now;
  }

  private act(now: number): void {
    const { core } = this;
    const self = core.selfRecord();
    if (!self || !COUNTED_STATUSES.has(self.status) || this.firstUnreachableAtMs === undefined) return;
    const input = decisionInput(core.gossip);
    const { edges } = input;
    const decision = decideSplitBrain(input);
    if (decision.kind === 'down-own-side') {
      if (!decision.down.includes(core.selfKey) || now - this.firstUnreachableAtMs < core.config.minorityDownAfterMs)
        return;
      core.logger.warn(
        decisionFields(decision, edges),
        'this node is on a minority side of the cluster: downing itself',
      );
      this.downSelf();
    } else if (decision.kind === 'down-unreachable') {
      if (decision.leader !== core.selfKey) return;
      // Every member to down confirmed dead (and no indirectly connected ones): none of them can be running
      // anything, so there is nothing for stable-after to wait for. Otherwise the leader probes them.
      const confirmed =
        decision.indirectlyConnected.length === 0 &&
        decision.down.every((key) => this.confirmations.confirmed(key, now));
      if (!confirmed && now - this.stableSinceMs < core.config.stableAfterMs) {
        for (const key of decision.down) {
          const record = core.gossip.members.get(key);
          if (record !== undefined) this.confirmations.suspect(key, record.address);
        }
        return;
      }
      core.logger.warn(
        {
          members: decision.down,
          ...decisionFields(decision, edges),
          stableForMs: now - this.stableSinceMs,
          confirmedDead: confirmed,
        },
        confirmed
          ? 'downing members confirmed dead (their addresses refuse connections)'
          : "downing unreachable members (the leader's split-brain decision from the gossiped reachability table)",
      );
      const records = decision.down.flatMap((key) => {
        const r = core.gossip.members.get(key);
        if (r !== undefined) this.timeline?.reached(r.address.toString(), 'decided');
        return r && !isGone(r.status) ? [core.downed(r)] : [];
      });
      core.applyOwnChanges(records);
    }
  }

  /** One timer, at the earliest moment a monitored member turns unreachable or a decision delay runs out. */
  private plan(now: number): void {
    const { core } = this;
    let next: number | undefined;
    const consider = (at: number | undefined): void => {
      if (at !== undefined && at > now && (next === undefined || at < next)) next = at;
    };
    consider(this.rowDueAt);
    if (this.firstUnreachableAtMs !== undefined) {
      consider(this.stableSinceMs + core.config.stableAfterMs);
      consider(this.firstUnreachableAtMs + core.config.minorityDownAfterMs);
    }
    for (const key of this.lastAckAt.keys()) {
      if (core.unreachableSince.has(key) || !this.isLive(key)) continue;
      consider(core.detectors.unavailableAtMs(key));
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

  /** A member downed or removed whose record is still in the gossip. */
  private isDownStill(key: string): boolean {
    const status = this.core.gossip.members.get(key)?.status;
    return status !== undefined && isGone(status);
  }

  private isLive(key: string): boolean {
    const record = this.core.gossip.members.get(key);
    return record !== undefined && !isGone(record.status) && keyOf(record) !== this.core.selfKey;
  }
}

function edgeText(edge: UnreachableEdge): string {
  return `${edge.observer} -> ${edge.subject}`;
}

/** The decision and the table that led to it, for the one log line an action writes. */
function decisionFields(
  decision: Exclude<SplitBrainDecision, { kind: 'none' }>,
  edges: ReadonlyArray<UnreachableEdge>,
): Record<string, unknown> {
  return {
    decision: decision.kind,
    down: decision.down,
    indirectlyConnected: decision.indirectlyConnected,
    table: edges.map(edgeText),
  };
}

const countedKeyLists = new WeakMap<ReadonlyMap<string, MemberRecord>, readonly string[]>();

/** The keys of the members a decision counts, sorted; once per member map (this runs after every commit). */
function countedKeys(members: ReadonlyMap<string, MemberRecord>): readonly string[] {
  let keys = countedKeyLists.get(members);
  if (keys === undefined) {
    keys = [...members.entries()]
      .filter(([, r]) => COUNTED_STATUSES.has(r.status))
      .map(([key]) => key)
      .sort();
    countedKeyLists.set(members, keys);
  }
  return keys;
}
