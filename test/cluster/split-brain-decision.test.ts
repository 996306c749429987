// The split-brain decision as a pure function of the merged reachability table: keep-majority for a clean
// split (the cases of the former per-node downing rule, moved here), the smallest set of indirectly
// connected members for a non-transitive cut, the same answer whichever node computes it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import type { MemberStatus } from '../../src/cluster/member.js';
import type { UnreachableEdge } from '../../src/cluster/membership/reachability-table.js';
import { decideSplitBrain, type DecisionMember } from '../../src/cluster/membership/split-brain-decision.js';

const key = (port: number): string => `sys@10.0.0.1:${port}#x`;
function member(port: number, status: MemberStatus = 'up'): DecisionMember {
  return { key: key(port), address: new NodeAddress('sys', '10.0.0.1', port), status };
}
const members = (count: number): DecisionMember[] => Array.from({ length: count }, (_, i) => member(i + 1));
const edge = (observer: number, subject: number): UnreachableEdge => ({
  observer: key(observer),
  subject: key(subject),
});
/** Both ends of a cut link observe each other. */
const cut = (a: number, b: number): UnreachableEdge[] => [edge(a, b), edge(b, a)];

describe('decideSplitBrain: a clean split (keep-majority)', () => {
  it('downs the unreachable from a majority side; its lowest address acts', () => {
    expect(decideSplitBrain({ members: members(3), edges: [edge(1, 3), edge(2, 3)] })).toEqual({
      kind: 'down-unreachable',
      down: [key(3)],
      indirectlyConnected: [],
      leader: key(1),
    });
  });

  it('downs its own side from a minority side, never the others', () => {
    expect(decideSplitBrain({ members: members(3), edges: [edge(3, 1), edge(3, 2)] })).toEqual({
      kind: 'down-own-side',
      down: [key(3)],
      indirectlyConnected: [],
    });
  });

  it('breaks an even split by the lowest address', () => {
    const all = members(4);
    expect(decideSplitBrain({ members: all, edges: [edge(1, 2), edge(1, 3), edge(4, 2), edge(4, 3)] }).kind).toBe(
      'down-unreachable',
    );
    expect(decideSplitBrain({ members: all, edges: [edge(2, 1), edge(2, 4), edge(3, 1), edge(3, 4)] }).kind).toBe(
      'down-own-side',
    );
  });

  it('does not count joining or exiting members towards the majority, and ignores members already down', () => {
    const all = [member(1), member(2), member(3, 'joining'), member(4, 'exiting'), member(5, 'down')];
    // Counted: 1 and 2 only; 1 holds the lowest address, so it keeps the majority of an even split.
    expect(decideSplitBrain({ members: all, edges: [edge(1, 2), edge(1, 5), edge(5, 1)] })).toEqual({
      kind: 'down-unreachable',
      down: [key(2)],
      indirectlyConnected: [],
      leader: key(1),
    });
    // A joining member on a minority side is not told to down itself (it hosts nothing).
    const minority = decideSplitBrain({ members: all, edges: [edge(2, 1), edge(3, 1)] });
    expect(minority).toEqual({ kind: 'down-own-side', down: [key(2)], indirectlyConnected: [] });
  });

  it('decides nothing when every member is reachable (or only gone members are named)', () => {
    expect(decideSplitBrain({ members: members(2), edges: [] })).toEqual({ kind: 'none' });
    expect(decideSplitBrain({ members: [member(1), member(2, 'removed')], edges: cut(1, 2) })).toEqual({
      kind: 'none',
    });
  });
});

