// A hand-off chunk's entities as one binary (protocol 8, issue 40): what is packed is read back exactly; bytes
// that are not exactly one complete encoding (truncated, trailing, garbled, over the limits) are refused whole;
// a chunk goes packed only to a peer whose agreed version reads it, as the list to an older one, and a relay
// sends on the bytes it received; a streamed chunk (protocol 9: no count, the last one marked) goes only to a
// peer on 9, and a peer on 8 or 7 gets the count and never `last`.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import { decodeMessage, encodeMessage } from '../../src/cluster/transport/message-codec.js';
import type { Transport } from '../../src/cluster/transport/transport.js';
import { PROTOCOL_FLOOR } from '../../src/cluster/transport/protocol-versions.js';
import { FamilyRegistry, PROTOCOL_VERSION, type WireMessage } from '../../src/cluster/transport/wire-message.js';
import { SHARDING_MESSAGES, type ShardingMessage } from '../../src/sharding/protocol/messages.js';
import { PackedWriter, packEntities, unpackEntities } from '../../src/sharding/protocol/packed-states.js';
import { ShardingLink } from '../../src/sharding/protocol/sharding-link.js';
import {
  MAX_SENDER_PROGRESS,
  asRestore,
  stateOnWire,
  type WireEntityState,
} from '../../src/sharding/protocol/state-messages.js';
import { silentLogger } from '../../src/logging.js';
import { DEFAULT_SHARDING_CONFIG } from '../../src/sharding/core/config.js';
import { StateTransfer } from '../../src/sharding/region/state-transfer.js';

const LIMITS = { maxEntities: 1_000, maxEntityIdLength: 64 };
const FAMILIES = new FamilyRegistry();
FAMILIES.register(SHARDING_MESSAGES);

const entityArb = fc.record({
  entityId: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 16 }),
  state: fc.uint8Array({ maxLength: 40 }),
});
const entitiesArb = fc.array(entityArb, { maxLength: 12 });

/** The layout written out by Buffer's own methods, to check the writer against. */
function reference(entities: ReadonlyArray<WireEntityState>): Buffer {
  const parts = [Buffer.alloc(4)];
  parts[0]?.writeUInt32BE(entities.length);
  for (const { entityId, state } of entities) {
    const id = Buffer.from(entityId, 'utf8');
    const lengths = Buffer.alloc(6 + id.byteLength);
    lengths.writeUInt16BE(id.byteLength, 0);
    id.copy(lengths, 2);
    lengths.writeUInt32BE(state.byteLength, 2 + id.byteLength);
    parts.push(lengths, Buffer.from(state));
  }
  return Buffer.concat(parts);
}

const plain = (entities: ReadonlyArray<WireEntityState>): Array<{ entityId: string; state: number[] }> =>
  entities.map(({ entityId, state }) => ({ entityId, state: [...state] }));

