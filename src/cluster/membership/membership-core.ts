// The state one node holds about the cluster, and the one path every change takes: `commit` runs the
// leader's transitions, pushes changed content at once, and fires the change events. In a cluster of up to
// NEWS_FANOUT + 1 members a change goes as the full state to every live member (cheap at that size, and the
// seen marks come back in one exchange); in a larger one only an urgent change is pushed (a downing, a
// leave, a reachability row: gossip-digest.ts isUrgent), as a delta to NEWS_FANOUT random members who pass
// it on (a node's own urgent change, such as the leader's downing, goes to every live member at once), while
// joins and moves to Up ride the periodic gossip. A member just downed is always told, so a
// downing decided elsewhere reaches the downed side through any member in between. The gossip exchange,
// reachability and self-lifecycle modules all read and change the state through this object.
import type { Logger } from '../../logging.js';
import type { NodeAddress } from '../address.js';
import type { ClusterChannel } from './cluster-channel.js';
import type { ClusterConfig } from './config.js';
import { Departures } from './departures.js';
import { FailureDetectorRegistry } from './failure-detector.js';
import {
  EMPTY_GOSSIP,
  keyOf,
  liveEdgesOf,
  reachabilityOf,
  sameContent,
  sameTombstones,
  statusRank,
  toWire,
  updateMembers,
  type GossipState,
  type MemberRecord,
} from './gossip.js';
import { deltaOf, isUrgent, seenBits, statusHash } from './gossip-digest.js';
import type { ClusterMessage } from './messages.js';
import { leaderActions } from './leader-actions.js';
import { isGone, type MemberInfo } from '../member.js';
import { compareAddresses } from '../member-order.js';
import { unreachableSubjects, type UnreachableEdge } from './reachability-table.js';
import type { Cancellable, Scheduler } from '../scheduler.js';

/** What the core is made from; it keeps each under the same name. */
export type MembershipCoreOptions = Pick<
  MembershipCore,
  'self' | 'incarnation' | 'selfKey' | 'config' | 'scheduler' | 'logger' | 'channel'
> &
  Partial<Pick<MembershipCore, 'random'>>;

/**
 * Up to this many + 1 members, a change is pushed in full to every live peer; above, an urgent change is
 * pushed as a delta to this many peers chosen at random, who pass it on: about N x NEWS_FANOUT small
 * messages per change (an epidemic of a few hops) rather than N x N full states.
 */
export const NEWS_FANOUT = 9;

/**
 * Whether a commit pushes changed content at once (as NEWS_FANOUT says) or leaves it to the periodic gossip;
 * `own`: this node's own change (its reachability row, a downing it decided, its own leave), which, when urgent,
 * goes as news to every live peer at once. A failover waits for every region to hear of a downing (a new
 * coordinator for their registrations, the coordinator for the downing itself): one hop through starved event
 * loops instead of an epidemic's two or three (issue 40). N small messages per change, where relaying cost
 * about N x NEWS_FANOUT; relays pass news on at random, a row from its own observer not at all.
 */
