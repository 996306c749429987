import { FailureDetectorRegistry } from './failure-detector.js';
import { EMPTY_GOSSIP, keyOf, reachabilityOf, sameContent, sameTombstones, statusRank, toWire, updateMembers } from './gossip.js';
import { deltaOf, isUrgent, seenBits, statusHash } from './gossip-digest.js';
import { leaderActions } from './leader-actions.js';
import { isGone } from './member.js';
import { compareAddresses } from './member-order.js';
import { liveEdges, unreachableSubjects } from './reachability-table.js';
/**
 * Up to this many + 1 members, a change is pushed in full to every live peer; above, an urgent change is
 * pushed as a delta to this many peers chosen at random, who pass it on: about N x NEWS_FANOUT small
 * messages per change (an epidemic of a few hops) rather than N x N full states.
 */
export const NEWS_FANOUT = 9;
export class MembershipCore {
    self;
    incarnation;
    selfKey;
    config;
    scheduler;
    logger;
    channel;
    detectors;
    /** Chooses the peers news is passed on to; default Math.random. */
    random;
    gossip = EMPTY_GOSSIP;
    /** When this node's own failure detector started to consider each monitored member unreachable. */
    unreachableSince = new Map();
    joiningSince = new Map();
    started = false;
    joined = false;
    stopped = false;
    /** Timers cancelled when the membership stops. */
    timers = [];
    /** Runs after every commit, before change listeners: the self-lifecycle watches this node's record. */
    afterCommit = () => undefined;
    viewDigest = '';
    livePeerIndex;
    viewInputs;
    changeListeners = new Set();
    constructor(options) {
        this.self = options.self;
        this.incarnation = options.incarnation;
        this.selfKey = options.selfKey;
        this.config = options.config;
        this.scheduler = options.scheduler;
        this.logger = options.logger;
        this.channel = options.channel;
        this.random = options.random ?? Math.random;
        this.detectors = new FailureDetectorRegistry(options.config.failureDetector);
    }
    selfRecord() {
        return this.gossip.members.get(this.selfKey);
    }
    members() {
        const unreachable = this.unreachableKeys();
        return [...this.gossip.members.values()]
            .filter((r) => r.status !== 'removed')
            .sort((a, b) => compareAddresses(a.address, b.address) || (a.incarnation < b.incarnation ? -1 : 1))
            .map((r) => this.info(r, unreachable));
    }
    /** `reachable` is false when any live member (this one included) observes the member as unreachable. */
    info(record, unreachable = this.unreachableKeys()) {
        const key = keyOf(record);
        const reachable = key === this.selfKey || (!isGone(record.status) && !unreachable.has(key));
        return {
            address: record.address,
            status: record.status,
            appVersion: record.appVersion,
            upNumber: record.upNumber,
            reachable,
            roles: record.roles,
            ...(record.attributes === undefined ? {} : { attributes: record.attributes }),
            ...(record.downedAtMs === undefined ? {} : { downedAtMs: record.downedAtMs }),
        };
    }
    /** Other members that are neither down nor removed. */
    livePeers() {
        return [...this.gossip.members.entries()].filter(([key, r]) => key !== this.selfKey && !isGone(r.status)).map(([, r]) => r);
    }
    /** Whether `address` is one of `livePeers()`: asked of every status and news, so indexed once per member map. */
    isLivePeer(address) {
        const members = this.gossip.members;
        if (this.livePeerIndex?.members !== members) {
            this.livePeerIndex = { members, addresses: new Set(this.livePeers().map((r) => r.address.toString())) };
        }
        return this.livePeerIndex.addresses.has(address.toString());
    }
    /** Members some live member observes as unreachable: the merged table, and this node's own detectors. */
    unreachableKeys() {
        const keys = unreachableSubjects(this.edges());
        for (const key of this.unreachableSince.keys())
            keys.add(key);
        return keys;
    }
    /** The merged table's observations between members that are neither down nor removed. */
    edges() {
        return liveEdges(reachabilityOf(this.gossip), (key) => {
            const record = this.gossip.members.get(key);
            return record !== undefined && !isGone(record.status);
        });
    }
    /** The full state. One message object per state: a transport encodes it once however many peers get it. */
    sendGossip(to) {
        this.channel.send(to, cached(this.gossip, gossipMessages, (state) => ({ type: 'Gossip', gossip: toWire(state) })));
    }
    /** The state's hash and seen marks: the periodic gossip, and the answer to gossip that only lacked seen marks. */
    sendStatus(to) {
        this.channel.send(to, cached(this.gossip, statusMessages, (state) => ({ type: 'GossipStatus', hash: statusHash(state), seen: seenBits(state) })));
    }
    /** The record marked down by this node now; an earlier decision gossiped by another node wins in the merge. */
    downed(record) {
        return { ...record, status: 'down', downedAtMs: record.downedAtMs ?? Math.max(0, Math.floor(this.scheduler.now())) };
    }
    onChange(listener) {
        return subscribe(this.changeListeners, listener);
    }
    applyOwnChanges(records) {
        this.commit(updateMembers(this.gossip, records, this.selfKey), 'push');
    }
    /**
     * Installs a new state: runs the leader's transitions on it, pushes changed content unless `spread` is
     * 'none' (always when the leader moved someone), forgets members that are gone, and fires the events the
     * change implies. Returns the addresses the whole new state was pushed to (not those sent a delta).
     */
    commit(next, spread) {
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
            for (const t of transitions)
                this.logger.info({ member: keyOf(t), status: t.status, upNumber: t.upNumber }, 'leader moves member');
            state = updateMembers(state, transitions, this.selfKey);
        }
        this.gossip = state;
        let pushedTo = new Set();
        if (!sameContent(state, before) || !sameTombstones(state, before)) {
            pushedTo = this.afterContentChange(before, transitions.length > 0 ? 'push' : spread);
        }
        this.afterCommit();
        this.notifyIfViewChanged();
        return pushedTo;
    }
    notifyIfViewChanged() {
        // The view is a function of the member map, the table and this node's own detectors: skip the O(N)
        // digest when none of them changed (most commits only add seen marks).
        const inputs = { members: this.gossip.members, table: reachabilityOf(this.gossip), own: [...this.unreachableSince.keys()].join(',') };
        const last = this.viewInputs;
        this.viewInputs = inputs;
        if (last !== undefined && last.members === inputs.members && last.table === inputs.table && last.own === inputs.own)
            return;
        const digest = this.members()
            .map((m) => `${m.address.toString()}|${m.status}|${m.upNumber}|${m.reachable ? 1 : 0}|${m.downedAtMs ?? ''}`)
            .join(',');
        if (digest === this.viewDigest)
            return;
        this.viewDigest = digest;
        for (const listener of [...this.changeListeners])
            this.safely(listener, 'onChange listener');
    }
    safely(fn, what) {
        try {
            fn();
        }
        catch (error) {
            this.logger.error({ err: error instanceof Error ? error.message : String(error) }, `${what} threw`);
        }
    }
    afterContentChange(before, spread) {
        const now = this.scheduler.now();
        const newlyGone = [];
        for (const [key, record] of this.gossip.members) {
            if (record.status === 'joining') {
                if (!this.joiningSince.has(key))
                    this.joiningSince.set(key, now);
            }
            else {
                this.joiningSince.delete(key);
            }
            const previous = before.members.get(key);
            if (isGone(record.status)) {
                this.detectors.remove(key);
                this.unreachableSince.delete(key);
                if (key !== this.selfKey && (!previous || statusRank(previous.status) < statusRank(record.status))) {
                    newlyGone.push(record.address);
                }
            }
            if (!previous || previous.status !== record.status) {
                this.logger.debug({ member: key, from: previous?.status, to: record.status }, 'member status changed');
            }
        }
        if (spread === 'none')
            return new Set();
        const peers = this.livePeers();
        const small = peers.length <= NEWS_FANOUT;
        const targets = new Map();
        if (small || isUrgent(before, this.gossip))
            for (const r of pickPeers(peers, this.random))
                targets.set(r.address.toString(), r.address);
        // Members just downed or removed are told directly, in full: they are no longer gossip targets.
        for (const address of newlyGone) {
            this.sendGossip(address);
            targets.delete(address.toString());
        }
        const fullTo = new Set(newlyGone.map(String));
        if (small) {
            for (const [key, address] of targets) {
                this.sendGossip(address);
                fullTo.add(key);
            }
        }
        else if (targets.size > 0) {
            const news = { type: 'GossipNews', gossip: toWire(deltaOf(before, this.gossip)) };
            for (const address of targets.values())
                this.channel.send(address, news);
        }
        return fullTo;
    }
}
const gossipMessages = new WeakMap();
const statusMessages = new WeakMap();
function cached(state, cache, build) {
    let message = cache.get(state);
    if (message === undefined)
        cache.set(state, (message = build(state)));
    return message;
}
/** Every live peer while there are at most NEWS_FANOUT of them, else that many at random. */
function pickPeers(peers, random) {
    if (peers.length <= NEWS_FANOUT)
        return peers;
    for (let i = 0; i < NEWS_FANOUT; i++) {
        const j = i + Math.floor(random() * (peers.length - i));
        [peers[i], peers[j]] = [peers[j], peers[i]];
    }
    return peers.slice(0, NEWS_FANOUT);
}
export function subscribe(set, fn) {
    // A fresh wrapper per call, so one function registered twice is two registrations with separate unsubscribes.
    const entry = (...args) => fn(...args);
    set.add(entry);
    return () => {
        set.delete(entry);
    };
}
//# sourceMappingURL=membership-core.js.map