describe('packed entity states', () => {
  it('reads back exactly what was packed, each state a view into the bytes', () => {
    fc.assert(
      fc.property(entitiesArb, (entities) => {
        const bytes = packEntities(entities);
        const read = unpackEntities(bytes, LIMITS);
        expect(read && plain(read)).toEqual(plain(entities));
        for (const { state } of read ?? []) expect(state.buffer).toBe(bytes.buffer);
      }),
      { numRuns: 300 },
    );
  });

  it('writes the layout for ids of any length and script, and reads it from bytes that start anywhere in memory', () => {
    const idArb = fc.oneof(
      fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 200 }),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 100 }),
      fc.constant('\uFEFFbom'),
    );
    const entities = fc.array(fc.record({ entityId: idArb, state: fc.uint8Array({ maxLength: 40 }) }), {
      maxLength: 8,
    });
    fc.assert(
      fc.property(entities, fc.nat({ max: 32 }), (list, offset) => {
        const packed = packEntities(list);
        expect(Buffer.from(packed).equals(reference(list))).toBe(true);
        const memory = new Uint8Array(offset + packed.byteLength + 7);
        memory.set(packed, offset);
        const bytes = memory.subarray(offset, offset + packed.byteLength);
        const read = unpackEntities(bytes, { maxEntities: 1_000, maxEntityIdLength: 400 });
        expect(read && plain(read)).toEqual(plain(list));
        for (const { state } of read ?? []) expect(state.buffer).toBe(memory.buffer);
      }),
      { numRuns: 300 },
    );
  });

  it('a writer that grows from any capacity packs the same bytes, its states views of them', () => {
    fc.assert(
      fc.property(entitiesArb, fc.nat({ max: 200 }), (entities, capacity) => {
        const writer = new PackedWriter(capacity);
        for (const { entityId, state } of entities) writer.add(entityId, state);
        const { packed, entities: views } = writer.finish();
        expect([...packed]).toEqual([...packEntities(entities)]);
        expect(plain(views)).toEqual(plain(entities));
        for (const { state } of views) expect(state.buffer).toBe(packed.buffer);
      }),
      { numRuns: 200 },
    );
  });

  it('refuses every truncation and any trailing byte', () => {
    fc.assert(
      fc.property(entitiesArb, fc.nat(), fc.integer({ min: 0, max: 255 }), (entities, cut, extra) => {
        const bytes = packEntities(entities);
        expect(unpackEntities(bytes.subarray(0, cut % bytes.byteLength), LIMITS)).toBeUndefined();
        expect(unpackEntities(Uint8Array.from([...bytes, extra]), LIMITS)).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  });

  it('garbled bytes are refused, or are exactly one encoding of what they read as (never misread)', () => {
    const garbled = fc
      .tuple(entitiesArb, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1 }))
      .map(([entities, flips]) => {
        const bytes = Uint8Array.from(packEntities(entities));
        for (const [at, value] of flips) if (bytes.byteLength > 0) bytes[at % bytes.byteLength] = value;
        return bytes;
      });
    fc.assert(
      fc.property(fc.oneof(garbled, fc.uint8Array({ maxLength: 64 })), (bytes) => {
        const read = unpackEntities(bytes, LIMITS);
        if (read !== undefined) expect([...packEntities(read)]).toEqual([...bytes]);
      }),
      { numRuns: 500 },
    );
  });

  it.each([
    ['an empty id', packEntities([{ entityId: '', state: new Uint8Array(1) }])],
    ['an id over the length limit', packEntities([{ entityId: 'x'.repeat(65), state: new Uint8Array(0) }])],
    ['an id that is not UTF-8', Uint8Array.from([0, 0, 0, 1, 0, 2, 0xc3, 0x28, 0, 0, 0, 0])],
    ['a state length past the end', Uint8Array.from([0, 0, 0, 1, 0, 1, 0x61, 0, 0, 0, 9, 1, 2])],
    [
      'more entities than the limit',
      packEntities(Array.from({ length: 1_001 }, () => ({ entityId: 'e', state: new Uint8Array(0) }))),
    ],
    ['a count the bytes cannot hold', Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0, 1, 0x61, 0, 0, 0, 0])],
    ['fewer than four bytes', Uint8Array.from([0, 0, 0])],
  ])('refuses %s', (_label, bytes) => {
    expect(unpackEntities(bytes, LIMITS)).toBeUndefined();
  });
});

const ENTITIES: WireEntityState[] = [
  { entityId: 'a', state: Uint8Array.from([0x81, 0xa1, 0x74, 0x01]) },
  { entityId: 'é€', state: new Uint8Array(0) },
];
const CHUNK = {
  type: 'ShardStateChunk',
  typeName: 'Counter',
  shardId: 3,
  handOffId: 9,
  part: 0,
  parts: 1,
  entities: ENTITIES,
} as const satisfies ShardingMessage;

const arrived = (message: WireMessage): ShardingMessage => decodeMessage(encodeMessage(message), FAMILIES) as never;

