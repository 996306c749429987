// Lazy restore's pieces on their own: a state's outline read without decoding its value (hostile bytes refused
// within their length), a held state woken once (decoded then, failures reported), a state never woken shipped
// on as the very bytes it came in unless the sends it carries changed (spliced then, without decoding), and what
// the snapshot outcomes count when.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeValue } from '../../src/cluster/transport/message-codec.js';
import type { ProcessedSends } from '../../src/sharding/region/dedup-table.js';
import {
  HeldStates,
  isPlainValue,
  outlineOf,
  reshipState,
  skimState,
  type HeldState,
} from '../../src/sharding/region/held-state.js';
import { packSnapshots } from '../../src/sharding/region/shard-state.js';
import { StateTransfer } from '../../src/sharding/region/state-transfer.js';
import { silentLogger } from '../../src/logging.js';
import { readState } from './read-state.js';

const LIMITS = { maxEntitySnapshotBytes: 100_000, stateChunkBytes: 50_000 };
const SENDS: ProcessedSends[] = [{ node: 'sys@127.0.0.1:7001', incarnation: 5, done: [1, 4], failed: [4] }];

/** One entity's bytes as an old host packs them. */
function packed(value: unknown, sends?: ProcessedSends[]): Uint8Array {
  const bySender = new Map(sends === undefined ? [] : [['e', sends]]);
  const state = packSnapshots({ snapshots: [{ entityId: 'e', ok: true, value }] }, LIMITS, bySender).chunks[0]
    ?.entities[0]?.state;
  if (state === undefined) throw new Error('nothing packed');
  return state;
}

/** A state whose value is these bytes, whatever they are. */
function withValue(value: number[]): Uint8Array {
  const nil = encodeValue({ type: 'EntitySnapshot', value: null }).slice();
  return Uint8Array.from([...nil.subarray(0, nil.byteLength - 1), ...value]);
}

function held(bytes: Uint8Array): HeldState {
  const skimmed = skimState(bytes);
  if (!skimmed.ok) throw new Error(skimmed.reason);
  return skimmed.held;
}

/** JSON values without a `__proto__` key. */
const plainJson = fc.jsonValue().filter((value) => !JSON.stringify(value).includes('"__proto__"'));

/** A value nested deeper than the decoder's budget (64): walkable, never decoded. */
const TOO_DEEP = [...Array<number>(70).fill(0x91), 0x01];

