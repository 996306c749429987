// Entity id -> shard: FNV-1a 32-bit vectors, the modulo, and rejection of bad arguments.
import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { fnv1a32, shardIdFor } from '../../src/sharding/shard-id.js';
import { ActorTsError } from '../../src/errors.js';

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('fnv1a32', () => {
  it.each([
    ['', 0x811c9dc5],
    ['a', 0xe40c292c],
    ['b', 0xe70c2de5],
    ['foo', 0xa9f37ed7],
    ['foobar', 0xbf9cf968],
  ])('hashes %j to the published FNV-1a 32-bit value', (text, expected) => {
    expect(fnv1a32(utf8(text))).toBe(expected);
  });

  it('hashes the UTF-8 bytes, not UTF-16 code units', () => {
    // "é" is one UTF-16 unit but two UTF-8 bytes (0xc3 0xa9).
    expect(fnv1a32(utf8('é'))).toBe(fnv1a32(new Uint8Array([0xc3, 0xa9])));
    expect(fnv1a32(utf8('é'))).not.toBe(fnv1a32(new Uint8Array([0xe9])));
  });

  it('always returns an unsigned 32-bit integer', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const hash = fnv1a32(bytes);
        expect(Number.isInteger(hash) && hash >= 0 && hash <= 0xffffffff).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('rejects a non-byte-array argument', () => {
    expect(() => fnv1a32('abc' as unknown as Uint8Array)).toThrow(ActorTsError);
  });
});

describe('shardIdFor', () => {
  it('is the hash of the UTF-8 id modulo the number of shards', () => {
    expect(shardIdFor('foobar', 1000)).toBe(0xbf9cf968 % 1000);
    expect(shardIdFor('a', 100)).toBe(0xe40c292c % 100);
    expect(shardIdFor('foobar', 1)).toBe(0);
  });

  it('stays in range and is deterministic for any id', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.integer({ min: 1, max: 100_000 }), (id, shards) => {
        const shard = shardIdFor(id, shards);
        expect(shard).toBeGreaterThanOrEqual(0);
        expect(shard).toBeLessThan(shards);
        expect(shardIdFor(id, shards)).toBe(shard);
      }),
      { numRuns: 300 },
    );
  });

  it.each([0, -1, 1.5, Number.NaN, Infinity, 2 ** 32])('rejects numberOfShards = %s with invalid_argument', (n) => {
    expect(() => shardIdFor('x', n)).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
  });

  it('rejects an empty or non-string entity id', () => {
    expect(() => shardIdFor('', 10)).toThrow(/non-empty string/);
    expect(() => shardIdFor(42 as unknown as string, 10)).toThrow(
      expect.objectContaining({ code: 'invalid_argument' }),
    );
  });
});