describe('a state chunk on the wire, by the peer version', () => {
  it('goes to a peer on version 8 packed and to one on 7 as the list; both read as the same chunk', () => {
    const packed = stateOnWire(CHUNK, 8) as Record<string, unknown>;
    const listed = stateOnWire(CHUNK, 7) as Record<string, unknown>;
    expect(Object.keys(packed)).not.toContain('entities');
    expect(packed['packed']).toBeInstanceOf(Uint8Array);
    expect(Object.keys(listed)).not.toContain('packed');
    const fromPacked = arrived(packed as unknown as WireMessage) as typeof CHUNK & { packed?: Uint8Array };
    expect(plain(fromPacked.entities)).toEqual(plain(ENTITIES));
    expect(arrived(listed as unknown as WireMessage)).toEqual(CHUNK);
  });

  it('a relay sends on the bytes it received to a peer on 8, and the list to a peer on 7', () => {
    const received = arrived(stateOnWire(CHUNK, 8)) as typeof CHUNK & { packed: Uint8Array };
    expect((stateOnWire(received, 8) as { packed?: unknown }).packed).toBe(received.packed);
    const toOlder = stateOnWire(received, 7) as Record<string, unknown>;
    expect(Object.keys(toOlder)).not.toContain('packed');
    expect(plain(toOlder['entities'] as WireEntityState[])).toEqual(plain(ENTITIES));
  });

  it('a streamed chunk keeps its last mark for a peer on 9, and never goes to an older peer without its count', () => {
    const { parts: _parts, ...streamed } = { ...CHUNK, last: true as const };
    const toNine = arrived(stateOnWire(streamed, 9)) as typeof CHUNK & { last?: true };
    expect([toNine.parts, toNine.last]).toEqual([undefined, true]);
    for (const version of [8, 7]) expect(() => stateOnWire(streamed, version)).toThrow(/without parts/);
    // With its count, the mark goes to 9 only: a peer on 8 gets exactly what it always got.
    const counted = { ...CHUNK, last: true as const };
    expect(Object.keys(stateOnWire(counted, 8))).not.toContain('last');
    expect(Object.keys(stateOnWire(counted, 7))).not.toContain('last');
    expect((arrived(stateOnWire(counted, 9)) as { last?: true }).last).toBe(true);
  });

  it("carries the old host's sender progress to a peer on 11 only, and a relay keeps it; a bad one is refused", () => {
    const progress = [{ node: 'sys@127.0.0.1:7001', incarnation: 4, below: 120 }];
    const withProgress = { ...CHUNK, progress };
    const toEleven = arrived(stateOnWire(withProgress, 11)) as typeof withProgress;
    expect(toEleven.progress).toEqual(progress);
    // A coordinator relaying it as the new home's RestoreShardState keeps it.
    expect(asRestore(toEleven as never).progress).toEqual(progress);
    for (const version of [10, 9, 8, 7])
      expect(Object.keys(stateOnWire(withProgress, version))).not.toContain('progress');
    const bad = (entry: Record<string, unknown>) => ({ ...stateOnWire(CHUNK, 11), progress: [entry] }) as WireMessage;
    for (const entry of [
      { ...progress[0], node: 'nobody' },
      { ...progress[0], below: 0 },
      { ...progress[0], incarnation: 1.5 },
      { node: progress[0]?.node, incarnation: 4 },
    ])
      expect(arrived(bad(entry))).toBeUndefined();
    const many = Array.from({ length: MAX_SENDER_PROGRESS + 1 }, () => progress[0]);
    expect(arrived({ ...stateOnWire(CHUNK, 11), progress: many } as WireMessage)).toBeUndefined();
  });

  it('an old host that knows more senders than a chunk may name sends as many as it may: the chunk still reads', () => {
    const transfer = new StateTransfer({
      typeName: 'Counter',
      config: { ...DEFAULT_SHARDING_CONFIG, maxHandOffStateBytes: 1_000_000 },
      logger: silentLogger(),
    });
    const node = 'sys@127.0.0.1:7001';
    const progress = Array.from({ length: MAX_SENDER_PROGRESS + 5 }, (_, i) => ({
      node,
      incarnation: i + 1,
      below: 3,
    }));
    const [chunk] = transfer.outgoing(
      3,
      9,
      { snapshots: [{ entityId: 'a', ok: true, value: 1 }] },
      new Map(),
      undefined,
      progress,
    );
    expect(chunk?.progress).toEqual(progress.slice(0, MAX_SENDER_PROGRESS));
    expect(arrived(stateOnWire(chunk as WireMessage, 11))).toMatchObject({ type: 'ShardStateChunk', shardId: 3 });
  });

  it('leaves other messages as they are', () => {
    const handOff = { type: 'HandOff', typeName: 'Counter', shardId: 1, handOffId: 2 } as const;
    expect(stateOnWire(handOff, 8)).toBe(handOff);
  });

  it('a packed field that is not one exact encoding refuses the whole chunk', () => {
    const { entities: _entities, ...rest } = CHUNK;
    const bytes = packEntities(ENTITIES);
    expect(arrived({ ...rest, packed: bytes.subarray(0, bytes.byteLength - 1) } as WireMessage)).toBeUndefined();
    expect(arrived({ ...rest, packed: Uint8Array.from([...bytes, 0]) } as WireMessage)).toBeUndefined();
  });
});

