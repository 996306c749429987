// Sender rules for received gossip and news, checked before the merge (docs/design.md, "Who may change
// what"). Gossip is relayed, so a rule cannot be "the sender may only send its own record": it is about the
// change the message would make to this node's state, and who could have authored that change:
// - a member's own reachability row is authored by that member;
// - downings, leaves, removals of members that did not leave, members first seen beyond `joining`, and
//   tombstones of live members are the word of the leader this node takes (its own view); the leader takes
//   a member's own leave or downing from that member, so every status change passes through one node;
// - harmless forward moves (to weakly-up or up, exiting after leaving, removed after leaving/exiting/down)
//   and new `joining` records (what a join allows) may come through anyone.
// A change whose author is not the sender is held back, and its author is asked directly (GossipAsk); the
// answer, from the author, then passes. This node's own row is never taken from anyone else, and any row
// version may only advance in bounded steps, so no value can be placed beyond what its owner can correct.
import type { NodeAddress } from '../address.js';
import { mergeRecord, sameRecordContent, type GossipState, type MemberRecord } from './gossip.js';
import { isGone, type MemberStatus } from '../member.js';
import { mergeRows, sameRow, type ObserverRow } from './reachability-table.js';

/** How far one message may advance an observer's row version over what this node holds. */
export const MAX_ROW_STEP = 1 << 20;
/** No row version beyond this is taken: leaves its owner 2^52 corrections before the safe-integer limit. */
export const MAX_ROW_VERSION = 2 ** 52;

export interface GuardContext {
  /** This node's member key. */
  readonly selfKey: string;
  /** The address the message came from (the transport's peer). */
  readonly sender: NodeAddress;
  /** Whether this node takes `key` as its leader (leaderOf its own view, or its split-brain decision's leader). */
  readonly isLeader: (key: string) => boolean;
  /** Whether this node sees `key` unreachable: its row may then come relayed (it cannot be asked). */
  readonly isUnreachable: (key: string) => boolean;
  /**
   * Whether rows reach this node through relays (a cluster larger than NEWS_FANOUT + 1 spreads them as news
   * passed on): then a relayed row is taken within the version bound and its owner corrects a false one.
   */
  readonly relayedRows: boolean;
}

export interface Admitted {
  /** The incoming state with every change it may not make replaced by what this node holds. */
  readonly state: GossipState;
  /** Member keys to ask directly for what was held back ('leader' for this node's leader). */
  readonly askAuthors: ReadonlyMap<string, ReadonlySet<string>>;
  /** How many changes were held back (for the log). */
  readonly heldBack: number;
  /** The highest version of this node's own row the message carried, when above this node's own. */
  readonly ownRowClaim: number | undefined;
}

/** The token in `askAuthors` for "this node's leader". */
export const LEADER = 'leader';

export function admitGossip(local: GossipState, incoming: GossipState, ctx: GuardContext): Admitted {
  const admission = new Admission(local, ctx);
  const members = admission.members(incoming);
  const tombstones = admission.tombstones(incoming);
  const rows = admission.rows(incoming);
  const { heldBack, ask: askAuthors, ownRowClaim } = admission;
  if (heldBack === 0) return { state: incoming, askAuthors, heldBack, ownRowClaim };
  // What the sender has seen is not what passed: its seen marks must not vouch for this content.
  return { state: { members, seen: new Set(), tombstones, reachability: rows }, askAuthors, heldBack, ownRowClaim };
}

/** One message's admission: what the sender may change, what is held back and whom to ask for it. */
class Admission {
  /** The sender's live member keys here. */
  private readonly senderKeys = new Set<string>();
  private leaderSender: boolean | undefined;
  readonly ask = new Map<string, Set<string>>();
  heldBack = 0;
  ownRowClaim: number | undefined;

  constructor(
    private readonly local: GossipState,
    private readonly ctx: GuardContext,
  ) {
    for (const [key, r] of local.members)
      if (r.address.equals(ctx.sender) && !isGone(r.status)) this.senderKeys.add(key);
  }

  // Who leads is asked only of changes that need it: most messages carry none.
  private readonly senderIsLeader = (): boolean =>
    (this.leaderSender ??= [...this.senderKeys].some((key) => this.ctx.isLeader(key)));
  private readonly selfIsLeader = (): boolean => this.ctx.isLeader(this.ctx.selfKey);

  private holdBack(author: string, about: string): void {
    let keys = this.ask.get(author);
    if (keys === undefined) this.ask.set(author, (keys = new Set()));
    keys.add(about);
  }

  /** The incoming member records, each this node may not take replaced by its own (or left out). */
  members(incoming: GossipState): Map<string, MemberRecord> {
    const { local, ctx } = this;
    const members = new Map<string, MemberRecord>();
    for (const [key, record] of incoming.members) {
      if (local.tombstones.has(key)) continue;
      const existing = local.members.get(key);
      const verdict = existing
        ? changeVerdict(
            existing,
            record,
            key,
            this.senderKeys.has(key),
            this.senderIsLeader,
            ctx.selfKey,
            this.selfIsLeader,
            incoming,
          )
        : newVerdict(record, this.senderIsLeader);
      if (verdict === 'ok') {
        members.set(key, record);
        continue;
      }
      this.heldBack++;
      if (verdict !== 'drop') this.holdBack(verdict === 'ask-member' ? key : LEADER, key);
      if (existing) members.set(key, existing);
    }
    return members;
  }

