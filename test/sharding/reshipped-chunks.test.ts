// A shard moved on before most of its entities woke: each chunk whose held states mostly did not change on this
// host goes on as the very bytes it came in (packSnapshots, reshipped-chunks.ts), stale entries and all, and
// whatever they carry that is no longer current is stated again after them; the others are packed state by
// state. Whatever goes, the new host (the real StateTransfer, an entity's entry in a later part winning) reads
// exactly what the old host held, hop after hop, and the transfer's final chunk alone is marked last.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeMessage } from '../../src/cluster/transport/message-codec.js';
import { packEntities, unpackEntities } from '../../src/sharding/protocol/packed-states.js';
import type { ArrivedChunk } from '../../src/sharding/region/held-state.js';
import { toRestate, type ReshippedChunk } from '../../src/sharding/region/reshipped-chunks.js';
import { packSnapshots, type PackedChunk, type TakenSnapshot } from '../../src/sharding/region/shard-state.js';
import {
  LIMITS,
  NO_EARLY,
  READ_LIMITS,
  contents,
  endsOnce,
  firstHop,
  hop,
  lasts,
  sendsOf,
  stop,
  stopAfterEarly,
  type Contents,
  type Sends,
} from './hops.js';

describe('packSnapshots with states held since the last hand-off', () => {
  it('ships each chunk as it came when nothing changed, no state copied, the final one last', () => {
    const first = firstHop(9, 700);
    expect(first.out.length).toBe(3);
    const next = hop(stop(first.held), first.sends, 2);
    next.out.forEach(([chunk], i) => expect(chunk.packed).toBe(first.out[i]?.[0].packed));
    expect(lasts(next.out)).toEqual([false, false, true]);
    expect(next.packed).toMatchObject({ values: 9, refused: [] });
    expect(contents(next)).toEqual(contents(first));
  });

  it("ships a woken entity's chunk as it came, stale entry and all; its new state follows and wins", () => {
    const first = firstHop(36);
    const chunks = first.out.map(([chunk]) => chunk.packed);
    expect(chunks.length).toBeGreaterThan(2);
    const woken = [{ entityId: 'e1', ok: true as const, value: 'woke' }];
    const next = hop(
      stop(first.held, woken, (id) => id !== 'e1'),
      first.sends,
      2,
    );
    expect(next.out.slice(0, chunks.length).map(([chunk]) => chunk.packed)).toEqual(chunks);
    next.out.slice(0, chunks.length).forEach(([chunk], i) => expect(chunk.packed).toBe(chunks[i]));
    expect(next.out.slice(chunks.length).map(([chunk]) => chunk.entities.map((e) => e.entityId))).toEqual([['e1']]);
    expect(lasts(next.out)).toEqual(endsOnce(next.out));
    expect(contents(next).get('e1')).toEqual({ value: 'woke', sends: sendsOf(1) });
    expect(next.packed.values).toBe(36);
  });

  it('overrides the stale entry of an entity that kept nothing, or was passivated, with an empty state', () => {
    const first = firstHop(36);
    const chunks = first.out.map(([chunk]) => chunk.packed);
    // One entity of each of the first three chunks: a is woken and its state is now undefined; b and c were
    // passivated (in memory: their state is gone), c keeps the sends it processed.
    const [a, b, c] = first.out.slice(0, 3).map(([chunk]) => chunk.entities[0]?.entityId as string);
    const sends = new Map(first.sends);
    sends.delete(a as string);
    sends.delete(b as string);
    const gone = new Set([a, b, c]);
    const woken = [{ entityId: a as string, ok: true as const, value: undefined }];
    const next = hop(
      stop(first.held, woken, (id) => !gone.has(id)),
      sends,
      2,
    );
    // Each of their chunks still goes as it came, its stale entry overridden after it.
    expect(next.out.slice(0, chunks.length).map(([chunk]) => chunk.packed)).toEqual(chunks);
    const expected = contents(first);
    expected.delete(a as string);
    expected.delete(b as string);
    expected.set(c as string, { value: undefined, sends: first.sends.get(c as string) ?? [] });
    expect(contents(next)).toEqual(expected);
    expect(lasts(next.out)).toEqual(endsOnce(next.out));
  });

  it('ends the transfer with a chunk marked last even when nothing is written after the chunks that go as they came', () => {
    const first = firstHop(9, 700);
    // A new entity whose snapshot holds nothing, one whose snapshot failed: neither writes anything.
    const snapshots: TakenSnapshot[] = [
      { entityId: 'new', ok: true, value: undefined },
      { entityId: 'failed', ok: false, error: 'boom' },
    ];
    const next = hop(stop(first.held, snapshots), first.sends, 2);
    expect(lasts(next.out)).toEqual(endsOnce(next.out));
    expect(next.out.at(-1)?.[0].entities).toEqual([]);
    expect(contents(next)).toEqual(contents(first));
  });

  it('packs woken entities larger than the room their chunk starts with, growing it within the budget', () => {
    const first = firstHop(36);
    const chunks = first.out.length;
    // The chunk after those that go as they came starts with room for small entries; these are larger.
    const woken = ['e1', 'e14', 'e27'].map((entityId, i) => ({
      entityId,
      ok: true as const,
      value: 'W'.repeat(950 + i),
    }));
    const ids = new Set(woken.map((w) => w.entityId));
    const next = hop(
      stop(first.held, woken, (id) => !ids.has(id)),
      first.sends,
      2,
    );
    const packedAfter = next.out.slice(chunks).map(([chunk]) => chunk);
    // Two in one chunk (more than it started with room for), the third in the next: the budget holds two.
    expect(packedAfter.map((chunk) => chunk.entities.map((e) => e.entityId))).toEqual([['e1', 'e14'], ['e27']]);
    for (const chunk of packedAfter) expect(chunk.packed.byteLength).toBeLessThanOrEqual(LIMITS.stateChunkBytes);
    expect(lasts(next.out)).toEqual(endsOnce(next.out));
    const expected = contents(first);
    woken.forEach(({ entityId, value }) =>
      expected.set(entityId, { value, sends: expected.get(entityId)?.sends ?? [] }),
    );
    expect(contents(next)).toEqual(expected);
  });

  it("knows each chunk's superseded entries: none of values alone, a woken entity's, a restated one's", () => {
    const first = firstHop(36, 200, 0);
    const all = first.held.chunks;
    expect(all.length).toBeGreaterThan(2);
    expect([...first.held.intact]).toEqual(all.map((chunk) => [chunk, []]));
    // e1 (the second entry of the first chunk) woke: that entry alone is superseded.
    expect(all[0]?.entities[1]?.entityId).toBe('e1');
    const woken = [{ entityId: 'e1', ok: true as const, value: 'woke' }];
    const stopped = stop(first.held, woken, (id) => id !== 'e1');
    expect([...(stopped.held?.intact ?? [])]).toEqual(all.map((chunk, i) => [chunk, i === 0 ? [1] : []]));
    // The next host gets e1's stale entry as it came and, in a later part, its state: the stale one is known.
    const second = hop(stopped, first.sends, 2);
    expect(second.held.chunks[0]?.packed).toBe(all[0]?.packed);
    expect([...second.held.intact]).toEqual(second.held.chunks.map((chunk, i) => [chunk, i === 0 ? [1] : []]));
    // States with sends leave their chunks known: each such state is looked at when the shard stops.
    const withSends = firstHop(36).held;
    expect([withSends.intact.size, withSends.withSends.length]).toEqual([withSends.chunks.length, 36]);
    // Past TRACKED_WAKES (64) wakes none is known: every entry is looked up, and the transfer still reads.
    const large = firstHop(150, 20, 0);
    const lots = stop(large.held, [], (id) => Number(id.slice(1)) >= 65);
    expect([large.held.intact.size > 0, lots.held?.intact.size]).toEqual([true, 0]);
    const expected = contents(large);
    for (let i = 0; i < 65; i++) expected.delete(`e${i}`);
    expect(contents(hop(lots, new Map(), 2))).toEqual(expected);
  });

  it('looks at a held state with sends in an intact chunk: forgotten by the dedup table, it goes without them', () => {
    const first = firstHop(60, 20, 30);
    expect(first.held.withSends).toEqual(['e0', 'e30']);
    expect(first.held.intact.size).toBe(first.held.chunks.length);
    const sends = new Map(first.sends);
    sends.delete('e0');
    const next = hop(stop(first.held), sends, 2);
    const expected = contents(first);
    expected.set('e0', { value: expected.get('e0')?.value, sends: [] });
    expect(contents(next)).toEqual(expected);
  });

  it('packs again a chunk more than a quarter superseded, its stale entries dropped', () => {
    const first = firstHop(36);
    const [firstChunk] = first.out[0] as [PackedChunk, boolean];
    const woken = firstChunk.entities.slice(0, 5).map((e) => e.entityId);
    const snapshots = woken.map((entityId) => ({ entityId, ok: true as const, value: `woke ${entityId}` }));
    const next = hop(
      stop(first.held, snapshots, (id) => !woken.includes(id)),
      first.sends,
      2,
    );
    expect(next.out.some(([chunk]) => chunk.packed === firstChunk.packed)).toBe(false);
    expect(next.out.filter(([chunk]) => chunk.packed === first.out[1]?.[0].packed)).toHaveLength(1);
    const entries = next.out.reduce((n, [chunk]) => n + chunk.entities.length, 0);
    expect(entries).toBe(36);
    for (const id of woken) expect(contents(next).get(id)?.value).toBe(`woke ${id}`);
  });

  it('ships chunks in the order of the parts they came as: an entity with entries in two keeps its winner', () => {
    const first = firstHop(36);
    const woken = [{ entityId: 'e1', ok: true as const, value: 'woke' }];
    const second = hop(
      stop(first.held, woken, (id) => id !== 'e1'),
      first.sends,
      2,
    );
    // Nothing woke: every chunk goes as it came, e1's own chunk after the one with its stale entry, whatever
    // order the held states are in.
    const third = hop(
      stop(second.held, [], () => true, true),
      second.sends,
      3,
    );
    expect(third.out.map(([chunk]) => chunk.packed)).toEqual(second.out.map(([chunk]) => chunk.packed));
    expect(contents(third).get('e1')?.value).toBe('woke');
    expect(contents(third)).toEqual(contents(second));
  });

  it('states again an entity whose current entry is in an earlier chunk than a stale one (never built by a real host)', () => {
    const state = (value: string): Uint8Array => encodeMessage({ type: 'EntitySnapshot', value });
    const chunkOf = (part: number, entries: Array<[string, string]>): ArrivedChunk => {
      const packed = packEntities(entries.map(([entityId, value]) => ({ entityId, state: state(value) })));
      return { packed, entities: unpackEntities(packed, READ_LIMITS) ?? [], part };
    };
    const a = chunkOf(0, [['x', 'current']]);
    const b = chunkOf(1, [
      ['x', 'stale'],
      ...Array.from({ length: 6 }, (_, i): [string, string] => [`y${i}`, 'y'.repeat(300)]),
    ]);
    // What the host holds: x's entry in a, every y's in b (x's there is stale), each as it arrived.
    const states = new Map([a.entities[0], ...b.entities.slice(1)].map((entry) => [entry?.entityId ?? '', entry!]));
    const runA: ReshippedChunk = { arrived: a, current: Uint8Array.of(1), count: 1, currentBytes: 0 };
    const runB: ReshippedChunk = {
      arrived: b,
      current: Uint8Array.of(0, 1, 1, 1, 1, 1, 1),
      count: 6,
      currentBytes: 0,
    };
    const restated = [...toRestate([runA, runB], new Set(), states).entries()];
    expect(restated.map(([entityId, snapshot]) => [entityId, snapshot?.held.bytes])).toEqual([
      ['x', a.entities[0]?.state],
    ]);
    expect(toRestate([runA, runB], new Set(['x']), states).size).toBe(0);
    const next = hop(
      { snapshots: [], held: { states, chunks: [a, b], intact: new Map([[a, []]]), withSends: [] } },
      new Map(),
      2,
    );
    expect(next.out.slice(0, 2).map(([chunk]) => chunk.packed)).toEqual([a.packed, b.packed]);
    expect(contents(next).get('x')?.value).toBe('current');
  });

  it('packs again a chunk cut under a larger budget than this one, and refuses a state over maxEntitySnapshotBytes', () => {
    const values = ['a'.repeat(2_000), 'b'.repeat(2_000)];
    const snapshots = values.map((value, i) => ({ entityId: `e${i}`, ok: true as const, value }));
    const chunks: PackedChunk[] = [];
    packSnapshots({ snapshots }, { ...LIMITS, stateChunkBytes: 10_000 }, new Map(), (chunk) => chunks.push(chunk));
    expect(chunks.length).toBe(1);
    const packed = chunks[0]?.packed as Uint8Array;
    const arrived: ArrivedChunk = { packed, entities: unpackEntities(packed, READ_LIMITS) ?? [], part: 0 };
    const states = new Map(arrived.entities.map((entry) => [entry.entityId, entry]));
    const held = { states, chunks: [arrived], intact: new Map([[arrived, []]]), withSends: [] };
    const next = hop(stop(held), new Map(), 2);
    expect(next.out.map(([chunk]) => chunk.entities.length)).toEqual([1, 1]);
    const small = packSnapshots(
      stop(held, [], (id) => id === 'e0'),
      { ...LIMITS, maxEntitySnapshotBytes: 1_000 },
    );
    expect(small.refused.map((r) => r.outcome)).toEqual(['too_large']);
  });

  it('any run of hops, entities waking, clearing, passivated, sends changed or forgotten, chunks sent ahead of the stop, reads as the old host held', () => {
    const event = fc.record({
      woken: fc.array(fc.nat({ max: 60 }), { maxLength: 6 }),
      cleared: fc.array(fc.nat({ max: 60 }), { maxLength: 3 }),
      passivated: fc.array(fc.nat({ max: 60 }), { maxLength: 4 }),
      changed: fc.array(fc.nat({ max: 60 }), { maxLength: 4 }),
      forgotten: fc.array(fc.nat({ max: 60 }), { maxLength: 3 }),
      fresh: fc.nat({ max: 3 }),
      shuffle: fc.boolean(),
      // Chunks sent ahead of the stop, after the entities woken `before` it (the others wake after it, the sends
      // change after it).
      early: fc.option(fc.array(fc.nat({ max: 60 }), { maxLength: 4 }), { nil: undefined }),
    });
    const scenario = fc.record({
      count: fc.integer({ min: 1, max: 50 }),
      bytes: fc.integer({ min: 20, max: 900 }),
      sendsEvery: fc.integer({ min: 0, max: 4 }),
      hops: fc.array(event, { minLength: 1, maxLength: 5 }),
    });
    fc.assert(
      fc.property(scenario, ({ count, bytes, sendsEvery, hops }) => {
        let host: ReturnType<typeof hop> = firstHop(count, bytes, sendsEvery);
        let model = contents(host);
        let ids = Array.from({ length: count }, (_, i) => `e${i}`);
        hops.forEach((e, n) => {
          const pick = (list: number[]) => new Set(list.map((i) => ids[i % ids.length] as string));
          const [woken, cleared, passivated] = [pick(e.woken), pick(e.cleared), pick(e.passivated)];
          const sends: Sends = new Map(host.sends);
          for (const id of pick(e.changed)) sends.set(id, [...(sends.get(id) ?? []), ...sendsOf(1_000 + n)]);
          for (const id of pick(e.forgotten)) sends.delete(id);
          const fresh = Array.from({ length: e.fresh }, (_, i) => `n${n}-${i}`);
          ids = [...ids, ...fresh];
          const live = new Map<string, unknown>();
          for (const id of [...woken, ...fresh]) live.set(id, `woke ${n} ${id}`);
          for (const id of cleared) live.set(id, undefined);
          for (const id of passivated) live.delete(id);
          const untouched = (id: string): boolean => !live.has(id) && !passivated.has(id) && !cleared.has(id);
          const snapshots = [...live].map(([entityId, value]) => ({ entityId, ok: true as const, value }));
          if (e.shuffle) snapshots.reverse();
          const before = e.early === undefined ? undefined : pick(e.early);
          const { stopped, early } =
            before === undefined
              ? { stopped: stop(host.held, snapshots, untouched, e.shuffle), early: NO_EARLY }
              : stopAfterEarly(host.held, snapshots, untouched, (id) => !before.has(id));
          const expected: Contents = new Map();
          for (const id of ids) {
            const value = live.has(id) ? live.get(id) : untouched(id) ? model.get(id)?.value : undefined;
            const processed = sends.get(id) ?? [];
            if (value !== undefined || processed.length > 0) expected.set(id, { value, sends: processed });
          }
          host = hop(stopped, sends, n + 2, early);
          expect(contents(host)).toEqual(expected);
          expect(lasts(host.out)).toEqual(endsOnce(host.out));
          for (const [chunk] of host.out)
            if (chunk.entities.length > 1)
              expect(chunk.packed.byteLength).toBeLessThanOrEqual(LIMITS.stateChunkBytes + 4);
          model = expected;
        });
      }),
      { numRuns: 300 },
    );
  });
});