describe('skimState', () => {
  it('locates the value without decoding it and decodes the sends', () => {
    const value = { n: 1, list: [1, 2, [3, { deep: 'x'.repeat(300) }]], bin: new Uint8Array([1, 2]) };
    const state = held(packed(value, SENDS));
    expect(state.sends).toEqual(SENDS);
    // The value lies before the sends, and is exactly what the entity gets.
    expect(state.value?.end).toBeLessThan(state.bytes.byteLength);
    expect(new HeldStates(new Map([['e', state]]), () => {}).wake('e')).toEqual({ value });
  });

  it('reads a state of a value alone (its quick path) as the general reading does', () => {
    fc.assert(
      // A `__proto__` key is the codec's own business (it never becomes a prototype), not this path's.
      fc.property(plainJson, (value) => {
        // msgpack keeps no -0, as JSON does not: the value an entity gets back is its JSON round trip.
        const expected = { value: JSON.parse(JSON.stringify(value)) as unknown };
        const bytes = packed(value);
        const quick = held(bytes);
        // A trailing byte takes the general reading, which ignores what follows the map.
        const general = held(Uint8Array.from([...bytes, 0xc0]));
        expect(quick.value).toEqual(general.value);
        expect([quick.sends, general.sends]).toEqual([[], []]);
        // Spliced without its sends, the state has a fixmap header: the quick path reads that too.
        const spliced = reshipState(held(packed(value, SENDS)), []) as Uint8Array;
        expect(spliced[0]).toBe(0x82);
        const fromSplice = held(spliced);
        expect(fromSplice.sends).toEqual([]);
        expect(new HeldStates(new Map([['e', fromSplice]]), () => {}).wake('e')).toEqual(expected);
        expect(new HeldStates(new Map([['e', quick]]), () => {}).wake('e')).toEqual(expected);
        // Both forms are a value alone, held as the entry they came in: read again as the outline, and woken.
        expect([isPlainValue(bytes), isPlainValue(spliced)]).toEqual([true, true]);
        expect(isPlainValue(Uint8Array.from([...bytes, 0xc0]))).toBe(false);
        const entry = { entityId: 'e', state: bytes };
        expect(outlineOf(entry)).toEqual(quick);
        expect(new HeldStates(new Map([['e', entry]]), () => {}).wake('e')).toEqual(expected);
      }),
      { numRuns: 200 },
    );
  });

  it('reads a state of a value and its sends (its quick path) as the general reading does', () => {
    const sendsArb = fc.array(
      fc.record({
        node: fc.constantFrom('sys@127.0.0.1:7001', 'sys@10.0.0.2:7702'),
        incarnation: fc.integer({ min: 1, max: 1_000_000 }),
        done: fc.array(fc.integer({ min: 1, max: 1_000_000 }), { maxLength: 20 }),
        failed: fc.array(fc.integer({ min: 1, max: 1_000_000 }), { maxLength: 5 }),
      }),
      { minLength: 1, maxLength: 4 },
    );
    fc.assert(
      fc.property(plainJson, sendsArb, (value, sends) => {
        const bytes = packed(value, sends);
        const quick = held(bytes);
        const general = held(Uint8Array.from([...bytes, 0xc0]));
        expect([quick.value, quick.sends]).toEqual([general.value, general.sends]);
        expect(quick.sends).toEqual(sends);
        // A state with sends is never held as its entry alone: they go into the dedup table at the start.
        expect(isPlainValue(bytes)).toBe(false);
        const expected = { value: JSON.parse(JSON.stringify(value)) as unknown };
        expect(new HeldStates(new Map([['e', quick]]), () => {}).wake('e')).toEqual(expected);
        // Spliced with other sends, the state has a fixmap header of 3: the quick path reads that too.
        const spliced = reshipState(quick, SENDS) as Uint8Array;
        expect(spliced[0]).toBe(0x83);
        expect(held(spliced).sends).toEqual(SENDS);
      }),
      { numRuns: 200 },
    );
  });

  it('refuses malformed sends after a value, and sends that do not end where the state ends are read in full', () => {
    const bytes = encodeValue({ type: 'EntitySnapshot', value: 1, sends: [{ node: 1 }] }).slice();
    expect(skimState(bytes)).toEqual({ ok: false, reason: 'malformed processed sends' });
    const truncated = packed('v', SENDS);
    expect(skimState(truncated.subarray(0, truncated.byteLength - 1)).ok).toBe(false);
  });

  it('refuses bytes that are no snapshot, truncated or lying about their size, within their length', () => {
    const full = packed('v');
    for (const bytes of [
      new Uint8Array([0xc1]),
      new Uint8Array([0x01]),
      full.subarray(0, full.byteLength - 1),
      encodeValue({ type: 'Other', value: 1 }).slice(),
      encodeValue({ value: 1 }).slice(),
      // A map claiming four billion pairs in six bytes.
      new Uint8Array([0xdf, 0xff, 0xff, 0xff, 0xff, 0xa4]),
      // A value claiming 65,535 items, none there.
      withValue([0xdc, 0xff, 0xff]),
    ])
      expect(skimState(bytes).ok).toBe(false);
    expect(skimState(encodeValue({ type: 'EntitySnapshot', sends: [{ node: 1 }] }).slice())).toEqual({
      ok: false,
      reason: 'malformed processed sends',
    });
  });

  it('reads where a string or binary value ends from its header as the general reading does, cut or whole', () => {
    // Lengths across each header's bound: fixstr (31), str8 and bin8 (255), str16 and bin16 (65,535), then 32-bit.
    const length = fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 65_500, max: 65_600 }));
    const value = fc.oneof(
      length.map((n) => 'y'.repeat(n)),
      length.map((n) => new Uint8Array(n).fill(7)),
    );
    fc.assert(
      fc.property(value, fc.nat(), (value, cut) => {
        const bytes = packed(value);
        const quick = held(bytes);
        expect(quick.value).toEqual(held(Buffer.concat([bytes, Uint8Array.of(0xc0)])).value);
        expect(new HeldStates(new Map([['e', quick]]), () => {}).wake('e')).toEqual({ value });
        // Cut short anywhere, the state is refused: the header's length is never trusted past the bytes.
        expect(skimState(bytes.subarray(0, cut % bytes.byteLength)).ok).toBe(false);
      }),
      { numRuns: 100 },
    );
  });

  it('reads keys and the type however msgpack encodes the strings (str8 headers)', () => {
    const str8 = (text: string): number[] => [0xd9, text.length, ...Buffer.from(text)];
    const bytes = Uint8Array.from([0x82, ...str8('type'), ...str8('EntitySnapshot'), ...str8('value'), 0x07]);
    expect(new HeldStates(new Map([['e', held(bytes)]]), () => {}).wake('e')).toEqual({ value: 7 });
  });
});