describe('decideSplitBrain: indirectly connected members', () => {
  it('downs one end of a non-transitive cut, the higher address, by a member nobody observes as unreachable', () => {
    expect(decideSplitBrain({ members: members(3), edges: cut(1, 3) })).toEqual({
      kind: 'down-unreachable',
      down: [key(3)],
      indirectlyConnected: [key(3)],
      leader: key(2),
    });
    expect(decideSplitBrain({ members: members(5), edges: cut(2, 4) })).toMatchObject({
      down: [key(4)],
      leader: key(1),
    });
  });

  it('downs the member on most cut links: one node cut from two others', () => {
    expect(decideSplitBrain({ members: members(5), edges: [...cut(1, 3), ...cut(3, 5)] })).toMatchObject({
      down: [key(3)],
      leader: key(2),
    });
    // A chain of one-way observations: 2 observes 3 and is observed by 1.
    expect(decideSplitBrain({ members: members(4), edges: [edge(1, 2), edge(2, 3)] })).toMatchObject({
      down: [key(2)],
      indirectlyConnected: [key(2)],
    });
  });

  it('resolves two simultaneous cuts with one member each', () => {
    expect(decideSplitBrain({ members: members(5), edges: [...cut(1, 3), ...cut(2, 4)] })).toMatchObject({
      kind: 'down-unreachable',
      down: [key(3), key(4)],
      leader: key(5),
    });
  });

  it('combines an indirect cut with a crashed member (the crash is downed too)', () => {
    const edges = [...cut(1, 3), edge(1, 5), edge(2, 5), edge(4, 5)];
    expect(decideSplitBrain({ members: members(5), edges })).toMatchObject({
      kind: 'down-unreachable',
      down: [key(3), key(5)],
      leader: key(2),
    });
  });

  it('a cut inside a minority side still leaves that side downing itself', () => {
    // 1 and 2 are cut off from 3, 4, 5 and from each other's link too (observed through the table).
    const edges = [...cut(1, 2), edge(1, 3), edge(1, 4), edge(1, 5), edge(2, 3), edge(2, 4), edge(2, 5)];
    expect(decideSplitBrain({ members: members(5), edges })).toMatchObject({
      kind: 'down-own-side',
      down: [key(1), key(2)],
    });
  });
});

describe('decideSplitBrain: properties', () => {
  const scenario = fc.integer({ min: 2, max: 9 }).chain((n) =>
    fc.record({
      n: fc.constant(n),
      edges: fc.uniqueArray(
        fc.tuple(fc.integer({ min: 1, max: n }), fc.integer({ min: 1, max: n })).filter(([a, b]) => a !== b),
        {
          maxLength: n * 2,
          selector: ([a, b]) => `${a}-${b}`,
        },
      ),
    }),
  );

  it('is the same whichever node computes it, whatever the order of the table and the member list', () => {
    fc.assert(
      fc.property(scenario, fc.integer(), ({ n, edges }, seed) => {
        const input = { members: members(n), edges: edges.map(([a, b]) => edge(a, b)) };
        const shuffled = { members: shuffle(input.members, seed), edges: shuffle(input.edges, seed + 1) };
        expect(decideSplitBrain(shuffled)).toEqual(decideSplitBrain(input));
      }),
    );
  });

  it('on a side that keeps running, downs only members some observer sees as unreachable, and leaves no cut among the rest', () => {
    fc.assert(
      fc.property(scenario, ({ n, edges }) => {
        const decision = decideSplitBrain({ members: members(n), edges: edges.map(([a, b]) => edge(a, b)) });
        if (decision.kind !== 'down-unreachable') return;
        const subjects = new Set(edges.map(([, b]) => key(b)));
        for (const k of decision.down) expect(subjects.has(k)).toBe(true);
        const down = new Set(decision.down);
        for (const [a, b] of edges) expect(down.has(key(a)) || down.has(key(b))).toBe(true);
        expect(decision.leader !== undefined && !down.has(decision.leader)).toBe(true);
      }),
    );
  });

  it('of the two sides of a clean split, exactly one keeps running', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 2, max: 9 })
          .chain((n) =>
            fc.record({ n: fc.constant(n), inFirst: fc.array(fc.boolean(), { minLength: n, maxLength: n }) }),
          ),
        ({ n, inFirst }) => {
          const first = members(n).filter((_, i) => inFirst[i]);
          const second = members(n).filter((_, i) => !inFirst[i]);
          fc.pre(first.length > 0 && second.length > 0);
          // Each side's table: its members observe every member of the other side (gossip does not cross).
          const tableOf = (side: DecisionMember[], other: DecisionMember[]): UnreachableEdge[] =>
            side.flatMap((o) => other.map((s) => ({ observer: o.key, subject: s.key })));
          const a = decideSplitBrain({ members: members(n), edges: tableOf(first, second) });
          const b = decideSplitBrain({ members: members(n), edges: tableOf(second, first) });
          expect([a.kind, b.kind].sort()).toEqual(['down-own-side', 'down-unreachable']);
        },
      ),
    );
  });

  it('a single cut link in a cluster of three or more downs exactly its higher address', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 3, max: 12 })
          .chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 1, max: n }), fc.integer({ min: 1, max: n }))),
        ([n, a, b]) => {
          fc.pre(a !== b);
          const decision = decideSplitBrain({ members: members(n), edges: cut(a, b) });
          expect(decision).toMatchObject({ kind: 'down-unreachable', down: [key(Math.max(a, b))] });
        },
      ),
    );
  });
});

function shuffle<T>(items: ReadonlyArray<T>, seed: number): T[] {
  const out = [...items];
  let s = seed | 0;
  for (let i = out.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1103515245) + 12345) | 0;
    const j = Math.abs(s) % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