export type Spread = 'push' | 'own' | 'none';

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
  /** Members this node saw leave the view after reaching Up (Membership.departed). */
  readonly departures: Departures;
  started = false;
  joined = false;
  stopped = false;
  /** Timers cancelled when the membership stops. */
  readonly timers: Cancellable[] = [];
  /** Runs after every commit, before change listeners: the self-lifecycle watches this node's record. */
  afterCommit: () => void = () => undefined;
  /**
   * Whether this node's probes confirm a member's process gone (MemberInfo.confirmedDead). The reachability
   * module holds that evidence and answers for it; until it does, nothing is confirmed.
   */
  deathConfirmed: (key: string) => boolean = () => false;

  private viewDigest = '';
  /** Live peers' keys by address, built once per member map (isLivePeer, liveKeyAt). */
  private livePeerIndex:
    { readonly members: ReadonlyMap<string, MemberRecord>; readonly keys: ReadonlyMap<string, string> } | undefined;
  private viewInputs: { readonly members: unknown; readonly table: unknown; readonly own: string } | undefined;
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
    this.departures = new Departures(options.config.tombstoneTtlMs);
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
      ...(key !== this.selfKey && this.deathConfirmed(key) ? { confirmedDead: true } : {}),
    };
  }

  /** Other members that are neither down nor removed. */
  livePeers(): MemberRecord[] {
    return [...this.gossip.members.entries()]
      .filter(([key, r]) => key !== this.selfKey && !isGone(r.status))
      .map(([, r]) => r);
  }

  /**
   * The key of the live peer at `address` (one of `livePeers()`), if there is one: asked of every status and
   * news, so indexed once per member map.
   */
  liveKeyAt(address: NodeAddress): string | undefined {
    const members = this.gossip.members;
    if (this.livePeerIndex?.members !== members) {
      const keys = new Map<string, string>();
      for (const [key, r] of members)
        if (key !== this.selfKey && !isGone(r.status)) keys.set(r.address.toString(), key);
      this.livePeerIndex = { members, keys };
    }
    return this.livePeerIndex.keys.get(address.toString());
  }

  /** Whether `address` is one of `livePeers()`. */
  isLivePeer(address: NodeAddress): boolean {
    return this.liveKeyAt(address) !== undefined;
  }

  /** Members some live member observes as unreachable: the merged table, and this node's own detectors. */
  unreachableKeys(): ReadonlySet<string> {
    const keys = unreachableSubjects(this.edges());
    for (const key of this.unreachableSince.keys()) keys.add(key);
    return keys;
  }

  /** The merged table's observations between members that are neither down nor removed. */
  edges(): UnreachableEdge[] {
    return liveEdgesOf(this.gossip);
  }

  /** The full state. One message object per state: a transport encodes it once however many peers get it. */
  sendGossip(to: NodeAddress): void {
    this.channel.send(
      to,
      cached(this.gossip, gossipMessages, (state) => ({ type: 'Gossip', gossip: toWire(state) })),
    );
  }

  /** The state's hash and seen marks: the periodic gossip, and the answer to gossip that only lacked seen marks. */
  sendStatus(to: NodeAddress): void {
    this.channel.send(
      to,
      cached(this.gossip, statusMessages, (state) => ({
        type: 'GossipStatus',
        hash: statusHash(state),
        seen: seenBits(state),
      })),
    );
  }

  /** The record marked down by this node now; an earlier decision gossiped by another node wins in the merge. */
  downed(record: MemberRecord): MemberRecord {
    return {
      ...record,
      status: 'down',
      downedAtMs: record.downedAtMs ?? Math.max(0, Math.floor(this.scheduler.now())),
    };
  }

  onChange(listener: () => void): () => void {
    return subscribe(this.changeListeners, listener);
  }

  applyOwnChanges(records: ReadonlyArray<MemberRecord>): void {
    this.commit(updateMembers(this.gossip, records, this.selfKey), 'own');
  }

  /**
   * Installs a new state: runs the leader's transitions on it, pushes changed content unless `spread` is
   * 'none' (always when the leader moved someone), forgets members that are gone, and fires the events the
   * change implies. Returns the addresses the whole new state was pushed to (not those sent a delta).
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
      for (const t of transitions)
        this.logger.info({ member: keyOf(t), status: t.status, upNumber: t.upNumber }, 'leader moves member');
      state = updateMembers(state, transitions, this.selfKey);
    }
    this.gossip = state;
    // Before the change listeners: a coordinator starting on this change reads the departures.
    this.departures.observe(before, state, this.scheduler.now());
    let pushedTo: ReadonlySet<string> = new Set();
    if (!sameContent(state, before) || !sameTombstones(state, before)) {
      pushedTo = this.afterContentChange(before, spread === 'none' && transitions.length > 0 ? 'push' : spread);
    }
    this.afterCommit();
    this.notifyIfViewChanged();
    return pushedTo;
  }

  notifyIfViewChanged(): void {
    // The view is a function of the member map, the table and this node's own detectors: skip the O(N)
    // digest when none of them changed (most commits only add seen marks).
    const inputs = {
      members: this.gossip.members,
      table: reachabilityOf(this.gossip),
      own: [...this.unreachableSince.keys()].join(','),
    };
    const last = this.viewInputs;
    this.viewInputs = inputs;
    if (last !== undefined && last.members === inputs.members && last.table === inputs.table && last.own === inputs.own)
      return;
    const digest = this.members()
      .map(
        (m) =>
          `${m.address.toString()}|${m.status}|${m.upNumber}|${m.reachable ? 1 : 0}|${m.downedAtMs ?? ''}|${m.confirmedDead ? 1 : 0}`,
      )
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
    const peers = this.livePeers();
    const small = peers.length <= NEWS_FANOUT;
    const targets = new Map<string, NodeAddress>();
    if (small || isUrgent(before, this.gossip))
      for (const r of spread === 'own' ? peers : pickPeers(peers, this.random))
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
    } else if (targets.size > 0) {
      const news: ClusterMessage = { type: 'GossipNews', gossip: toWire(deltaOf(before, this.gossip)) };
      for (const address of targets.values()) this.channel.send(address, news);
    }
    return fullTo;
  }
}

const gossipMessages = new WeakMap<GossipState, ClusterMessage>();
const statusMessages = new WeakMap<GossipState, ClusterMessage>();

function cached(
  state: GossipState,
  cache: WeakMap<GossipState, ClusterMessage>,
  build: (state: GossipState) => ClusterMessage,
): ClusterMessage {
  let message = cache.get(state);
  if (message === undefined) cache.set(state, (message = build(state)));
  return message;
}

/** Every live peer while there are at most NEWS_FANOUT of them, else that many at random. */
function pickPeers(peers: MemberRecord[], random: () => number): MemberRecord[] {
  if (peers.length <= NEWS_FANOUT) return peers;
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