  /** The incoming tombstones: of a member gone here, or on the leader's word. */
  tombstones(incoming: GossipState): Map<string, number> {
    const { local } = this;
    const tombstones = new Map<string, number>();
    for (const [key, at] of incoming.tombstones) {
      const existing = local.members.get(key);
      if (local.tombstones.has(key) || existing === undefined || isGone(existing.status) || this.senderIsLeader()) {
        tombstones.set(key, at);
        continue;
      }
      this.heldBack++;
      this.holdBack(LEADER, key);
    }
    return tombstones;
  }

  /** The incoming reachability rows: each from its author (or a relay this node may take), within the bounds. */
  rows(incoming: GossipState): Map<string, ObserverRow> {
    const localRows = this.local.reachability ?? new Map<string, ObserverRow>();
    const rows = new Map<string, ObserverRow>();
    for (const [observer, row] of incoming.reachability ?? new Map<string, ObserverRow>()) {
      const existing = localRows.get(observer);
      if (existing !== undefined && sameRow(mergeRows(existing, row), existing)) {
        rows.set(observer, row.version === existing.version ? existing : row);
        continue;
      }
      if (this.takesRow(observer, row, existing)) {
        rows.set(observer, row);
        continue;
      }
      this.heldBack++;
      if (existing !== undefined) rows.set(observer, existing);
    }
    return rows;
  }

  /** Whether another observer's changed row passes; this node's own is never taken, only noted as a claim. */
  private takesRow(observer: string, row: ObserverRow, existing: ObserverRow | undefined): boolean {
    const { local, ctx } = this;
    const bounded = row.version <= Math.min(MAX_ROW_VERSION, (existing?.version ?? 0) + MAX_ROW_STEP);
    if (observer === ctx.selfKey) {
      // Only this node writes its row; a newer copy elsewhere (within the bound others apply too) is
      // corrected by writing above it.
      if (bounded && row.version >= (existing?.version ?? 0))
        this.ownRowClaim = Math.max(this.ownRowClaim ?? 0, row.version);
      return false;
    }
    const record = local.members.get(observer);
    // A gone member's row carries no weight (no edge starts at it): taken, so that states stay equal.
    const weightless = record !== undefined && isGone(record.status);
    // A joining member is what anyone may relay (a join): its row counts only when it sends it itself.
    const relayable =
      record !== undefined && record.status !== 'joining' && (ctx.relayedRows || ctx.isUnreachable(observer));
    const attributable = record !== undefined && (weightless || this.senderKeys.has(observer) || relayable);
    const distinctVersion = existing === undefined || row.version !== existing.version;
    if (bounded && distinctVersion && attributable) return true;
    if (bounded && record !== undefined && !attributable) this.holdBack(observer, observer);
    return false;
  }
}

type Verdict = 'ok' | 'ask-member' | 'ask-leader' | 'drop';

/** A record this node does not hold: a join makes it `joining`; anything further is the leader's word. */
function newVerdict(record: MemberRecord, senderIsLeader: () => boolean): Verdict {
  if (isGone(record.status)) return 'ok';
  if (record.status === 'joining' && record.upNumber === 0 && record.downedAtMs === undefined) return 'ok';
  return senderIsLeader() ? 'ok' : 'ask-leader';
}

const RELAYABLE_MOVES: ReadonlySet<MemberStatus> = new Set<MemberStatus>(['weakly-up', 'up']);
const LEFT_OR_DOWN: ReadonlySet<MemberStatus> = new Set<MemberStatus>(['leaving', 'exiting', 'down']);

function changeVerdict(
  existing: MemberRecord,
  record: MemberRecord,
  key: string,
  fromItself: boolean,
  senderIsLeader: () => boolean,
  selfKey: string,
  selfIsLeader: () => boolean,
  incoming: GossipState,
): Verdict {
  const merged = mergeRecord(existing, record);
  if (sameRecordContent(merged, existing)) return 'ok';
  const from = existing.status;
  const to = merged.status;
  // Same status: the earliest downedAtMs or the lower upNumber of concurrent decisions, which every node keeps.
  if (from === to || RELAYABLE_MOVES.has(to)) return 'ok';
  if (to === 'exiting' && from === 'leaving') return 'ok';
  if (to === 'removed' && LEFT_OR_DOWN.has(from)) return 'ok';
  if (senderIsLeader()) return 'ok';
  // This node's own record: it knows whether it left, and takes a downing only from its leader.
  if (key === selfKey) return to === 'leaving' ? 'drop' : 'ask-leader';
  // A member's own leave or downing, and the downing of an incarnation a new one replaces (what a join
  // allows), pass through the leader alone, which every other node then takes them from: a member telling
  // different nodes different things about itself cannot split their views.
  if (to === 'leaving' || to === 'down') {
    if (!selfIsLeader()) return 'ask-leader';
    if (fromItself) return 'ok';
    if (to === 'down' && hasOtherLiveIncarnation(incoming, existing)) return 'ok';
    return 'ask-member';
  }
  return 'ask-leader';
}

function hasOtherLiveIncarnation(state: GossipState, record: MemberRecord): boolean {
  for (const other of state.members.values()) {
    if (other.incarnation !== record.incarnation && other.address.equals(record.address) && !isGone(other.status))
      return true;
  }
  return false;
}
