// A shard moved on before its entities woke: each chunk none of whose states changed on this host goes on as the
// very bytes it came in (packSnapshots, unchangedChunk), the others are packed state by state; whatever goes, the
// new host reads exactly the states and sends it would have read had every state been packed again, each once,
// the final chunk alone marked last.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ProcessedSends } from '../../src/sharding/region/dedup-table.js';
import { skimState } from '../../src/sharding/region/held-state.js';
import { packSnapshots, type PackedChunk, type TakenSnapshot } from '../../src/sharding/region/shard-state.js';
import { unpackEntities } from '../../src/sharding/protocol/packed-states.js';
import { MAX_ENTITIES_PER_CHUNK } from '../../src/sharding/protocol/state-messages.js';
import { MAX_ENTITY_ID_LENGTH } from '../../src/sharding/protocol/entity-messages.js';
import { readState } from './read-state.js';

const LIMITS = { maxEntitySnapshotBytes: 100_000, stateChunkBytes: 3_000 };
const READ_LIMITS = { maxEntities: MAX_ENTITIES_PER_CHUNK, maxEntityIdLength: MAX_ENTITY_ID_LENGTH };
const sendsOf = (n: number): ProcessedSends[] => [
  { node: 'sys@127.0.0.1:7001', incarnation: 3, done: [n + 1], failed: [] },
];

/** Every entity's state and sends as an old host packs them, then as its new host holds them (chunk by chunk). */
function received(values: ReadonlyArray<string>, budget = LIMITS): { chunks: PackedChunk[]; held: TakenSnapshot[] } {
  const sends = new Map(values.map((_, i) => [`e${i}`, sendsOf(i)]));
  const snapshots = values.map((value, i) => ({ entityId: `e${i}`, ok: true as const, value }));
  const { chunks } = packSnapshots(snapshots, budget, sends);
  const held: TakenSnapshot[] = [];
  for (const chunk of chunks)
    for (const { entityId, state } of unpackEntities(chunk.packed, READ_LIMITS) ?? []) {
      const skimmed = skimState(state, chunk.packed);
      if (!skimmed.ok) throw new Error(skimmed.reason);
      held.push({ entityId, ok: true, held: skimmed.held });
    }
  return { chunks, held };
}

/** What a new host reads from the chunks: each entity once (else throws), its value and sends; the last flags. */
function read(out: ReadonlyArray<[PackedChunk, boolean]>): Map<string, { value: unknown; sends: unknown }> {
  const states = new Map<string, { value: unknown; sends: unknown }>();
  for (const [chunk] of out) {
    const entities = unpackEntities(chunk.packed, READ_LIMITS);
    if (entities === undefined) throw new Error('a chunk that does not read');
    for (const { entityId, state } of entities) {
      if (states.has(entityId)) throw new Error(`${entityId} twice`);
      const restored = readState(state);
      if (!restored.ok) throw new Error(restored.reason);
      states.set(entityId, { value: restored.value, sends: restored.sends });
    }
  }
  return states;
}

function pack(held: TakenSnapshot[], sends: Map<string, ProcessedSends[]>) {
  const out: Array<[PackedChunk, boolean]> = [];
  const packed = packSnapshots(held, LIMITS, sends, (chunk, last) => out.push([chunk, last]));
  return { out, packed };
}

const unchangedSends = (count: number) => new Map(Array.from({ length: count }, (_, i) => [`e${i}`, sendsOf(i)]));

