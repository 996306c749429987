// Wire messages declared once (wire-schema.ts): a family's parse gate comes from its schema table. It lets a
// message through only when every declared field checks, bounds included; it keeps only declared fields, at
// every depth; and a message's own rule runs after the check, on the cleaned message.
import fc from 'fast-check';
import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { absentOrNull, declareFamily, ignoredIfInvalid, readAs } from '../../src/cluster/transport/wire-schema.js';
import { Bytes, Nullable } from '../../src/shapes.js';

const SCHEMAS = {
  Ping: Type.Object({ seq: Type.Integer({ minimum: 0, maximum: 1000 }) }),
  Moves: Type.Object({
    moves: Type.Array(Type.Object({ shardId: Type.Integer({ minimum: 0 }), to: Nullable(Type.String()) }), {
      maxItems: 3,
    }),
    note: Type.Optional(Type.String({ maxLength: 8 })),
  }),
  Blob: Type.Object({ data: Bytes(4), below: Type.Integer(), seq: Type.Integer() }),
  Ask: Type.Object({ replyTo: absentOrNull(Type.Object({ node: Type.String() })) }),
  Answer: Type.Union([
    Type.Object({ ok: Type.Literal(true), value: Type.Optional(Type.Unknown()) }),
    Type.Object({
      ok: Type.Literal(false),
      error: Type.String(),
      more: Type.Optional(Type.Object({ a: Type.Integer() })),
    }),
  ]),
};
const family = declareFamily('test', SCHEMAS, {
  // A rule a schema cannot state: one field below another.
  Blob: (message) => (message.below <= message.seq ? message : undefined),
});

describe('a family declared once', () => {
  it('names its types from the table', () => {
    expect([...family.types].sort()).toEqual(['Answer', 'Ask', 'Blob', 'Moves', 'Ping']);
  });

  it('lets a message through with its declared fields only, at every depth', () => {
    const raw = {
      type: 'Moves',
      moves: [
        { shardId: 1, to: null, extra: 'x' },
        { shardId: 2, to: 'b' },
      ],
      later: { a: 1 },
    };
    expect(family.parse(raw)).toEqual({
      type: 'Moves',
      moves: [
        { shardId: 1, to: null },
        { shardId: 2, to: 'b' },
      ],
    });
  });

  it('drops a message with any field wrong, missing or over its bound', () => {
    const bad = [
      { type: 'Ping', seq: -1 },
      { type: 'Ping', seq: 1001 },
      { type: 'Ping', seq: 1.5 },
      { type: 'Ping' },
      { type: 'Moves', moves: [{ shardId: 1, to: null }], note: 'far too long' },
      { type: 'Moves', moves: [1, 2, 3, 4].map((shardId) => ({ shardId, to: null })) },
      { type: 'Moves', moves: [{ shardId: '1', to: null }] },
      { type: 'Blob', data: new Uint8Array(5), below: 0, seq: 0 },
      { type: 'Blob', data: [1, 2], below: 0, seq: 0 },
    ];
    for (const raw of bad) expect(family.parse(raw), JSON.stringify(raw)).toBeUndefined();
  });

  it('reads an absentOrNull field sent as null as absent, and copies it when present', () => {
    expect(family.parse({ type: 'Ask', replyTo: null })).toEqual({ type: 'Ask' });
    expect('replyTo' in (family.parse({ type: 'Ask', replyTo: null }) as object)).toBe(false);
    expect(family.parse({ type: 'Ask', replyTo: { node: 'n', x: 1 } })).toEqual({
      type: 'Ask',
      replyTo: { node: 'n' },
    });
    expect(family.parse({ type: 'Ask', replyTo: 'n' })).toBeUndefined();
  });

  it('takes a message with more than one form by the form it passes, and copies that form', () => {
    expect(family.parse({ type: 'Answer', ok: true, value: { any: 1 }, error: 'x' })).toEqual({
      type: 'Answer',
      ok: true,
      value: { any: 1 },
    });
    expect(family.parse({ type: 'Answer', ok: false, error: 'e', more: { a: 1, b: 2 } })).toEqual({
      type: 'Answer',
      ok: false,
      error: 'e',
      more: { a: 1 },
    });
    expect(family.parse({ type: 'Answer', ok: false })).toBeUndefined();
  });

  it("runs the message's rule on the checked message", () => {
    const data = new Uint8Array([1]);
    expect(family.parse({ type: 'Blob', data, below: 1, seq: 2 })).toEqual({ type: 'Blob', data, below: 1, seq: 2 });
    expect(family.parse({ type: 'Blob', data, below: 3, seq: 2 })).toBeUndefined();
  });

  it('never throws on hostile input, and what it lets through has only declared keys', () => {
    const declared: Record<string, ReadonlySet<string>> = {
      Ping: new Set(['type', 'seq']),
      Moves: new Set(['type', 'moves', 'note']),
      Blob: new Set(['type', 'data', 'below', 'seq']),
      Ask: new Set(['type', 'replyTo']),
      Answer: new Set(['type', 'ok', 'value', 'error', 'more']),
    };
    const value = fc.oneof(
      fc.anything(),
      fc.uint8Array({ maxLength: 6 }),
      fc.array(fc.record({ shardId: fc.integer(), to: fc.option(fc.string()) }), { maxLength: 4 }),
    );
    const raw = fc.record({
      type: fc.constantFrom('Ping', 'Moves', 'Blob', 'Ask', 'Answer'),
      seq: value,
      moves: value,
      note: value,
      data: value,
      below: value,
      replyTo: value,
      ok: fc.boolean(),
      error: value,
      other: value,
    });
    fc.assert(
      fc.property(raw, (message) => {
        const parsed = family.parse(message) as Record<string, unknown> | undefined;
        if (parsed === undefined) return;
        for (const key of Object.keys(parsed)) expect(declared[message.type]!.has(key)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps an ignoredIfInvalid field only when valid, and reads a readAs field through its reader', () => {
    const readers = declareFamily('readers', {
      Tick: Type.Object({
        atMs: ignoredIfInvalid(Type.Number({ minimum: 0 })),
        tags: readAs(Type.Array(Type.String(), { maxItems: 3 }), (tags) => [...tags].sort()),
      }),
    });
    expect(readers.parse({ type: 'Tick', atMs: 5, tags: ['b', 'a'] })).toEqual({
      type: 'Tick',
      atMs: 5,
      tags: ['a', 'b'],
    });
    const invalid = readers.parse({ type: 'Tick', atMs: -1, tags: [] }) as Record<string, unknown>;
    expect(invalid).toEqual({ type: 'Tick', tags: [] });
    expect('atMs' in invalid).toBe(false);
    expect(readers.parse({ type: 'Tick', atMs: 'soon', tags: ['a'] })).toEqual({ type: 'Tick', tags: ['a'] });
    expect(readers.parse({ type: 'Tick', tags: ['a', 'b', 'c', 'd'] })).toBeUndefined();
  });
});
