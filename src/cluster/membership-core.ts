// The state one node holds about the cluster, and the one path every change takes: `commit` runs the
// leader's transitions, pushes changed content at once (own decisions to every live member; news merged
// from others to every live member too in a cluster of up to NEWS_FANOUT + 1, to NEWS_FANOUT random ones in
// a larger one; a member just downed is always told, so a downing decided elsewhere reaches the downed side
// through any member in between), and fires the change events. The gossip exchange, reachability and self-lifecycle modules
// all read and change the state through this object.
import type { Logger } from '../logging.js';
import type { NodeAddress } from './address.js';
import type { ClusterChannel } from './cluster-channel.js';
import type { ClusterConfig } from './config.js';
import { FailureDetectorRegistry } from './failure-detector.js';
import { EMPTY_GOSSIP, keyOf, reachabilityOf, stateDigest, statusRank, toWire, updateMembers, type GossipState, type MemberRecord } from './gossip.js';
import { leaderActions } from './leader-actions.js';
import { isGone, type MemberInfo } from './member.js';
import { compareAddresses } from './member-order.js';
import { liveEdges, unreachableSubjects, type UnreachableEdge } from './reachability-table.js';
import type { Cancellable, Scheduler } from './scheduler.js';

/** What the core is made from; it keeps each under the same name. */
export type MembershipCoreOptions = Pick<MembershipCore, 'self' | 'incarnation' | 'selfKey' | 'config' | 'scheduler' | 'logger' | 'channel'> &
  Partial<Pick<MembershipCore, 'random'>>;

/**
 * How news merged from another node's gossip is passed on: to every live peer while the cluster has at most
 * this many + 1 members (as before), else to this many peers chosen at random, so one change costs about
 * N x NEWS_FANOUT messages (an epidemic of a few hops) rather than N x N. This node's own decisions still go
 * to every live peer at once.
 */
export const NEWS_FANOUT = 9;

/** Whom a commit pushes changed content to: every live peer, NEWS_FANOUT random ones, or nobody. */
export type Spread = 'all' | 'fanout' | 'none';

export class MembershipCore {
  readonly self: NodeAddress;
  readonly incarnation: string;
  readonly selfKey: string;
  readonly config: ClusterConfig;
  readonly scheduler: Scheduler;
  readonly logger: Logger;
  readonly channel: ClusterChannel;
  readonly detectors: FailureDetectorRegistry;
  /** Chooses the peers news is passed on to; default Math.random. */
  readonly random: () => number;

  gossip: GossipState = EMPTY_GOSSIP;
  /** When this node's own failure detector started to consider each monitored member unreachable. */
  readonly unreachableSince = new Map<string, number>();
  readonly joiningSince = new Map<string, number>();
  started = false;
  joined = false;
  stopped = false;
  /** Timers cancelled when the membership stops. */
  readonly timers: Cancellable[] = [];
  /** Runs after every commit, before change listeners: the self-lifecycle watches this node's record. */
  afterCommit: () => void = () => undefined;

  private viewDigest = '';
  private readonly changeListeners = new Set<() => void>();