describe('HeldStates', () => {
  it('gives a state once, reports one whose value cannot be decoded, and drains what is left', () => {
    // Nested past the decoder's depth budget: its outline is fine, its decoding refused.
    const bad = withValue(TOO_DEEP);
    const unreadable: string[] = [];
    const states = new HeldStates(
      new Map([
        ['a', held(packed('A'))],
        ['bad', held(bad)],
        ['c', held(packed('C'))],
      ]),
      (entityId) => unreadable.push(entityId),
    );
    expect(states.wake('a')).toEqual({ value: 'A' });
    expect(states.wake('a')).toBeUndefined();
    expect(states.wake('bad')).toBeUndefined();
    expect(unreadable).toEqual(['bad']);
    expect([...states.drain().states.keys()]).toEqual(['c']);
    expect(states.size).toBe(0);
  });
});

describe('reshipState', () => {
  it('ships the very bytes it received while the sends they carry are unchanged', () => {
    const withSends = held(packed('v', SENDS));
    expect(reshipState(withSends, SENDS)).toBe(withSends.bytes);
    const without = held(packed('w'));
    expect(reshipState(without, [])).toBe(without.bytes);
  });

  it('splices the value unchanged with the sends the dedup table kept now, or none', () => {
    const value = { list: ['x'.repeat(200), 2] };
    const state = held(packed(value, SENDS));
    const later: ProcessedSends[] = [{ ...(SENDS[0] as ProcessedSends), done: [4, 9], failed: [4] }];
    expect(readState(reshipState(state, later) as Uint8Array)).toEqual({
      ok: true,
      restored: true,
      value,
      sends: later,
    });
    expect(readState(reshipState(state, []) as Uint8Array)).toEqual({ ok: true, restored: true, value, sends: [] });
    expect(readState(reshipState(held(packed(value)), later) as Uint8Array)).toMatchObject({ value, sends: later });
  });

  it('packSnapshots ships a held state on, counts it, and applies maxEntitySnapshotBytes to it', () => {
    const state = held(packed('z'.repeat(2_000), SENDS));
    const sends = new Map([['h', SENDS]]);
    const shipped = packSnapshots({ snapshots: [{ entityId: 'h', ok: true, held: state }] }, LIMITS, sends);
    expect(shipped.values).toBe(1);
    expect(shipped.chunks[0]?.entities[0]?.state).toEqual(state.bytes);
    const small = { ...LIMITS, maxEntitySnapshotBytes: 1_000 };
    const refused = packSnapshots({ snapshots: [{ entityId: 'h', ok: true, held: state }] }, small, sends);
    expect(refused.refused.map((r) => r.outcome)).toEqual(['too_large']);
    // The value stays behind; what the entity processed still travels.
    expect(readState(refused.chunks[0]?.entities[0]?.state as Uint8Array)).toEqual({
      ok: true,
      restored: false,
      value: undefined,
      sends: SENDS,
    });
  });
});