describe('the sharding link picks the form by what the handshake with the peer agreed', () => {
  const self = new NodeAddress('sys', '127.0.0.1', 1);
  const peer = new NodeAddress('sys', '127.0.0.1', 2);

  /** A link whose transport records what it sends, the peer's handshake having agreed `agreed`. */
  function linkWith(agreed: number | undefined | 'no handshakes', sent: WireMessage[] = []): ShardingLink {
    const transport: Transport = {
      self,
      register: () => {},
      send: (_to, message) => void sent.push(message),
      onMessage: () => () => {},
      close: async () => {},
      ...(agreed !== 'no handshakes' && {
        protocols: { of: (key: string) => (key === peer.toString() && agreed ? { protocol: agreed } : undefined) },
      }),
    };
    const link = new ShardingLink(transport, silentLogger());
    link.listen(() => {});
    return link;
  }

  /** What a link sends for a chunk when the peer's handshake agreed `agreed` (none: a transport without them). */
  function linkSending(agreed: number | undefined | 'no handshakes'): WireMessage[] {
    const sent: WireMessage[] = [];
    linkWith(agreed, sent).send(peer.toString(), CHUNK);
    return sent;
  }

  it.each([
    ['9: packed', 9, 'packed'],
    ['8: packed', 8, 'packed'],
    ['7 (a peer of the previous release): the list', 7, 'entities'],
    ['none yet (the peer may be the oldest release): the list', undefined, 'entities'],
    ['nothing, without handshakes (one build at both ends): packed', 'no handshakes', 'packed'],
  ] as const)('agreed %s', (_label, agreed, field) => {
    const [sent] = linkSending(agreed);
    expect(Object.keys(sent ?? {})).toContain(field);
  });

  it('names the version a node reads, by key: its handshake, this release for itself, the floor otherwise', () => {
    const link = linkWith(8);
    expect(link.protocolOf(peer.toString())).toBe(8);
    expect(link.protocolOf(self.toString())).toBe(PROTOCOL_VERSION);
    expect(link.protocolOf(new NodeAddress('sys', '127.0.0.1', 3).toString())).toBe(PROTOCOL_FLOOR);
    expect(link.protocolOf('not an address')).toBe(PROTOCOL_FLOOR);
    expect(linkWith('no handshakes').protocolOf(peer.toString())).toBe(PROTOCOL_VERSION);
  });
});
