// The pieces of a state transfer on their own: snapshots packed under the chunk budget (a state larger than a
// chunk alone, one over the entity bound or not encodable refused), and a new host's assembly of chunks
// (complete or not, bounded, and deaf to a late copy of a transfer it already restored), whether the chunks name
// their count (`parts`) or the last of them says `last` (protocol 9's streamed transfer), in any order.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IncomingStates, type ArrivedPart, type PartsFold } from '../../src/sharding/region/incoming-states.js';
import { packSnapshots, type PackedChunk } from '../../src/sharding/region/shard-state.js';
import { readState } from './read-state.js';

const LIMITS = { maxEntitySnapshotBytes: 10_000, stateChunkBytes: 3_000 };

describe('packSnapshots', () => {
  it('chunks under the budget, sends a state larger than a chunk alone, and round-trips every value', () => {
    const packed = packSnapshots(
      {
        snapshots: [
          { entityId: 'a', ok: true, value: 'x'.repeat(1_000) },
          { entityId: 'b', ok: true, value: { n: 1, list: [1, 2, 3] } },
          { entityId: 'big', ok: true, value: 'y'.repeat(5_000) },
          { entityId: 'c', ok: true, value: 'z'.repeat(1_500) },
          { entityId: 'none', ok: true, value: undefined },
        ],
      },
      LIMITS,
    );
    expect(packed.chunks.map((chunk) => chunk.entities.map((e) => e.entityId))).toEqual([['a', 'b'], ['big'], ['c']]);
    expect(packed.refused).toEqual([]);
    const values = new Map(
      packed.chunks.flatMap((chunk) => chunk.entities).map((e) => [e.entityId, readState(e.state)]),
    );
    expect(values.get('b')).toEqual({ ok: true, restored: true, value: { n: 1, list: [1, 2, 3] }, sends: [] });
    expect(values.get('big')).toMatchObject({ ok: true, restored: true, value: 'y'.repeat(5_000) });
  });

  it('refuses a state over maxEntitySnapshotBytes, one that cannot be encoded, and a snapshot that threw', () => {
    const packed = packSnapshots(
      {
        snapshots: [
          { entityId: 'huge', ok: true, value: 'h'.repeat(20_000) },
          { entityId: 'fn', ok: true, value: { n: 2n ** 70n } },
          { entityId: 'threw', ok: false, error: 'boom' },
          { entityId: 'fine', ok: true, value: 1 },
        ],
      },
      LIMITS,
    );
    expect(packed.refused.map((r) => [r.entityId, r.outcome])).toEqual([
      ['huge', 'too_large'],
      ['fn', 'failed'],
      ['threw', 'failed'],
    ]);
    expect(packed.chunks.flatMap((chunk) => chunk.entities).map((e) => e.entityId)).toEqual(['fine']);
  });

  it('hands each chunk on as soon as it is full, the final one marked last, the same chunks it returns', () => {
    const seen: Array<[PackedChunk, boolean]> = [];
    const snapshots = ['a', 'b', 'c', 'd'].map((entityId) => ({
      entityId,
      ok: true as const,
      value: 'v'.repeat(1_400),
    }));
    const packed = packSnapshots({ snapshots }, LIMITS, new Map(), (chunk, last) => seen.push([chunk, last]));
    expect(seen.map(([chunk]) => chunk)).toEqual(packed.chunks);
    expect(seen.map(([, last]) => last)).toEqual([false, true]);
  });

  it('reads nothing that is not a snapshot', () => {
    expect(readState(new Uint8Array([0xc1])).ok).toBe(false);
    expect(readState(new Uint8Array([0x01])).ok).toBe(false);
  });
});

/** The parts themselves, in part order: the fold these tests take a transfer with (a start sorts them: sorted-states.ts). */
const partsInOrder = <T>(): PartsFold<T, Array<ArrivedPart<T>>> => ({
  begin: () => [],
  add: (into, part) => {
    into.push(part);
  },
});

