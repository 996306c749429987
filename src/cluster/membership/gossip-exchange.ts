// The gossip exchange: welcoming joining nodes, merging received gossip and news (and passing on what it
// changed, like any own change), the periodic exchange with one peer, and pruning removed members into
// tombstones. The periodic gossip is a status (a hash and the seen marks, Pekko's GossipStatus), and a peer
// answers with its full state only when the hashes differ: once the cluster agrees, and after a change
// that reached everyone as news, gossip costs about a hundred bytes a second per node whatever its size.
// Every gossip and news passes the sender rules first (gossip-guard.ts), and only from a live member; a
// node not yet joined takes gossip only from a seed it sent its Join to.
// The state itself and how a change is installed live in membership-core.ts.
import type { NodeAddress } from '../address.js';
import { AuthorAsks } from './author-asks.js';
import { admitGossip, type Admitted } from './gossip-guard.js';
import {
  fromWire,
  keyOf,
  memberKey,
  mergeGossip,
  pruneMembers,
  sameContent,
  sameTombstones,
  type GossipState,
  type MemberRecord,
} from './gossip.js';
import { knowsMoreSeen, onlyRowOf, statusHash, withSeenBits } from './gossip-digest.js';
import { isGone } from '../member.js';
import { NEWS_FANOUT, type MembershipCore } from './membership-core.js';
import type { ClusterMessage, WireGossip } from './messages.js';
import type { SelfLifecycle } from './self-lifecycle.js';

type Join = Extract<ClusterMessage, { type: 'Join' }>;
type GossipStatus = Extract<ClusterMessage, { type: 'GossipStatus' }>;

export class GossipExchange {
  // When this node first saw each member as removed; the record is pruned removedRetentionMs later.
  private readonly removedSince = new Map<string, number>();
  private readonly asks: AuthorAsks;

  /** `random` chooses the gossip peer. */
  constructor(
    private readonly core: MembershipCore,
    private readonly lifecycle: SelfLifecycle,
    private readonly random: () => number,
  ) {
    this.asks = new AuthorAsks(core);
  }

  onJoin(from: NodeAddress, message: Join): void {
    const { core } = this;
    if (!core.joined) return;
    const key = memberKey(from, message.incarnation);
    const existing = core.gossip.members.get(key);
    if ((existing && isGone(existing.status)) || core.gossip.tombstones.has(key)) {
      core.logger.info(
        { member: key, status: existing?.status ?? 'pruned' },
        'ignoring join of a downed or removed incarnation',
      );
      core.sendGossip(from);
      return;
    }
    const changes: MemberRecord[] = [];
    for (const record of core.gossip.members.values()) {
      if (record.address.equals(from) && record.incarnation !== message.incarnation && !isGone(record.status)) {
        core.logger.info({ member: keyOf(record) }, 'a new incarnation of this node is joining: downing the old one');
        changes.push(core.downed(record));
      }
    }
    if (!existing) {
      core.logger.info({ member: key, appVersion: message.appVersion, roles: message.roles }, 'member joining');
      changes.push({
        address: from,
        incarnation: message.incarnation,
        status: 'joining',
        appVersion: message.appVersion,
        roles: [...message.roles],
        ...(message.attributes === undefined ? {} : { attributes: message.attributes }),
        upNumber: 0,
      });
    }
    if (changes.length > 0) core.applyOwnChanges(changes);
    if (!core.stopped) core.sendGossip(from);
  }

  onGossip(from: NodeAddress, wire: WireGossip): void {
    const { core } = this;
    const incoming = fromWire(wire);
    if (!core.joined) {
      // The welcome: only a seed this node asked to join may tell it what the cluster is.
      if (!core.config.seedNodes.some((seed) => seed.equals(from)) || !incoming.members.has(core.selfKey)) return;
      this.lifecycle.welcomed(from);
      core.commit(mergeGossip(core.gossip, incoming, core.selfKey), 'push');
      return;
    }
    // Gossip that does not know this node is from another cluster; gossip from a non-member changes nothing.
    if (!core.isLivePeer(from) || !(incoming.members.has(core.selfKey) || incoming.tombstones.has(core.selfKey)))
      return;
    const admitted = this.admit(from, incoming);
    if (admitted.state.tombstones.has(core.selfKey)) {
      this.lifecycle.selfTombstoned();
      return;
    }
    // What the merge changed is news to the other members too: pass it on at once, not on the next tick.
    const pushedTo = core.commit(mergeGossip(core.gossip, admitted.state, core.selfKey), 'push');
    this.asks.followUp(admitted);
    if (core.stopped || pushedTo.has(from.toString())) return;
    // Push-pull: the full state when the sender lacks content, only the seen marks when it lacks those.
    // Not after a hold-back: the states then differ by what was held back, and two peers each holding back
    // something of the other's would bounce states between them; the periodic gossip and the asks settle it.
    if (admitted.heldBack > 0) return;
    if (!sameContent(core.gossip, incoming) || !sameTombstones(core.gossip, incoming)) core.sendGossip(from);
    else if (hasSeenMissingFrom(core.gossip, incoming)) core.sendStatus(from);
  }

