// The split-brain decision, a pure function of the merged reachability table and the member list, so every
// node holding the same table computes the same decision (Pekko's keep-majority with its handling of
// indirectly connected nodes). A member that is both an observer and a subject of unreachability can still
// exchange gossip through others: it is indirectly connected, which a clean split or a crash never produces.
// Those are resolved first, by downing the smallest set of them that explains the cut links (greedily: the
// member on most cut links to other such members first, ties to the higher address, so the lower address of
// a cut link stays); the observations of downed members no longer count. What is left is a clean split, decided by
// keep-majority over all counted members (downed-as-indirect ones count on the side they were on, as Pekko
// does, so the two sides of a split compute complementary answers): the side with a majority (exactly half:
// the half with the lowest address) downs the unreachable members; a side without it downs itself.
// Who acts on the decision, and when, is reachability.ts's business: one leader per table, after stable-after.
import type { NodeAddress } from '../address.js';
import { COUNTED_STATUSES, holdsMajority, type MemberStatus } from '../member.js';
import { compareAddresses } from '../member-order.js';
import { unreachableSubjects, type UnreachableEdge } from './reachability-table.js';

export interface DecisionMember {
  readonly key: string;
  readonly address: NodeAddress;
  readonly status: MemberStatus;
}

export interface SplitBrainInput {
  readonly members: ReadonlyArray<DecisionMember>;
  /** Unreachability observations; edges touching members that are not live are ignored. */
  readonly edges: ReadonlyArray<UnreachableEdge>;
}

export type SplitBrainDecision =
  | { readonly kind: 'none' }
  | {
      /**
       * This side holds the majority: `leader` downs `down` (the indirectly connected ones chosen, and the
       * unreachable).
       */
      readonly kind: 'down-unreachable';
      readonly down: ReadonlyArray<string>;
      readonly indirectlyConnected: ReadonlyArray<string>;
      readonly leader: string | undefined;
    }
  | {
      /** This side is a minority: every member of it in `down` downs itself. */
      readonly kind: 'down-own-side';
      readonly down: ReadonlyArray<string>;
      readonly indirectlyConnected: ReadonlyArray<string>;
    };

export function decideSplitBrain(input: SplitBrainInput): SplitBrainDecision {
  const live = new Map<string, DecisionMember>();
  for (const m of input.members) if (m.status !== 'down' && m.status !== 'removed') live.set(m.key, m);
  const edges = input.edges.filter((e) => e.observer !== e.subject && live.has(e.observer) && live.has(e.subject));
  if (edges.length === 0) return { kind: 'none' };
  const unreachableAtFirst = unreachableSubjects(edges);

  const { cover, remaining } = indirectlyConnectedCover(edges, live);
  const unreachable = unreachableSubjects(remaining);
  const counted = [...live.values()].filter((m) => COUNTED_STATUSES.has(m.status));
  const side = counted.filter((m) => !unreachable.has(m.key));
  const indirectlyConnected = sortedKeys(cover, live);

  const first = lowest(counted);
  if (holdsMajority(counted.length, side.length, first !== undefined && side.some((m) => m.key === first.key))) {
    const down = sortedKeys(new Set([...cover, ...unreachable]), live);
    const leader =
      lowest(side.filter((m) => !unreachableAtFirst.has(m.key) && !cover.has(m.key))) ??
      lowest(side.filter((m) => !cover.has(m.key)));
    return { kind: 'down-unreachable', down, indirectlyConnected, leader: leader?.key };
  }
  const down = sortedKeys(new Set([...side.map((m) => m.key), ...cover]), live);
  return { kind: 'down-own-side', down, indirectlyConnected };
}

/**
 * Members that observe and are observed as unreachable, taken one at a time (most unreachable edges to other such
 * members first, then the higher address) until none is left; each taken member's edges are dropped. Returns them and
 * the edges left, which form a clean split (no observer among the subjects).
 */
export function indirectlyConnectedCover(
  edges: ReadonlyArray<UnreachableEdge>,
  members: ReadonlyMap<string, DecisionMember>,
): { readonly cover: ReadonlySet<string>; readonly remaining: ReadonlyArray<UnreachableEdge> } {
  const cover = new Set<string>();
  let remaining = [...edges];
  for (;;) {
    const subjects = unreachableSubjects(remaining);
    const candidates = new Set(remaining.map((e) => e.observer).filter((o) => subjects.has(o)));
    if (candidates.size === 0) return { cover, remaining };
    // Only edges between two candidates count: an edge to a crashed member says nothing against its observer.
    const degree = new Map<string, number>();
    for (const e of remaining) {
      if (!candidates.has(e.observer) || !candidates.has(e.subject)) continue;
      for (const end of [e.observer, e.subject]) degree.set(end, (degree.get(end) ?? 0) + 1);
    }
    let pick: string | undefined;
    for (const key of candidates) {
      if (pick === undefined) pick = key;
      else {
        const d = (degree.get(key) ?? 0) - (degree.get(pick) ?? 0);
        if (d > 0 || (d === 0 && compareMembers(key, pick, members) > 0)) pick = key;
      }
    }
    if (pick === undefined) return { cover, remaining };
    cover.add(pick);
    remaining = remaining.filter((e) => e.observer !== pick && e.subject !== pick);
  }
}

function lowest(members: ReadonlyArray<DecisionMember>): DecisionMember | undefined {
  let best: DecisionMember | undefined;
  for (const m of members) if (best === undefined || compareMember(m, best) < 0) best = m;
  return best;
}

/** By address, then key: total, so every node orders the same members the same way. */
function compareMember(a: DecisionMember, b: DecisionMember): number {
  return compareAddresses(a.address, b.address) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

function compareMembers(a: string, b: string, members: ReadonlyMap<string, DecisionMember>): number {
  const ma = members.get(a);
  const mb = members.get(b);
  if (ma && mb) return compareMember(ma, mb);
  return a < b ? -1 : a > b ? 1 : 0;
}

function sortedKeys(keys: ReadonlySet<string>, members: ReadonlyMap<string, DecisionMember>): string[] {
  return [...keys].sort((a, b) => compareMembers(a, b, members));
}
