// Explain and dry runs as pure functions over a coordinator state, with the external strategy's own pin
// context and a cordon view: a cordoned pin target (prefer falls back, require waits), a pinned shard kept on
// a cordoned node, a strategy that reads no pins, and the dry-run moves for those cases.
import { describe, expect, it } from 'vitest';
import type { ClusterView, MemberInfo } from '../../src/cluster/member.js';
import type { CordonView } from '../../src/sharding/placements/cordon-view.js';
import {
  landings,
  rebalanceRoundMoves,
  explainShard,
  type ExplainSources,
} from '../../src/sharding/coordinator/insight.js';
import { CoordinatorState } from '../../src/sharding/coordinator/state.js';
import { stateWith } from './coordinator-fakes.js';
import type { PinRecord } from '../../src/sharding/placements/placement-record.js';
import {
  LeastShardAllocationStrategy,
  PlacementPin,
  externalAllocationStrategy,
  type PinLike,
} from '../../src/sharding/strategies/index.js';
import { isPinAware } from '../../src/sharding/strategies/pin-aware.js';
import { node } from '../strategies/fixtures.js';
import { memberInfo } from '../support/members.js';

const A = node(1);
const B = node(2);
const C = node(3);
const [a, b, c] = [A, B, C].map(String) as [string, string, string];

const MEMBERS: MemberInfo[] = [
  { ...memberInfo({ address: A, upNumber: 1 }), attributes: { zone: 'a' } },
  { ...memberInfo({ address: B, upNumber: 2 }), attributes: { zone: 'b' } },
  { ...memberInfo({ address: C, upNumber: 3 }), attributes: { zone: 'b' } },
];
const VIEW: ClusterView = { members: () => MEMBERS };

function cordonsOf(...addresses: string[]): CordonView {
  const set = new Set(addresses);
  return { isCordoned: (address) => set.has(address), list: () => [...set].map((address) => ({ address })) };
}

function external(pins: Map<number, PinLike>) {
  const warnings: string[] = [];
  const strategy = externalAllocationStrategy(
    new LeastShardAllocationStrategy({ cluster: VIEW }),
    () => ({ explicitPlacements: pins }),
    {
      cluster: VIEW,
      onWarning: (message) => void warnings.push(message),
    },
  );
  if (!isPinAware(strategy)) throw new Error('the external strategy must be pin-aware');
  return { strategy, warnings };
}

/** A state with every region registered and the given homes. */
function homesOn(homes: ReadonlyArray<readonly [number, string]>): CoordinatorState {
  return stateWith([a, b, c], homes);
}

function sources(
  state: CoordinatorState,
  pins: Map<number, PinLike>,
  cordoned: string[],
  listed?: PinRecord,
): ExplainSources {
  const cordons = cordonsOf(...cordoned);
  return {
    state,
    members: MEMBERS,
    // What allocationCandidates gives once cordoned regions are left out.
    candidates: [A, B, C].filter((address) => !cordons.isCordoned(address.toString())),
    cordons,
    pins: external(pins).strategy.pinContext(),
    listed,
  };
}

describe('explain with cordons', () => {
  it('a prefer pin to a cordoned node: placement-unavailable, the fallback chose, and the node shows cordoned and matching', () => {
    const pins = new Map([[7, PlacementPin.of(b)]]);
    const answer = explainShard(7, sources(homesOn([[7, a]]), pins, [b]));
    expect(answer.decision).toBe('placement-unavailable');
    expect(answer.message).toBe(`shard 7 prefers ${b}, which is cordoned, so the fallback strategy placed it on ${a}.`);
    expect(answer.nodes.map((n) => [n.address, n.cordoned, n.matches])).toEqual([
      [a, false, false],
      [b, true, true],
      [c, false, false],
    ]);
  });

  it('a require pin to a cordoned node, or to a selector only cordoned nodes match: waiting', () => {
    const state = homesOn([]);
    const byAddress = explainShard(7, sources(state, new Map([[7, PlacementPin.of(b, { mode: 'require' })]]), [b]));
    expect(byAddress).toMatchObject({ home: null, decision: 'waiting' });
    expect(byAddress.message).toContain('which is cordoned: it has no home and waits');
    const bySelector = explainShard(
      7,
      sources(state, new Map([[7, PlacementPin.of('zone=b', { mode: 'require' })]]), [b, c]),
    );
    expect(bySelector.decision).toBe('waiting');
    expect(bySelector.message).toContain('which matches only cordoned nodes');
  });

  it('a pinned shard on its cordoned target stays there, honoured', () => {
    const answer = explainShard(7, sources(homesOn([[7, b]]), new Map([[7, PlacementPin.of(b)]]), [b]));
    expect(answer).toMatchObject({ home: b, decision: 'placement' });
    expect(answer.message).toContain('cordoned: it keeps what it hosts but takes no new shards');
  });

  it("a pin the strategy reads none of is listed, and the decision is the fallback's", () => {
    const state = homesOn([[7, a]]);
    const listed: PinRecord = {
      shardId: 7,
      target: b,
      mode: 'prefer',
      expiresAt: null,
      reason: null,
      by: null,
      writer: a,
      hlc: { wallMs: 1, counter: 0, node: a },
    };
    const answer = explainShard(7, { ...sources(state, new Map(), []), pins: undefined, listed });
    expect(answer).toMatchObject({ decision: 'fallback', placement: listed });
    expect(answer.message).toContain('reads no pins');
    expect(answer.nodes.every((n) => n.matches === null)).toBe(true);
  });

  it('says so when a hand-off of the shard is in progress', () => {
    const state = homesOn([[7, a]]);
    const answer = explainShard(7, {
      ...sources(state, new Map(), []),
      state: {
        ...state,
        homeOf: (id) => state.homeOf(id),
        locations: () => state.locations(),
        historyOf: (id) => state.historyOf(id),
        isHandingOff: () => true,
      },
    });
    expect(answer.handingOff).toBe(true);
    expect(answer.message).toMatch(/; a hand-off of it is in progress\.$/);
  });
});