describe('StateTransfer with held states', () => {
  it("starts with each entity's entry in the latest part, whatever either part holds for it", () => {
    const transfer = new StateTransfer({
      typeName: 'T',
      config: { ...LIMITS, maxHandOffStateBytes: 1_000_000, handOffTimeoutMs: 60_000 },
      logger: silentLogger(),
    });
    const garbage = new Uint8Array([0x93, 0x01]);
    const empty = encodeValue({ type: 'EntitySnapshot' }).slice();
    const parts = [
      // a: a state, then garbage; b: garbage, then a state; c: a state with sends, then an empty state; d: a
      // state with sends, then one without; e: sends alone, then a state; f: only here.
      [
        ['a', packed('A0')],
        ['b', garbage],
        ['c', packed('C0', SENDS)],
        ['d', packed('D0', SENDS)],
        ['e', encodeValue({ type: 'EntitySnapshot', sends: SENDS }).slice()],
        ['f', packed('F0', SENDS)],
      ],
      [
        ['a', garbage],
        ['b', packed('B1')],
        ['c', empty],
        ['d', packed('D1')],
        ['e', packed('E1', SENDS)],
      ],
    ] as const;
    parts.forEach((entries, part) =>
      transfer.received({
        type: 'RestoreShardState',
        ...{ typeName: 'T', shardId: 1, transferId: 9, part, parts: parts.length },
        entities: entries.map(([entityId, state]) => ({ entityId, state })),
      }),
    );
    const restored = transfer.restore(1);
    expect(transfer.outcomes).toMatchObject({ restored: 4, failed: 1 });
    expect([...(restored?.sends.keys() ?? [])].sort()).toEqual(['e', 'f']);
    const woken = ['a', 'b', 'c', 'd', 'e', 'f'].map((entityId) => restored?.states.wake(entityId)?.value);
    expect(woken).toEqual([undefined, 'B1', undefined, 'D1', 'E1', 'F0']);
  });

  it("counts 'restored' when a state is accepted at the start, 'failed' again if its value cannot be decoded", () => {
    const events: Array<[string, number]> = [];
    const transfer = new StateTransfer({
      typeName: 'T',
      config: { ...LIMITS, maxHandOffStateBytes: 1_000_000, handOffTimeoutMs: 60_000 },
      logger: silentLogger(),
      events: { onEntitySnapshots: (_type, outcome, count) => void events.push([outcome, count]) },
    });
    const entities = [
      { entityId: 'good', state: packed('G', SENDS) },
      { entityId: 'bad-value', state: withValue(TOO_DEEP) },
      { entityId: 'garbage', state: new Uint8Array([0x93, 0x01]) },
    ];
    transfer.received({
      type: 'RestoreShardState',
      typeName: 'T',
      shardId: 1,
      transferId: 9,
      part: 0,
      parts: 1,
      entities,
    });
    const restored = transfer.restore(1);
    expect(events).toEqual([
      ['restored', 2],
      ['failed', 1],
    ]);
    expect([...(restored?.sends.keys() ?? [])]).toEqual(['good']);
    expect(restored?.states.wake('bad-value')).toBeUndefined();
    expect(transfer.outcomes).toMatchObject({ restored: 2, failed: 2 });
    // The good one, never woken, goes on with the next hand-off as it came (the same bytes, copied into the chunk).
    const held = restored?.states.drain();
    // The dedup table gives back the sends it restored: the bytes go on unchanged.
    const chunks = transfer.outgoing(1, 10, { snapshots: [], held }, restored?.sends);
    expect(chunks[0]?.entities.map((e) => e.entityId)).toEqual(['good']);
    expect(chunks[0]?.entities[0]?.state).toEqual(entities[0]?.state);
    expect(transfer.outcomes.shipped).toBe(1);
  });
});
