// The follow-up to gossip-guard.ts: a change held back because its sender did not author it is asked of
// its author directly (GossipAsk), at most once per author per gossip interval, and the author answers with
// a GossipNews of what it holds for those keys. A forged change then dies with the message that carried it;
// a true one arrives from its author one round trip later. This node's own row, claimed newer elsewhere,
// is corrected by writing it above the claim.
import type { NodeAddress } from '../address.js';
import { leaderOf } from './leader-actions.js';
import { reachabilityOf, toWire, updateReachability, type GossipState, type MemberRecord } from './gossip.js';
import { LEADER, type Admitted } from './gossip-guard.js';
import { isGone } from '../member.js';
import type { MembershipCore } from './membership-core.js';
import { MAX_ASK_KEYS } from './messages.js';
import type { ObserverRow } from './reachability-table.js';
import { decideSplitBrain } from './split-brain-decision.js';

export class AuthorAsks {
  /** When each author (by address) was last asked. */
  private readonly lastAskedMs = new Map<string, number>();

  constructor(private readonly core: MembershipCore) {}

  /** The keys this node takes as its leader: leaderOf its own view, and its split-brain decision's leader. */
  leaderKeys(): ReadonlySet<string> {
    const { core } = this;
    const unreachable = core.unreachableKeys();
    const keys = new Set<string>();
    const leader = leaderOf(core.gossip, unreachable);
    if (leader) keys.add(`${leader.address.toString()}#${leader.incarnation}`);
    const edges = core.edges();
    if (edges.length > 0) {
      const members = [...core.gossip.members.entries()].map(([key, r]) => ({
        key,
        address: r.address,
        status: r.status,
      }));
      const decision = decideSplitBrain({ members, edges });
      if (decision.kind === 'down-unreachable' && decision.leader !== undefined) keys.add(decision.leader);
    }
    return keys;
  }

  /** Acts on what the guard held back: asks the authors, and corrects this node's own row if claimed newer. */
  followUp(admitted: Admitted): void {
    const { core } = this;
    if (core.stopped) return;
    if (admitted.heldBack > 0) {
      core.logger.debug(
        { heldBack: admitted.heldBack, ask: [...admitted.askAuthors.keys()] },
        'held back gossip changes their sender did not author',
      );
    }
    for (const [author, keys] of admitted.askAuthors) {
      const authors = author === LEADER ? [...this.leaderKeys()] : [author];
      for (const key of authors) {
        const record = core.gossip.members.get(key);
        if (key === core.selfKey || record === undefined || isGone(record.status)) continue;
        this.ask(record.address, keys);
      }
    }
    const claim = admitted.ownRowClaim;
    const own = reachabilityOf(core.gossip).get(core.selfKey);
    if (claim !== undefined && claim >= (own?.version ?? 0)) {
      core.logger.warn(
        { claimedVersion: claim },
        "gossip claimed a newer row of this node's reachability: writing it above the claim",
      );
      const table = new Map<string, ObserverRow>(reachabilityOf(core.gossip));
      table.set(core.selfKey, { version: claim + 1, subjects: own?.subjects ?? new Set() });
      core.commit(updateReachability(core.gossip, table, core.selfKey), 'push');
    }
  }

  /** A member asks this node's word on `keys`: the records, tombstones and own row it holds for them. */
  answer(from: NodeAddress, keys: ReadonlyArray<string>): void {
    const { core } = this;
    if (!core.joined || core.stopped || !this.isKnown(from)) return;
    const members = new Map<string, MemberRecord>();
    const tombstones = new Map<string, number>();
    const own = reachabilityOf(core.gossip).get(core.selfKey);
    for (const key of keys) {
      const record = core.gossip.members.get(key);
      if (record !== undefined) members.set(key, record);
      const at = core.gossip.tombstones.get(key);
      if (at !== undefined) tombstones.set(key, at);
    }
    const self = core.selfRecord();
    // The own row travels with the own record (rows name members by their index in the message).
    if (self !== undefined && keys.includes(core.selfKey)) members.set(core.selfKey, self);
    const reachability =
      own !== undefined && members.has(core.selfKey) ? new Map([[core.selfKey, own]]) : new Map<string, ObserverRow>();
    const delta: GossipState = { members, seen: new Set(), tombstones, reachability };
    core.channel.send(from, { type: 'GossipNews', gossip: toWire(delta) });
  }

  private ask(address: NodeAddress, keys: ReadonlySet<string>): void {
    const { core } = this;
    const now = core.scheduler.now();
    const last = this.lastAskedMs.get(address.toString());
    if (last !== undefined && now - last < core.config.gossipIntervalMs) return;
    this.lastAskedMs.set(address.toString(), now);
    if (this.lastAskedMs.size > 4 * MAX_ASK_KEYS) this.lastAskedMs.clear();
    core.channel.send(address, { type: 'GossipAsk', keys: [...keys].slice(0, MAX_ASK_KEYS) });
  }

  /** A live member, or one this node holds as down or removed (it is owed the truth about itself). */
  private isKnown(address: NodeAddress): boolean {
    if (this.core.isLivePeer(address)) return true;
    for (const record of this.core.gossip.members.values()) if (record.address.equals(address)) return true;
    return false;
  }
}
