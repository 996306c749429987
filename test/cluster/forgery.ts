// Test helper: the forged membership messages of issue 27, built from the member keys an attacker learns
// (`address#incarnation`): downings of chosen members, of the receiver itself, tombstones, reachability rows
// at version 2^53-1 in which every member observes the others unreachable, and a fake `up` member carrying
// such a row. Shared by the in-process, TCP and fuzz tests of the sender rules.
import { NodeAddress } from '../../src/cluster/address.js';
import { keyOf, toWire, type GossipState, type MemberRecord } from '../../src/cluster/membership/gossip.js';
import type { MemberStatus } from '../../src/cluster/member.js';
import type { ClusterMessage } from '../../src/cluster/membership/messages.js';
import type { ObserverRow } from '../../src/cluster/membership/reachability-table.js';

/** What an attacker knows of one member. */
export interface KnownMember {
  readonly address: NodeAddress;
  readonly incarnation: string;
  readonly upNumber: number;
}

export const TOP_VERSION = Number.MAX_SAFE_INTEGER;

export function recordOf(member: KnownMember, status: MemberStatus = 'up'): MemberRecord {
  return {
    address: member.address,
    incarnation: member.incarnation,
    status,
    appVersion: '1.0.0',
    roles: [],
    upNumber: member.upNumber,
    ...(status === 'down' || status === 'removed' ? { downedAtMs: 1 } : {}),
  };
}

export function stateOf(
  records: ReadonlyArray<MemberRecord>,
  extra: Partial<Pick<GossipState, 'tombstones' | 'reachability' | 'seen'>> = {},
): GossipState {
  const members = new Map(records.map((r) => [keyOf(r), r] as const));
  return {
    members,
    seen: extra.seen ?? new Set(members.keys()),
    tombstones: extra.tombstones ?? new Map(),
    reachability: extra.reachability ?? new Map(),
  };
}

export function gossip(state: GossipState, type: 'Gossip' | 'GossipNews' = 'Gossip'): ClusterMessage {
  return { type, gossip: toWire(state) };
}

/** Rows in which each of `observers` sees every other member of `all` unreachable, at `version`. */
export function everyoneUnreachable(
  observers: ReadonlyArray<MemberRecord>,
  all: ReadonlyArray<MemberRecord>,
  version = TOP_VERSION,
): Map<string, ObserverRow> {
  const rows = new Map<string, ObserverRow>();
  for (const o of observers)
    rows.set(keyOf(o), { version, subjects: new Set(all.filter((m) => keyOf(m) !== keyOf(o)).map(keyOf)) });
  return rows;
}

/** The forged messages of the issue, against `members` (all up), `receiver` among them. */
export function issueAttacks(
  members: ReadonlyArray<KnownMember>,
  receiver: KnownMember,
  targets: ReadonlyArray<KnownMember>,
): Array<[string, ClusterMessage]> {
  const up = members.map((m) => recordOf(m));
  const targetKeys = new Set(targets.map((t) => keyOf(recordOf(t))));
  const fake = recordOf({
    address: new NodeAddress(receiver.address.system, receiver.address.host, 1),
    incarnation: 'fake',
    upNumber: 1,
  });
  const attacks: Array<[string, ClusterMessage]> = [
    [
      'chosen members down',
      gossip(stateOf(up.map((r) => (targetKeys.has(keyOf(r)) ? { ...r, status: 'down' as const, downedAtMs: 1 } : r)))),
    ],
    ['the receiver itself down', gossip(stateOf([{ ...recordOf(receiver, 'down') }]))],
    [
      'tombstones of chosen members',
      gossip(
        stateOf(
          up.filter((r) => !targetKeys.has(keyOf(r))),
          { tombstones: new Map([...targetKeys].map((k) => [k, Date.now()] as const)) },
        ),
      ),
    ],
    ['rows at 2^53-1, everyone unreachable', gossip(stateOf(up, { reachability: everyoneUnreachable(up, up) }))],
    [
      'a fake up member carrying such a row',
      gossip(stateOf([...up, fake], { reachability: everyoneUnreachable([fake], [...up, fake]) })),
    ],
    [
      'the same rows as news',
      gossip(stateOf(up, { reachability: everyoneUnreachable(up, up), seen: new Set() }), 'GossipNews'),
    ],
  ];
  return attacks;
}
