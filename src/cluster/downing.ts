// The keep-majority downing decision, a pure function of one node's view. Members unreachable long enough
// are downed only by a side that holds a majority of the members; a side without it downs itself, so during
// a partition at most one side keeps hosting shards. Exactly half is a majority only for the half holding
// the lowest address, which both halves compute identically (Pekko's keep-majority tie-break).
// When reachability is not transitive (A-C cut, B between them), A and C may each see a majority; the
// stagger makes a node wait longer for each unreachable member with a lower address, so the lower one
// decides first and its decision reaches the other through B before the other's own deadline: only one of
// them is downed. Callers act at `nextDowningDeadlineMs`, not on a tick.
import { compareAddresses } from './member-order.js';
import type { NodeAddress } from './address.js';
import type { MemberStatus } from './member.js';

export interface DowningMember {
  readonly key: string;
  readonly address: NodeAddress;
  readonly status: MemberStatus;
  readonly reachable: boolean;
  /** When this node started to consider the member unreachable; undefined while reachable. */
  readonly unreachableSinceMs?: number;
}

export interface DowningInput {
  readonly selfKey: string;
  readonly members: ReadonlyArray<DowningMember>;
  readonly nowMs: number;
  readonly downAfterMs: number;
  readonly minorityDownAfterMs: number;
  /**
   * Extra wait of a majority side per unreachable member with a lower address than self; default 0.
   * Only delays the majority, so the minority still acts first.
   */
  readonly staggerMs?: number;
}

export type DowningDecision =
  | { readonly kind: 'none' }
  | { readonly kind: 'down-unreachable'; readonly keys: ReadonlyArray<string> }
  | { readonly kind: 'down-self' };

/** Statuses that count towards the majority: members that are (or were) serving, not arriving or gone. */
const COUNTED: ReadonlySet<MemberStatus> = new Set<MemberStatus>(['weakly-up', 'up', 'leaving']);

export function decideDowning(input: DowningInput): DowningDecision {
  const self = input.members.find((m) => m.key === input.selfKey);
  if (!self || !COUNTED.has(self.status)) return { kind: 'none' };
  const unreachable = unreachableOthers(input);
  if (unreachable.length === 0) return { kind: 'none' };
  const longest = Math.max(...unreachable.map((m) => input.nowMs - (m.unreachableSinceMs ?? input.nowMs)));

  const counted = input.members.filter((m) => COUNTED.has(m.status));
  const reachableCounted = counted.filter((m) => m.key === input.selfKey || m.reachable);
  if (!holdsMajority(counted, reachableCounted)) {
    return longest >= input.minorityDownAfterMs ? { kind: 'down-self' } : { kind: 'none' };
  }
  const after = majorityDownAfterMs(input, self.address, unreachable);
  const keys = unreachable.filter((m) => input.nowMs - (m.unreachableSinceMs ?? input.nowMs) >= after).map((m) => m.key);
  return keys.length > 0 ? { kind: 'down-unreachable', keys } : { kind: 'none' };
}

/**
 * The next moment after `nowMs` at which `decideDowning` may decide differently with no other change (a
 * member reaching one of the delays); undefined when no member is unreachable.
 */
export function nextDowningDeadlineMs(input: DowningInput): number | undefined {
  const self = input.members.find((m) => m.key === input.selfKey);
  if (!self) return undefined;
  const unreachable = unreachableOthers(input);
  const delays = [input.minorityDownAfterMs, majorityDownAfterMs(input, self.address, unreachable)];
  let next: number | undefined;
  for (const m of unreachable) {
    if (m.unreachableSinceMs === undefined) continue;
    for (const delay of delays) {
      const at = m.unreachableSinceMs + delay;
      if (at > input.nowMs && (next === undefined || at < next)) next = at;
    }
  }
  return next;
}

function unreachableOthers(input: DowningInput): DowningMember[] {
  return input.members.filter((m) => m.key !== input.selfKey && !m.reachable && m.status !== 'down' && m.status !== 'removed');
}

function majorityDownAfterMs(input: DowningInput, self: NodeAddress, unreachable: ReadonlyArray<DowningMember>): number {
  const lower = unreachable.filter((m) => compareAddresses(m.address, self) < 0).length;
  return input.downAfterMs + lower * (input.staggerMs ?? 0);
}

function holdsMajority(counted: ReadonlyArray<DowningMember>, side: ReadonlyArray<DowningMember>): boolean {
  if (side.length * 2 > counted.length) return true;
  if (side.length * 2 < counted.length) return false;
  const lowest = [...counted].sort((a, b) => compareAddresses(a.address, b.address))[0];
  return lowest !== undefined && side.some((m) => m.key === lowest.key);
}