  constructor(options: MembershipCoreOptions) {
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

  selfRecord(): MemberRecord | undefined {
    return this.gossip.members.get(this.selfKey);
  }

  members(): MemberInfo[] {
    const unreachable = this.unreachableKeys();
    return [...this.gossip.members.values()]
      .filter((r) => r.status !== 'removed')
      .sort((a, b) => compareAddresses(a.address, b.address) || (a.incarnation < b.incarnation ? -1 : 1))
      .map((r) => this.info(r, unreachable));
  }

  /** `reachable` is false when any live member (this one included) observes the member as unreachable. */
  info(record: MemberRecord, unreachable: ReadonlySet<string> = this.unreachableKeys()): MemberInfo {
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
  livePeers(): MemberRecord[] {
    return [...this.gossip.members.entries()].filter(([key, r]) => key !== this.selfKey && !isGone(r.status)).map(([, r]) => r);
  }

  /** Members some live member observes as unreachable: the merged table, and this node's own detectors. */
  unreachableKeys(): ReadonlySet<string> {
    const keys = unreachableSubjects(this.edges());
    for (const key of this.unreachableSince.keys()) keys.add(key);
    return keys;
  }

  /** The merged table's observations between members that are neither down nor removed. */
  edges(): UnreachableEdge[] {
    return liveEdges(reachabilityOf(this.gossip), (key) => {
      const record = this.gossip.members.get(key);
      return record !== undefined && !isGone(record.status);
    });
  }

  sendGossip(to: NodeAddress): void {
    this.channel.send(to, { type: 'Gossip', gossip: toWire(this.gossip) });
  }

  /** The record marked down by this node now; an earlier decision gossiped by another node wins in the merge. */
  downed(record: MemberRecord): MemberRecord {
    return { ...record, status: 'down', downedAtMs: record.downedAtMs ?? Math.max(0, Math.floor(this.scheduler.now())) };
  }

  onChange(listener: () => void): () => void {
    return subscribe(this.changeListeners, listener);
  }

  applyOwnChanges(records: ReadonlyArray<MemberRecord>): void {
    this.commit(updateMembers(this.gossip, records, this.selfKey), 'all');
  }

  /**
   * Installs a new state: runs the leader's transitions on it, pushes changed content as `spread` says (to
   * every live member when the leader moved someone), forgets members that are gone, and fires the events
   * the change implies. Returns the addresses the new state was pushed to.
   */
  commit(next: GossipState, spread: Spread): ReadonlySet<string> {
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
    let pushedTo: ReadonlySet<string> = new Set();
    if (stateDigest(state) !== stateDigest(before)) {
      pushedTo = this.afterContentChange(before, transitions.length > 0 ? 'all' : spread);
    }
    this.afterCommit();
    this.notifyIfViewChanged();
    return pushedTo;
  }

  notifyIfViewChanged(): void {
    const digest = this.members()
      .map((m) => `${m.address.toString()}|${m.status}|${m.upNumber}|${m.reachable ? 1 : 0}|${m.downedAtMs ?? ''}`)
      .join(',');
    if (digest === this.viewDigest) return;
    this.viewDigest = digest;
    for (const listener of [...this.changeListeners]) this.safely(listener, 'onChange listener');
  }

  safely(fn: () => void, what: string): void {
    try {
      fn();
    } catch (error) {
      this.logger.error({ err: error instanceof Error ? error.message : String(error) }, `${what} threw`);
    }
  }

  private pushTargets(spread: Spread): MemberRecord[] {
    return pickPeers(this.livePeers(), spread, this.random);
  }

  private afterContentChange(before: GossipState, spread: Spread): ReadonlySet<string> {
    const now = this.scheduler.now();
    const newlyGone: NodeAddress[] = [];
    for (const [key, record] of this.gossip.members) {
      if (record.status === 'joining') {
        if (!this.joiningSince.has(key)) this.joiningSince.set(key, now);
      } else {
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
    if (spread === 'none') return new Set();
    const targets = new Map<string, NodeAddress>();
    for (const r of this.pushTargets(spread)) targets.set(r.address.toString(), r.address);
    // Members just downed or removed are told directly: they are no longer gossip targets.
    for (const address of newlyGone) targets.set(address.toString(), address);
    for (const address of targets.values()) this.sendGossip(address);
    return new Set(targets.keys());
  }
}

/** Every live peer, or (for 'fanout' in a cluster larger than NEWS_FANOUT + 1) that many of them at random. */
function pickPeers(peers: MemberRecord[], spread: Spread, random: () => number): MemberRecord[] {
  if (spread !== 'fanout' || peers.length <= NEWS_FANOUT) return peers;
  for (let i = 0; i < NEWS_FANOUT; i++) {
    const j = i + Math.floor(random() * (peers.length - i));
    [peers[i], peers[j]] = [peers[j]!, peers[i]!];
  }
  return peers.slice(0, NEWS_FANOUT);
}

export function subscribe<A extends unknown[], R>(set: Set<(...args: A) => R>, fn: (...args: A) => R): () => void {
  // A fresh wrapper per call, so one function registered twice is two registrations with separate unsubscribes.
  const entry = (...args: A): R => fn(...args);
  set.add(entry);
  return () => {
    set.delete(entry);
  };
}