/** A shard's taken transfer as a map by entity, an entry in a later part winning (as a start sorts them out). */
function takenStates<T>(
  incoming: IncomingStates<T, Array<ArrivedPart<T>>>,
  shardId: number,
): ReadonlyMap<string, T> | 'incomplete' | undefined {
  const taken = incoming.take(shardId);
  if (typeof taken !== 'object') return taken;
  return new Map(taken.gathered.flatMap(({ entities, read }) => entities.map((e, i) => [e.entityId, read[i] as T])));
}

describe('IncomingStates', () => {
  const state = (n: number) => ({ entityId: `e${n}`, state: new Uint8Array(100) });

  it('hands over a complete transfer once, says incomplete otherwise, and ignores a late copy of one taken', () => {
    const incoming = new IncomingStates(10_000, (bytes) => bytes, partsInOrder());
    incoming.add(1, 7, { part: 1, parts: 2 }, [state(2)]);
    expect(takenStates(incoming, 1)).toBe('incomplete');
    incoming.add(1, 8, { part: 0, parts: 2 }, [state(1)]);
    incoming.add(1, 8, { part: 1, parts: 2 }, [state(2)]);
    expect([...(takenStates(incoming, 1) as ReadonlyMap<string, unknown>).keys()]).toEqual(['e1', 'e2']);
    // A repeated HostShard brings the chunks again: they must not wait to be restored into a later start.
    incoming.add(1, 8, { part: 0, parts: 2 }, [state(1)]);
    expect(takenStates(incoming, 1)).toBeUndefined();
    expect(incoming.bytes).toBe(0);
  });

  it('drops the oldest transfer beyond its byte bound', () => {
    const incoming = new IncomingStates(250, (bytes) => bytes, partsInOrder());
    incoming.add(1, 1, { part: 0, parts: 1 }, [state(1), state(2)]);
    expect(incoming.add(2, 1, { part: 0, parts: 1 }, [state(3)])).toEqual([1]);
    expect(takenStates(incoming, 1)).toBeUndefined();
    expect(takenStates(incoming, 2)).toBeInstanceOf(Map);
  });
});

