import { keyOf, memberKey, reachabilityOf, updateReachability as withTable } from './gossip.js';
import { ringOrder, targetsOnRing } from './heartbeat-ring.js';
import { isGone } from './member.js';
import { withOwnRow } from './reachability-table.js';
import { decideSplitBrain } from './split-brain-decision.js';
import { COUNTED_STATUSES } from './member.js';
/** Heartbeat intervals without an ack after which the connection to a member is replaced. */
export const RECONNECT_AFTER_INTERVALS = 2;
export class Reachability {
    core;
    downSelf;
    sequence = 0;
    /** When each monitored member last acked a heartbeat (or when heartbeats to it started). */
    lastAckAt = new Map();
    deadline;
    /** What the decision depends on (live edges, counted members), as of `stableSinceMs`. */
    /** What the decision last depended on: the edges, and the members it counts. */
    edgesText = '';
    counted = { list: [], text: '' };
    stableSinceMs = 0;
    /** When the table last went from no unreachable member to some; undefined while there is none. */
    firstUnreachableAtMs;
    ringCache;
    /** `downSelf` is called when this node finds itself on a minority side. */
    constructor(core, downSelf) {
        this.core = core;
        this.downSelf = downSelf;
    }
    onHeartbeat(from, message) {
        const { core } = this;
        const key = memberKey(from, message.incarnation);
        const record = core.gossip.members.get(key);
        if ((record && isGone(record.status)) || core.gossip.tombstones.has(key)) {
            // A downed or removed node still running: tell it, instead of keeping it alive.
            core.sendGossip(from);
            return;
        }
        if (record)
            core.detectors.alive(key, core.scheduler.now());
        core.channel.send(from, { type: 'HeartbeatAck', sequence: message.sequence, incarnation: core.incarnation });
    }
    onHeartbeatAck(from, message) {
        const key = memberKey(from, message.incarnation);
        const record = this.core.gossip.members.get(key);
        if (record && !isGone(record.status) && this.lastAckAt.has(key)) {
            const now = this.core.scheduler.now();
            this.core.detectors.heartbeat(key, now);
            this.lastAckAt.set(key, now);
        }
    }
    /** Every heartbeatIntervalMs: heartbeats to the members of this node's ring segment, then an evaluation. */
    tick() {
        const { core } = this;
        if (!core.joined || core.stopped)
            return;
        const now = core.scheduler.now();
        const reconnectAfterMs = RECONNECT_AFTER_INTERVALS * core.config.heartbeatIntervalMs;
        const targets = new Set(this.targets());
        // A member this node no longer monitors: its detector would only go stale, and this node can no longer vouch for it.
        for (const key of [...this.lastAckAt.keys()]) {
            if (targets.has(key))
                continue;
            this.lastAckAt.delete(key);
            core.detectors.remove(key);
            core.unreachableSince.delete(key);
        }
        for (const key of targets) {
            const record = core.gossip.members.get(key);
            if (record === undefined)
                continue;
            // Start the clock on first contact, so a member that never answers still becomes unreachable.
            if (!core.detectors.isMonitoring(key))
                core.detectors.heartbeat(key, now);
            const lastAck = this.lastAckAt.get(key);
            if (lastAck === undefined)
                this.lastAckAt.set(key, now);
            // Before the heartbeat, so the heartbeat is what dials the new connection.
            else if (now - lastAck >= reconnectAfterMs)
                core.channel.reconnect(record.address);
            core.channel.send(record.address, { type: 'Heartbeat', sequence: ++this.sequence, incarnation: core.incarnation });
        }
        this.evaluate();
    }
    /** After every commit: a table merged from gossip may restart the stable-after clock or move a deadline. */
    onCommitted() {
        const { core } = this;
        if (!core.joined || core.stopped)
            return;
        const now = core.scheduler.now();
        this.observeTable(now);
        this.plan(now);
    }
    stop() {
        this.deadline?.timer.cancel();
        this.deadline = undefined;
    }
    /**
     * The members this node heartbeats: its segment of the ring of live members. When this node itself sees
     * every member of its plain segment unreachable, it may be the one cut off: it then monitors every live
     * member, so that it learns within one detection period whether it is on a minority side (the ring alone
     * would tell it only k members at a time) and can down itself before the majority acts.
     */
    targets() {
        const { core } = this;
        const ring = this.ring();
        const k = core.config.monitoredByNrOfMembers;
        const segment = targetsOnRing(ring, core.selfKey, k);
        if (segment.length > 0 && segment.length < ring.length - 1 && segment.every((key) => core.unreachableSince.has(key))) {
            return ring.map((m) => m.key).filter((key) => key !== core.selfKey);
        }
        return targetsOnRing(ring, core.selfKey, k, core.unreachableKeys());
    }
    /** The ring of live members, sorted once per member-map change rather than on every tick. */
    ring() {
        const members = this.core.gossip.members;
        if (this.ringCache?.members !== members) {
            const live = [...members.entries()].filter(([, r]) => !isGone(r.status)).map(([key, r]) => ({ key, address: r.address }));
            this.ringCache = { members, ring: ringOrder(live) };
        }
        return this.ringCache.ring;
    }
    /** Updates this node's row and applies the decision as of now, then sets the timer for the next change. */
    evaluate() {
        const { core } = this;
        if (!core.joined || core.stopped)
            return;
        const now = core.scheduler.now();
        this.updateObservations(now);
        const own = new Set([...core.unreachableSince.keys()].filter((key) => this.isLive(key)));
        const table = withOwnRow(reachabilityOf(core.gossip), core.selfKey, own);
        core.commit(withTable(core.gossip, table, core.selfKey), 'push');
        if (core.stopped)
            return;
        this.observeTable(now);
        this.act(now);
        if (core.stopped)
            return;
        core.commit(core.gossip, 'none');
        if (!core.stopped)
            this.plan(now);
    }
    updateObservations(now) {
        const { core } = this;
        for (const key of this.lastAckAt.keys()) {
            if (!this.isLive(key) || !core.detectors.isMonitoring(key))
                continue;
            const available = core.detectors.isAvailable(key, now);
            if (!available && !core.unreachableSince.has(key)) {
                core.unreachableSince.set(key, now);
                core.logger.warn({ member: key, phi: core.detectors.phi(key, now) }, 'marking member unreachable');
            }
            else if (available && core.unreachableSince.delete(key)) {
                core.logger.info({ member: key }, 'member reachable again');
            }
        }
    }
    /** Restarts the stable-after clock when what the decision depends on changed. */
    observeTable(now) {
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
        if (edges.length === 0)
            this.firstUnreachableAtMs = undefined;
        else
            this.firstUnreachableAtMs ??= now;
    }
    act(now) {
        const { core } = this;
        const self = core.selfRecord();
        if (!self || !COUNTED_STATUSES.has(self.status) || this.firstUnreachableAtMs === undefined)
            return;
        const edges = core.edges();
        const decision = decideSplitBrain({ members: [...core.gossip.members.entries()].map(([key, r]) => ({ key, address: r.address, status: r.status })), edges });
        if (decision.kind === 'down-own-side') {
            if (!decision.down.includes(core.selfKey) || now - this.firstUnreachableAtMs < core.config.minorityDownAfterMs)
                return;
            core.logger.warn(decisionFields(decision, edges), 'this node is on a minority side of the cluster: downing itself');
            this.downSelf();
        }
        else if (decision.kind === 'down-unreachable') {
            if (decision.leader !== core.selfKey || now - this.stableSinceMs < core.config.stableAfterMs)
                return;
            core.logger.warn({ members: decision.down, ...decisionFields(decision, edges), stableForMs: now - this.stableSinceMs }, 'downing unreachable members (the leader\'s split-brain decision from the gossiped reachability table)');
            const records = decision.down.flatMap((key) => {
                const r = core.gossip.members.get(key);
                return r && !isGone(r.status) ? [core.downed(r)] : [];
            });
            core.applyOwnChanges(records);
        }
    }
    /** One timer, at the earliest moment a monitored member turns unreachable or a decision delay runs out. */
    plan(now) {
        const { core } = this;
        let next;
        const consider = (at) => {
            if (at !== undefined && at > now && (next === undefined || at < next))
                next = at;
        };
        if (this.firstUnreachableAtMs !== undefined) {
            consider(this.stableSinceMs + core.config.stableAfterMs);
            consider(this.firstUnreachableAtMs + core.config.minorityDownAfterMs);
        }
        for (const key of this.lastAckAt.keys()) {
            if (core.unreachableSince.has(key) || !this.isLive(key))
                continue;
            consider(core.detectors.unavailableAtMs(key));
        }
        if (next === undefined) {
            this.stop();
            return;
        }
        if (this.deadline?.atMs === next)
            return;
        this.stop();
        const timer = core.scheduler.setTimeout(() => {
            this.deadline = undefined;
            this.evaluate();
        }, next - now);
        this.deadline = { atMs: next, timer };
    }
    isLive(key) {
        const record = this.core.gossip.members.get(key);
        return record !== undefined && !isGone(record.status) && keyOf(record) !== this.core.selfKey;
    }
}
function edgeText(edge) {
    return `${edge.observer} -> ${edge.subject}`;
}
/** The decision and the table that led to it, for the one log line an action writes. */
function decisionFields(decision, edges) {
    return { decision: decision.kind, down: decision.down, indirectlyConnected: decision.indirectlyConnected, table: edges.map(edgeText) };
}
const countedKeyLists = new WeakMap();
/** The keys of the members a decision counts, sorted; once per member map (this runs after every commit). */
function countedKeys(members) {
    let keys = countedKeyLists.get(members);
    if (keys === undefined) {
        keys = [...members.entries()].filter(([, r]) => COUNTED_STATUSES.has(r.status)).map(([key]) => key).sort();
        countedKeyLists.set(members, keys);
    }
    return keys;
}
//# sourceMappingURL=reachability.js.map