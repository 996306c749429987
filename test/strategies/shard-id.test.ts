// Entity id -> shard: FNV-1a 32-bit vectors, the modulo, and rejection of bad arguments; the 'actor-ts' shard id
// function against values actor-ts itself computes, and how often it differs from the default.
import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  DEFAULT_SHARD_ID_FUNCTION,
  fnv1a32,
  fnv1a32Utf16Signed,
  shardIdFor,
  type ShardIdFunction,
} from '../../src/sharding/core/shard-id.js';
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

describe("shardIdFor(..., 'actor-ts')", () => {
  // Produced by running actor-ts's own hashShardId (pathosDev/actor-ts src/cluster/sharding/ShardAllocator.ts,
  // commit d219e970) on these ids, once; the numbers are written here so the test needs no copy of its code.
  const ACTOR_TS_SHARDS: ReadonlyArray<readonly [string, number, number]> = [
    ['alice', 1000, 817],
    ['bob', 1000, 52],
    ['user-42', 1000, 499],
    ['a', 1000, 76],
    ['foobar', 1000, 576],
    ['é', 1000, 940],
    ['😀', 1000, 824],
    ['ü-42', 1000, 144],
    ['Counter-1', 1000, 89],
    ['x'.repeat(100), 1000, 499],
    ['alice', 100, 17],
    ['foobar', 100, 76],
    ['é', 100, 40],
    ['😀', 100, 24],
  ];

  it.each(ACTOR_TS_SHARDS)("puts %j in actor-ts's shard (of %i): %i", (id, shards, expected) => {
    expect(shardIdFor(id, shards, 'actor-ts')).toBe(expected);
  });

  it('differs from the default for ids whose signed hash is negative, and for non-ASCII ids', () => {
    // "alice" hashes negative as a signed 32-bit value: the unsigned default lands elsewhere.
    expect(fnv1a32Utf16Signed('alice')).toBeLessThan(0);
    expect(shardIdFor('alice', 1000)).not.toBe(shardIdFor('alice', 1000, 'actor-ts'));
    expect(shardIdFor('é', 1000)).not.toBe(shardIdFor('é', 1000, 'actor-ts'));
    let differ = 0;
    for (let i = 0; i < 1000; i++)
      if (shardIdFor(`user-${i}`, 1000) !== shardIdFor(`user-${i}`, 1000, 'actor-ts')) differ++;
    expect(differ).toBeGreaterThan(300);
    expect(differ).toBeLessThan(700);
  });

  it('is the absolute value of the signed UTF-16 FNV-1a hash modulo the shard count, for any id and count', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, unit: 'binary' }), fc.integer({ min: 1, max: 1_000_000 }), (id, shards) => {
        const shard = shardIdFor(id, shards, 'actor-ts');
        expect(shard).toBe(Math.abs(fnv1a32Utf16Signed(id)) % shards);
        expect(shard).toBeGreaterThanOrEqual(0);
        expect(shard).toBeLessThan(shards);
      }),
      { numRuns: 300 },
    );
  });

  it('hashes UTF-16 code units: for ASCII ids the signed hash is the unsigned UTF-8 one, for others it is not', () => {
    expect(fnv1a32Utf16Signed('foobar') >>> 0).toBe(fnv1a32(utf8('foobar')));
    expect(fnv1a32Utf16Signed('é') >>> 0).toBe(fnv1a32(new Uint8Array([0xe9])));
  });

  it("keeps 'fnv1a-utf8' as the default, so existing entities stay in their shards", () => {
    expect(DEFAULT_SHARD_ID_FUNCTION).toBe('fnv1a-utf8');
    expect(shardIdFor('foobar', 1000)).toBe(shardIdFor('foobar', 1000, 'fnv1a-utf8'));
    expect(shardIdFor('foobar', 1000)).toBe(0xbf9cf968 % 1000);
  });

  it.each(['FNV', 'actor_ts', '', 42, null])('rejects shard id function %j with invalid_argument', (bad) => {
    expect(() => shardIdFor('x', 10, bad as unknown as ShardIdFunction)).toThrow(
      expect.objectContaining({
        code: 'invalid_argument',
        message: expect.stringMatching(/shardIdFunction must be one of/),
      }),
    );
  });
});