describe('dry-run moves', () => {
  it('no move for a prefer pin whose target is cordoned, `to: null` for a require pin that would wait', () => {
    const pins = new Map<number, PinLike>([
      [1, PlacementPin.of(b)],
      [2, PlacementPin.of(b, { mode: 'require' })],
      [3, PlacementPin.of(c)],
    ]);
    const { strategy, warnings } = external(pins);
    const state = homesOn([
      [1, a],
      [2, a],
      [3, a],
      [4, b],
    ]);
    const candidates = [A, C];
    const { moves } = rebalanceRoundMoves(
      strategy.withPins(pins, () => undefined),
      candidates,
      state.shardMap(),
      new Set(),
    );
    expect(moves).toEqual([
      { shardId: 2, from: a, to: null },
      { shardId: 3, from: a, to: c },
    ]);
    // The dry-run copy reported to its own sink, not to the strategy's.
    expect(warnings).toEqual([]);
    // The state was only read.
    expect(state.locations()).toEqual([
      { address: a, shards: [1, 2, 3] },
      { address: b, shards: [4] },
      { address: c, shards: [] },
    ]);
  });

  it('lands each handed-off shard with the earlier ones already landed, skipping shards with no home or already moving', () => {
    const fallback = new LeastShardAllocationStrategy({ cluster: VIEW });
    const state = homesOn([
      [1, a],
      [2, a],
      [3, a],
      [4, b],
    ]);
    const moves = landings(fallback, [A, B, C], state.shardMap(), new Set([3]), [1, 2, 3, 9, 1]);
    // Shard 1 goes to the empty c; then b and c hold one each and shard 2 leaves a with one: the lowest of the least loaded.
    expect(moves).toEqual([
      { shardId: 1, from: a, to: c },
      { shardId: 2, from: a, to: a },
    ]);
  });
});

describe('explain history', () => {
  it("lists what the coordinator did with the shard, in words, oldest first, with each event's time", () => {
    let now = 1_000;
    const state = new CoordinatorState(() => now);
    for (const region of [a, b]) state.apply({ type: 'RegionRegistered', region });
    state.apply({ type: 'ShardAllocated', shardId: 7, region: a });
    now = 2_000;
    state.apply({ type: 'ShardStarted', shardId: 7, region: a });
    now = 3_000;
    const handOff = { id: 4, owner: a, phase: 'handoff', pendingAcks: [], startedAtMs: now, cause: 'drain' } as const;
    state.apply({ type: 'HandOffStarted', shardId: 7, handOff });
    state.apply({ type: 'HandOffAcknowledged', shardId: 7, region: b });
    state.apply({ type: 'HandOffCompleted', shardId: 7, id: 4 });
    now = 4_000;
    state.apply({ type: 'ShardAllocated', shardId: 7, region: b });
    const answer = explainShard(7, sources(state, new Map(), []));
    expect(answer.history).toEqual([
      { atMs: 1_000, what: `allocated to ${a}` },
      { atMs: 2_000, what: `started on ${a}` },
      { atMs: 3_000, what: `handed off from ${a} (drain)` },
      { atMs: 3_000, what: 'stopped on its old home: hand-off complete' },
      { atMs: 4_000, what: `allocated to ${b}` },
    ]);
    expect(explainShard(8, sources(state, new Map(), [])).history).toEqual([]);
  });
});