describe('packSnapshots with states held since the last hand-off', () => {
  it('ships each chunk as it came when nothing changed, no state copied, the final one last', () => {
    const { chunks, held } = received(Array.from({ length: 9 }, (_, i) => `${i}`.repeat(700)));
    expect(chunks.length).toBe(3);
    const { out, packed } = pack(held, unchangedSends(9));
    expect(out.map(([chunk]) => chunk.packed)).toEqual(chunks.map((chunk) => chunk.packed));
    out.forEach(([chunk], i) => expect(chunk.packed).toBe(chunks[i]?.packed));
    expect(out.map(([, last]) => last)).toEqual([false, false, true]);
    expect(packed).toMatchObject({ values: 9, refused: [] });
    expect(packed.bytes).toBe(chunks.flatMap((c) => c.entities).reduce((n, e) => n + e.state.byteLength, 0));
  });

  it('packs again the chunk of an entity that woke, and of one whose sends changed; ships the rest as they came', () => {
    const { chunks, held } = received(Array.from({ length: 9 }, (_, i) => `${i}`.repeat(700)));
    const sends = unchangedSends(9);
    sends.set('e4', [...sendsOf(4), ...sendsOf(40)]);
    // e1 woke here: its state is no longer held (the entity ships its own snapshot, packed first), so the last
    // chunk shipped as it came is not the final one.
    const taken: TakenSnapshot[] = [
      { entityId: 'e1', ok: true, value: 'woke' },
      ...held.filter((s) => s.entityId !== 'e1'),
    ];
    const { out } = pack(taken, sends);
    const shippedAsCame = out.filter(([chunk]) => chunks.some((c) => c.packed === chunk.packed));
    expect(shippedAsCame.map(([chunk]) => chunk.entities.map((e) => e.entityId))).toEqual([['e6', 'e7', 'e8']]);
    const states = read(out);
    expect(states.get('e1')).toEqual({ value: 'woke', sends: sendsOf(1) });
    expect(states.get('e4')?.sends).toEqual([...sendsOf(4), ...sendsOf(40)]);
    expect([...states.keys()].sort()).toEqual(Array.from({ length: 9 }, (_, i) => `e${i}`).sort());
    expect(out.map(([, last]) => last).filter(Boolean)).toHaveLength(1);
    expect(out.at(-1)?.[1]).toBe(true);
  });

  it('is not the final chunk when an entity known only by its sends is packed after it', () => {
    const { chunks, held } = received(['a'.repeat(700), 'b'.repeat(700)]);
    const sends = unchangedSends(2);
    sends.set('only-sends', sendsOf(9));
    const { out } = pack(held, sends);
    expect(out.map(([chunk, last]) => [chunk.packed === chunks[0]?.packed, last])).toEqual([
      [true, false],
      [false, true],
    ]);
    expect(read(out).get('only-sends')).toEqual({ value: undefined, sends: sendsOf(9) });
  });

  it('ships the unchanged chunks first; the states packed after them end the transfer', () => {
    // One state per chunk; e0 woke here and processed nothing the dedup table keeps.
    const { chunks, held } = received(['a', 'b', 'c'].map((c) => c.repeat(2_800)));
    expect(chunks.length).toBe(3);
    const sends = unchangedSends(3);
    sends.delete('e0');
    const taken: TakenSnapshot[] = [{ entityId: 'e0', ok: true, value: 'woke' }, ...held.slice(1)];
    const { out } = pack(taken, sends);
    expect(
      out.map(([chunk, last]) => [chunk.entities.map((e) => e.entityId), chunk.packed === chunks[0]?.packed, last]),
    ).toEqual([
      [['e1'], false, false],
      [['e2'], false, false],
      [['e0'], false, true],
    ]);
    expect(out[0]?.[0].packed).toBe(chunks[1]?.packed);
    expect(out[1]?.[0].packed).toBe(chunks[2]?.packed);
  });

  it('packs again a chunk cut under a larger budget than this one, and a state over maxEntitySnapshotBytes', () => {
    const { chunks, held } = received(['a'.repeat(2_000), 'b'.repeat(2_000)], { ...LIMITS, stateChunkBytes: 10_000 });
    expect(chunks.length).toBe(1);
    const { out } = pack(held, unchangedSends(2));
    expect(out.map(([chunk]) => chunk.entities.length)).toEqual([1, 1]);
    const small = packSnapshots(held.slice(0, 1), { ...LIMITS, maxEntitySnapshotBytes: 1_000 }, unchangedSends(1));
    expect(small.refused.map((r) => r.outcome)).toEqual(['too_large']);
  });

  it('any mix of woken entities, changed or forgotten sends, extra senders and order reads as a full repacking would', () => {
    const scenario = fc.record({
      values: fc.array(fc.string({ minLength: 300, maxLength: 900 }), { minLength: 1, maxLength: 40 }),
      woken: fc.array(fc.nat({ max: 45 }), { maxLength: 5 }),
      changed: fc.array(fc.nat({ max: 45 }), { maxLength: 5 }),
      extra: fc.array(fc.integer({ min: 100, max: 110 }), { maxLength: 3 }),
      forgotten: fc.array(fc.nat({ max: 45 }), { maxLength: 3 }),
      swap: fc.option(fc.tuple(fc.nat(), fc.nat())),
    });
    fc.assert(
      fc.property(scenario, ({ values, woken, changed, extra, forgotten, swap }) => {
        const { held } = received(values);
        const n = values.length;
        const wokenIds = new Set(woken.map((i) => `e${i % n}`));
        const sends = unchangedSends(n);
        for (const i of changed.map((k) => k % n)) sends.set(`e${i}`, [...sendsOf(i), ...sendsOf(i + 1_000)]);
        for (const i of extra) sends.set(`x${i}`, sendsOf(i));
        // Sends the dedup table no longer keeps (an entity's state then goes without them).
        for (const i of forgotten) sends.delete(`e${i % n}`);
        const taken: TakenSnapshot[] = [
          ...[...wokenIds].map((entityId) => ({ entityId, ok: true as const, value: `woke ${entityId}` })),
          ...held.filter((s) => !wokenIds.has(s.entityId)),
        ];
        if (swap !== null && taken.length > 1) {
          const [i, j] = [swap[0] % taken.length, swap[1] % taken.length];
          [taken[i], taken[j]] = [taken[j] as TakenSnapshot, taken[i] as TakenSnapshot];
        }
        const { out, packed } = pack(taken, sends);
        const states = read(out);
        const expected = new Map<string, { value: unknown; sends: unknown }>();
        values.forEach((value, i) => {
          const id = `e${i}`;
          expected.set(id, { value: wokenIds.has(id) ? `woke ${id}` : value, sends: sends.get(id) ?? [] });
        });
        for (const i of extra) expected.set(`x${i}`, { value: undefined, sends: sendsOf(i) });
        expect(states).toEqual(expected);
        expect(packed.values).toBe(n);
        if (out.length > 0) expect(out.map(([, last]) => last)).toEqual(out.map((_, i) => i === out.length - 1));
        for (const [chunk] of out)
          if (chunk.entities.length > 1)
            expect(chunk.packed.byteLength).toBeLessThanOrEqual(LIMITS.stateChunkBytes + 4);
      }),
      { numRuns: 300 },
    );
  });
});
