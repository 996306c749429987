// The pieces of a state transfer on their own: snapshots packed under the chunk budget (a state larger than a
// chunk alone, one over the entity bound or not encodable refused), and a new host's assembly of chunks
// (complete or not, bounded, and deaf to a late copy of a transfer it already restored).
import { describe, expect, it } from 'vitest';
import { IncomingStates, packSnapshots } from '../../src/sharding/region/shard-state.js';
import { readState } from './read-state.js';

const LIMITS = { maxEntitySnapshotBytes: 10_000, stateChunkBytes: 3_000 };

describe('packSnapshots', () => {
  it('chunks under the budget, sends a state larger than a chunk alone, and round-trips every value', () => {
    const packed = packSnapshots(
      [
        { entityId: 'a', ok: true, value: 'x'.repeat(1_000) },
        { entityId: 'b', ok: true, value: { n: 1, list: [1, 2, 3] } },
        { entityId: 'big', ok: true, value: 'y'.repeat(5_000) },
        { entityId: 'c', ok: true, value: 'z'.repeat(1_500) },
        { entityId: 'none', ok: true, value: undefined },
      ],
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
      [
        { entityId: 'huge', ok: true, value: 'h'.repeat(20_000) },
        { entityId: 'fn', ok: true, value: { n: 2n ** 70n } },
        { entityId: 'threw', ok: false, error: 'boom' },
        { entityId: 'fine', ok: true, value: 1 },
      ],
      LIMITS,
    );
    expect(packed.refused.map((r) => [r.entityId, r.outcome])).toEqual([
      ['huge', 'too_large'],
      ['fn', 'failed'],
      ['threw', 'failed'],
    ]);
    expect(packed.chunks.flatMap((chunk) => chunk.entities).map((e) => e.entityId)).toEqual(['fine']);
  });

  it('reads nothing that is not a snapshot', () => {
    expect(readState(new Uint8Array([0xc1])).ok).toBe(false);
    expect(readState(new Uint8Array([0x01])).ok).toBe(false);
  });
});

describe('IncomingStates', () => {
  const state = (n: number) => ({ entityId: `e${n}`, state: new Uint8Array(100) });

  it('hands over a complete transfer once, says incomplete otherwise, and ignores a late copy of one taken', () => {
    const incoming = new IncomingStates(10_000);
    incoming.add(1, 7, 1, 2, [state(2)]);
    expect(incoming.take(1)).toBe('incomplete');
    incoming.add(1, 8, 0, 2, [state(1)]);
    incoming.add(1, 8, 1, 2, [state(2)]);
    expect([...(incoming.take(1) as ReadonlyMap<string, Uint8Array>).keys()]).toEqual(['e1', 'e2']);
    // A repeated HostShard brings the chunks again: they must not wait to be restored into a later start.
    incoming.add(1, 8, 0, 2, [state(1)]);
    expect(incoming.take(1)).toBeUndefined();
    expect(incoming.bytes).toBe(0);
  });

  it('drops the oldest transfer beyond its byte bound', () => {
    const incoming = new IncomingStates(250);
    incoming.add(1, 1, 0, 1, [state(1), state(2)]);
    expect(incoming.add(2, 1, 0, 1, [state(3)])).toEqual([1]);
    expect(incoming.take(1)).toBeUndefined();
    expect(incoming.take(2)).toBeInstanceOf(Map);
  });
});