describe('IncomingStates with streamed chunks (protocol 9: the final one says last)', () => {
  const state = (n: number) => ({ entityId: `e${n}`, state: Uint8Array.of(n) });

  it('is complete once the parts up to the last are in, whatever came first', () => {
    const incoming = new IncomingStates(10_000, (bytes) => bytes, partsInOrder());
    incoming.add(1, 5, { part: 2, last: true }, [state(3)]);
    incoming.add(1, 5, { part: 0 }, [state(1)]);
    expect(takenStates(incoming, 1)).toBe('incomplete');
    for (const part of [2, 0, 1]) incoming.add(1, 6, part === 2 ? { part, last: true } : { part }, [state(part)]);
    expect([...(takenStates(incoming, 1) as ReadonlyMap<string, unknown>).keys()]).toEqual(['e0', 'e1', 'e2']);
  });

  it('reads each state as its chunk arrives, once: neither a repeat nor a late copy of a taken transfer', () => {
    const reads: number[] = [];
    const incoming = new IncomingStates(10_000, (bytes) => reads.push(bytes[0] ?? -1), partsInOrder());
    incoming.add(1, 5, { part: 0 }, [state(0)]);
    expect(reads).toEqual([0]);
    incoming.add(1, 5, { part: 0 }, [state(0)]);
    incoming.add(1, 5, { part: 1, last: true }, [state(1)]);
    expect(reads).toEqual([0, 1]);
    expect(takenStates(incoming, 1)).toEqual(
      new Map([
        ['e0', 1],
        ['e1', 2],
      ]),
    );
    incoming.add(1, 5, { part: 1, last: true }, [state(1)]);
    expect(reads).toEqual([0, 1]);
  });

  it('counts a repeated part once and learns the count from a copy that names it', () => {
    const incoming = new IncomingStates(10_000, (bytes) => bytes, partsInOrder());
    incoming.add(1, 5, { part: 0 }, [state(0)]);
    incoming.add(1, 5, { part: 0 }, [state(0)]);
    expect(incoming.bytes).toBe(1);
    incoming.add(1, 5, { part: 1 }, [state(1)]);
    // The old host's kept copy, sent again under the same id, names the count on every chunk.
    incoming.add(1, 5, { part: 1, parts: 2 }, [state(1)]);
    expect(incoming.bytes).toBe(2);
    expect(takenStates(incoming, 1)).toBeInstanceOf(Map);
  });

  it.each([
    ['a part after the last', [{ part: 1, last: true }, { part: 0 }, { part: 2 }]],
    ['a last below a part already in', [{ part: 0 }, { part: 2 }, { part: 1, last: true }]],
    ['another count than the last said', [{ part: 0 }, { part: 1, last: true }, { part: 0, parts: 3 }]],
  ] as const)('%s starts the transfer over from that chunk: incomplete, bytes of the rest let go', (_label, places) => {
    const incoming = new IncomingStates(10_000, (bytes) => bytes, partsInOrder());
    for (const place of places) incoming.add(1, 5, place, [state(place.part)]);
    expect(incoming.bytes).toBe(1);
    expect(takenStates(incoming, 1)).toBe('incomplete');
  });

  it('any arrival order of a transfer, with repeats, folds each part once, in order, as soon as the parts before it are in, and gives exactly the states sent (or incomplete)', () => {
    const transfer = fc.integer({ min: 1, max: 8 }).chain((parts) =>
      fc.record({
        parts: fc.constant(parts),
        // Each part's entities, by how many; a part may carry none (only its place).
        sizes: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: parts, maxLength: parts }),
        named: fc.boolean(),
        arrivals: fc.array(fc.integer({ min: 0, max: parts - 1 }), { minLength: 1, maxLength: parts * 3 }),
      }),
    );
    fc.assert(
      fc.property(transfer, ({ parts, sizes, named, arrivals }) => {
        const chunks = sizes.map((size, part) =>
          Array.from({ length: size }, (_, i) => ({ entityId: `p${part}-${i}`, state: Uint8Array.of(part, i) })),
        );
        // Each part is folded once, in part order, as soon as every part before it is in (not at the take).
        const folded: number[] = [];
        const inOrder = partsInOrder<Uint8Array>();
        const fold: typeof inOrder = {
          begin: inOrder.begin,
          add: (into, part) => {
            folded.push(chunks.indexOf(part.entities as (typeof chunks)[number]));
            inOrder.add(into, part);
          },
        };
        const incoming = new IncomingStates(10_000, (bytes) => bytes, fold);
        const arrived = new Set<number>();
        for (const part of arrivals) {
          const place = named ? { part, parts } : part === parts - 1 ? { part, last: true as const } : { part };
          incoming.add(1, 9, place, chunks[part] ?? []);
          arrived.add(part);
          let prefix = 0;
          while (arrived.has(prefix)) prefix++;
          expect(folded).toEqual(Array.from({ length: prefix }, (_, i) => i));
        }
        const taken = takenStates(incoming, 1);
        const everyPart = Array.from({ length: parts }, (_, part) => arrivals.includes(part)).every(Boolean);
        expect(incoming.bytes).toBe(0);
        if (!everyPart) {
          expect(taken).toBe('incomplete');
          return;
        }
        const sent = chunks.flat().map(({ entityId, state: bytes }) => [entityId, [...bytes]]);
        const got = [...(taken as ReadonlyMap<string, Uint8Array>)].map(([entityId, bytes]) => [entityId, [...bytes]]);
        expect(got).toEqual(sent);
      }),
      { numRuns: 300 },
    );
  });
});