  /**
   * A delta of another member's urgent change (or an author's answer to GossipAsk): merged like gossip and passed on,
   * never answered.
   */
  onNews(from: NodeAddress, wire: WireGossip): void {
    const { core } = this;
    if (!core.joined || !core.isLivePeer(from)) return;
    const admitted = this.admit(from, fromWire(wire));
    if (admitted.state.tombstones.has(core.selfKey)) {
      this.lifecycle.selfTombstoned();
      return;
    }
    const before = core.gossip;
    const merged = mergeGossip(before, { ...admitted.state, seen: new Set() }, core.selfKey);
    // A row from its own observer went to every member at once (Reachability): passing it on would send each
    // observer's row N x NEWS_FANOUT times more, and a crash changes every observer's row at the same moment.
    const sender = core.liveKeyAt(from);
    core.commit(merged, sender !== undefined && onlyRowOf(before, merged, sender) ? 'none' : 'push');
    this.asks.followUp(admitted);
  }

  /** A member held back changes it could not attribute: this node's word on those keys. */
  onAsk(from: NodeAddress, keys: ReadonlyArray<string>): void {
    this.asks.answer(from, keys);
  }

  private admit(from: NodeAddress, incoming: GossipState): Admitted {
    const { core } = this;
    let leaders: ReadonlySet<string> | undefined;
    let unreachable: ReadonlySet<string> | undefined;
    return admitGossip(core.gossip, incoming, {
      selfKey: core.selfKey,
      sender: from,
      isLeader: (key) => (leaders ??= this.asks.leaderKeys()).has(key),
      isUnreachable: (key) => (unreachable ??= core.unreachableKeys()).has(key),
      relayedRows: core.livePeers().length > NEWS_FANOUT,
    });
  }

  /** A peer's hash and seen marks: the full state back when the hashes differ, else the seen marks merged. */
  onStatus(from: NodeAddress, status: GossipStatus): void {
    const { core } = this;
    if (!core.joined || !core.isLivePeer(from)) return;
    if (status.hash !== statusHash(core.gossip)) {
      core.sendGossip(from);
      return;
    }
    const next = withSeenBits(core.gossip, status.seen);
    if (next === undefined) {
      core.logger.debug(
        { from: from.toString(), bytes: status.seen.byteLength },
        'dropping a gossip status whose seen marks do not fit its hash',
      );
      return;
    }
    if (next !== core.gossip) core.commit(next, 'none');
    if (!core.stopped && knowsMoreSeen(core.gossip, status.seen)) core.sendStatus(from);
  }

  /** Every gossipIntervalMs: prune, run the leader's transitions, and gossip with one peer. */
  tick(): void {
    const { core } = this;
    if (!core.joined || core.stopped) return;
    this.pruneRemoved();
    core.commit(core.gossip, 'none');
    if (core.stopped) return;
    const peers = core.livePeers().filter((r) => !core.unreachableSince.has(keyOf(r)));
    const unseen = peers.filter((r) => !core.gossip.seen.has(keyOf(r)));
    const pool = unseen.length > 0 ? unseen : peers;
    const target = pool[Math.floor(this.random() * pool.length)];
    // A status even to a peer that has not seen this state (Pekko sends it the state): urgent changes
    // arrive as news, so the peer most likely holds the content already and only lacks seen marks; when it
    // does not, the hashes differ and the states follow.
    if (target !== undefined) core.sendStatus(target.address);
  }

  /** Turns records removed longer than removedRetentionMs into tombstones, and expires old tombstones. */
  private pruneRemoved(): void {
    const { core } = this;
    const now = core.scheduler.now();
    const due: string[] = [];
    for (const [key, record] of core.gossip.members) {
      if (record.status !== 'removed' || key === core.selfKey) continue;
      const since = this.removedSince.get(key) ?? now;
      this.removedSince.set(key, since);
      if (now - since >= core.config.removedRetentionMs) due.push(key);
    }
    for (const key of this.removedSince.keys())
      if (due.includes(key) || !core.gossip.members.has(key)) this.removedSince.delete(key);
    const next = pruneMembers(core.gossip, due, now, now - core.config.tombstoneTtlMs, core.selfKey);
    if (next === core.gossip) return;
    if (due.length > 0) core.logger.info({ members: due }, 'pruning removed members from the gossip');
    core.commit(next, 'none');
  }
}

/** Whether `mine` has seen marks that `theirs` (of the same content) lacks. */
function hasSeenMissingFrom(mine: GossipState, theirs: GossipState): boolean {
  for (const key of mine.seen) if (!theirs.seen.has(key)) return true;
  return false;
}
