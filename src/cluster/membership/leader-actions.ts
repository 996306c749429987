// What the membership leader decides, as pure functions of one node's view: who the leader is, whether the
// state has converged (every live member has seen it), and which members move one status further.
// Transitions that need agreement (joining -> up, leaving -> exiting, exiting/down -> removed) wait for
// convergence, as in Pekko; weakly-up lets joining members serve while unreachable members block it.
import type { GossipState, MemberRecord } from './gossip.js';
import { keyOf } from './gossip.js';
import type { MemberStatus } from '../member.js';
import { compareAddresses } from '../member-order.js';

/**
 * The lowest address among reachable up/leaving members; while nobody is up yet, among joining ones; and
 * when only exiting members are left (the last node leaving), among those, so it can remove itself.
 */
export function leaderOf(state: GossipState, unreachable: ReadonlySet<string>): MemberRecord | undefined {
  // One pass per pool, keeping the lowest: this runs on every commit of every node.
  for (const statuses of LEADER_POOLS) {
    let leader: MemberRecord | undefined;
    for (const [key, r] of state.members) {
      if (!statuses.has(r.status) || unreachable.has(key)) continue;
      if (leader === undefined || compareAddresses(r.address, leader.address) < 0) leader = r;
    }
    if (leader !== undefined) return leader;
  }
  return undefined;
}

const LEADER_POOLS: ReadonlyArray<ReadonlySet<MemberStatus>> = [
  new Set<MemberStatus>(['up', 'leaving']),
  new Set<MemberStatus>(['joining', 'weakly-up']),
  new Set<MemberStatus>(['exiting']),
];

/**
 * Every member that is not down or removed is reachable and has seen this content (unreachable exiting members
 * excepted).
 */
export function isConverged(state: GossipState, unreachable: ReadonlySet<string>): boolean {
  for (const [key, record] of state.members) {
    if (record.status === 'down' || record.status === 'removed') continue;
    if (unreachable.has(key)) {
      if (record.status === 'exiting') continue;
      return false;
    }
    if (!state.seen.has(key)) return false;
  }
  return true;
}

export interface LeaderActionInput {
  readonly state: GossipState;
  readonly selfKey: string;
  readonly unreachable: ReadonlySet<string>;
  readonly nowMs: number;
  /** When this node first saw each joining member. */
  readonly joiningSinceMs: ReadonlyMap<string, number>;
  readonly weaklyUpAfterMs: number;
}

/** The records the leader changes now; empty when self is not the leader or nothing is due. */
export function leaderActions(input: LeaderActionInput): MemberRecord[] {
  const { state, unreachable } = input;
  const leader = leaderOf(state, unreachable);
  if (!leader || keyOf(leader) !== input.selfKey) return [];
  const records = [...state.members.values()].sort((a, b) => compareAddresses(a.address, b.address));
  if (!isConverged(state, unreachable)) {
    if (input.weaklyUpAfterMs <= 0) return [];
    const blockedByUnreachable = records.some(
      (r) => unreachable.has(keyOf(r)) && r.status !== 'down' && r.status !== 'removed' && r.status !== 'exiting',
    );
    if (!blockedByUnreachable) return [];
    return records
      .filter((r) => r.status === 'joining' && !unreachable.has(keyOf(r)))
      .filter((r) => input.nowMs - (input.joiningSinceMs.get(keyOf(r)) ?? input.nowMs) >= input.weaklyUpAfterMs)
      .map((r) => ({ ...r, status: 'weakly-up' as const }));
  }
  let nextUpNumber = Math.max(0, ...records.map((r) => r.upNumber)) + 1;
  const changes: MemberRecord[] = [];
  for (const record of records) {
    switch (record.status) {
      case 'joining':
      case 'weakly-up':
        changes.push({ ...record, status: 'up', upNumber: record.upNumber > 0 ? record.upNumber : nextUpNumber++ });
        break;
      case 'leaving':
        changes.push({ ...record, status: 'exiting' });
        break;
      case 'exiting':
      case 'down':
        changes.push({ ...record, status: 'removed' });
        break;
      default:
        break;
    }
  }
  return changes;
}
