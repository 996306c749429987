// The sharding protocol at the gate: every message survives the wire codec unchanged, every malformed field
// is rejected, and well-formed messages from the wrong sender or for an unknown type change nothing.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import { decodeMessage, encodeMessage, encodeValue } from '../../src/cluster/transport/message-codec.js';
import { FamilyRegistry } from '../../src/cluster/transport/wire-message.js';
import { parseMessage, type ProtocolMessage } from '../../src/protocol.js';
import {
  SHARDING_MESSAGES,
  SHARDING_MESSAGE_TYPES,
  type ShardingMessage,
} from '../../src/sharding/protocol/messages.js';
import { TestCluster, counter, entityInShard, run, settle, useTestClusters, type CounterReply } from './harness.js';

const NODE = 'sys@127.0.0.1:2551';
const FAMILIES = new FamilyRegistry();
FAMILIES.register(SHARDING_MESSAGES);

/** Field sets many cases below share; each case spreads one and changes what it is about. */
const ENVELOPE = {
  type: 'EntityEnvelope',
  typeName: 'Counter',
  shardId: 1,
  entityId: 'e',
  payload: 1,
  hops: 0,
} as const;
const ASK_FROM = { node: 'sys@127.0.0.1:1', askId: 5 };
const CHUNK = { type: 'ShardStateChunk', typeName: 'Counter', shardId: 1, handOffId: 3, part: 0, parts: 1 } as const;
const STREAMED = { type: 'ShardStateChunk', typeName: 'Counter', shardId: 1, handOffId: 3 } as const;
const EXPLAINED = { type: 'ShardExplained', typeName: 'Counter', requestId: 1 } as const;
const DRY_RUN_PLACEMENTS = { type: 'DryRunPlacements', typeName: 'Counter', requestId: 1 } as const;

const VALID: ShardingMessage[] = [
  { type: 'RegisterRegion', typeName: 'Counter', proxy: false, shards: [3, 1, 2], stopping: [], retained: [] },
  { type: 'RegisterRegion', typeName: 'Counter', proxy: false, shards: [3], stopping: [0, 999_999], retained: [] },
  { type: 'RegisterRegion', typeName: 'Counter', proxy: true, shards: [], stopping: [], retained: [] },
  {
    type: 'RegisterRegion',
    typeName: 'Counter',
    proxy: false,
    shards: [1],
    stopping: [],
    retained: [{ shardId: 2, handOffId: 9 }],
  },
  { type: 'ShardStateHeld', typeName: 'Counter', shardId: 2, handOffId: 9 },
  { type: 'ShardStateReleased', typeName: 'Counter', shardId: 2, handOffId: 9 },
  { type: 'RegisterAck', typeName: 'Counter' },
  { type: 'RegisterRequired', typeName: 'Counter' },
  { type: 'GetShardHome', typeName: 'Counter', shardId: 0 },
  { type: 'ShardHome', typeName: 'Counter', shardId: 7, region: NODE },
  { type: 'HostShard', typeName: 'Counter', shardId: 7 },
  { type: 'ShardStarted', typeName: 'Counter', shardId: 7 },
  { type: 'BeginHandOff', typeName: 'a.b_c-d', shardId: 7 },
  { type: 'BeginHandOffAck', typeName: 'Counter', shardId: 7 },
  { type: 'HandOff', typeName: 'Counter', shardId: 999_999, handOffId: 1 },
  { type: 'ShardStopped', typeName: 'Counter', shardId: 7, handOffId: Number.MAX_SAFE_INTEGER },
  { type: 'ShardStoppedAck', typeName: 'Counter', shardId: 7, handOffId: 3 },
  { ...ENVELOPE, shardId: 7, replyTo: ASK_FROM, reliable: { incarnation: 9, seq: 5, below: 2 } },
  { ...CHUNK, shardId: 7, part: 1, parts: 2, entities: [{ entityId: 'e1', state: new Uint8Array([0x90]) }] },
  { type: 'RestoreShardState', typeName: 'Counter', shardId: 7, transferId: 3, part: 0, parts: 1, entities: [] },
  // Protocol 9: a streamed transfer's chunks name no count; its final one says `last` (with `parts` or without).
  { ...STREAMED, part: 4, entities: [] },
  { ...STREAMED, part: 4, last: true, entities: [] },
  { ...CHUNK, part: 1, parts: 2, last: true, entities: [] },
  { type: 'RestoreShardState', typeName: 'Counter', shardId: 7, transferId: 3, part: 2, last: true, entities: [] },
  { type: 'GracefulShutdownRequest', typeName: 'Counter' },
  { type: 'GracefulShutdownAck', typeName: 'Counter' },
  { ...ENVELOPE, entityId: 'chat #1', payload: { text: 'hi', n: [1, 2] } },
  { ...ENVELOPE, payload: null, hops: 3, replyTo: { node: NODE, askId: 12 } },
  { type: 'EntityReply', askId: 1, ok: true, value: { count: 2 } },
  { type: 'EntityReply', askId: 1, ok: false, error: 'boom' },
  { type: 'EntityReplies', askIds: [1, Number.MAX_SAFE_INTEGER, 3] },
  { type: 'EntityReplies', askIds: Array.from({ length: 4096 }, (_, i) => i + 1) },
  { type: 'GetShardLocations', typeName: 'Counter', requestId: 5 },
  {
    type: 'ShardLocations',
    typeName: 'Counter',
    requestId: 5,
    regions: [{ address: NODE, shards: [1, 2] }],
    handingOff: [2],
  },
  { type: 'RebalanceNow', typeName: 'Counter', requestId: 6, shardIds: [1, -4, 5_000_000] },
  { type: 'RebalanceNowResult', typeName: 'Counter', requestId: 6, accepted: [1], unknown: [-4], homeless: [] },
  { type: 'RequestRebalance', typeName: 'Counter', requestId: 8 },
  { type: 'RebalanceRequested', typeName: 'Counter', requestId: 8 },
  { type: 'ExplainShard', typeName: 'Counter', requestId: 9, shardId: 42 },
  { type: 'ShardExplained', typeName: 'Counter', requestId: 9, explanation: null },
  {
    type: 'ShardExplained',
    typeName: 'Counter',
    requestId: 9,
    explanation: {
      shardId: 42,
      home: NODE,
      handingOff: false,
      placement: {
        shardId: 42,
        target: 'zone=a',
        mode: 'require',
        expiresAt: '2030-01-01T00:00:00.000Z',
        reason: 'why',
        by: null,
        writer: NODE,
        hlc: { wallMs: 1_700_000_000_000, counter: 3, node: NODE },
      },
      decision: 'placement',
      message: 'shard 42 is on it because its pin requires zone=a.',
      nodes: [{ address: NODE, shards: 3, reachable: true, status: 'up', cordoned: false, matches: true }],
      history: [{ atMs: 1_700_000_000_000, what: `allocated to ${NODE}` }],
    },
  },
  {
    type: 'DryRunPlacements',
    typeName: 'Counter',
    requestId: 10,
    pins: [{ shardId: 1, target: NODE, mode: 'prefer', expiresAt: 1_900_000_000_000 }],
  },
  { type: 'DryRunRebalance', typeName: 'Counter', requestId: 11, shardIds: [1, 2] },
  {
    type: 'DryRunAnswer',
    typeName: 'Counter',
    requestId: 11,
    moves: [{ shardId: 1, from: NODE, to: null }],
    warnings: [
      { shardId: 2, message: 'no home' },
      { shardId: null, message: 'threw' },
      { shardId: 1, target: 'zone=a', message: 'waits' },
    ],
  },
  { type: 'DrainRegion', typeName: 'Counter', requestId: 9, region: NODE },
  {
    type: 'DrainStarted',
    typeName: 'Counter',
    requestId: 9,
    moves: [{ shardId: 3, from: NODE, to: null }],
    noCapacity: false,
  },
];

const EXPLANATION = {
  shardId: 1,
  home: null,
  handingOff: false,
  placement: null,
  decision: 'unallocated',
  message: 'm',
  nodes: [],
};

const MALFORMED: Array<Record<string, unknown>> = [
  { type: 'GetShardHome', typeName: 'Counter' },
  { type: 'GetShardHome', typeName: 'Counter', shardId: -1 },
  { type: 'GetShardHome', typeName: 'Counter', shardId: 1.5 },
  { type: 'GetShardHome', typeName: 'Counter', shardId: 1_000_000 },
  { type: 'GetShardHome', typeName: 'Counter', shardId: '1' },
  { type: 'GetShardHome', typeName: '', shardId: 1 },
  { type: 'GetShardHome', typeName: 'has space', shardId: 1 },
  { type: 'GetShardHome', typeName: 'x'.repeat(129), shardId: 1 },
  { type: 'GetShardHome', shardId: 1 },
  { type: 'RegisterRegion', typeName: 'Counter', proxy: 'no', shards: [], stopping: [], retained: [] },
  { type: 'RegisterRegion', typeName: 'Counter', proxy: false, shards: [1, -2], stopping: [], retained: [] },
  { type: 'RegisterRegion', typeName: 'Counter', proxy: false, shards: 'all', stopping: [], retained: [] },
  { type: 'RegisterRegion', typeName: 'Counter', proxy: false, shards: [1] },
  { type: 'RegisterRegion', typeName: 'Counter', proxy: false, shards: [1], stopping: null, retained: [] },
  { type: 'RegisterRegion', typeName: 'Counter', proxy: false, shards: [1], stopping: [2.5], retained: [] },
  { type: 'RegisterRegion', typeName: 'Counter', proxy: false, shards: [1], stopping: [1_000_000], retained: [] },
  { type: 'RegisterRegion', typeName: 'Counter', proxy: false, shards: [1, 2], stopping: [3, 2], retained: [] },
  { type: 'RegisterRegion', typeName: 'Counter', proxy: false, shards: [1], stopping: [] },
  { type: 'RegisterRegion', typeName: 'Counter', proxy: false, shards: [1], stopping: [], retained: [2] },
  { type: 'RegisterRegion', typeName: 'Counter', proxy: false, shards: [1], stopping: [], retained: [{ shardId: 2 }] },
  {
    type: 'RegisterRegion',
    typeName: 'Counter',
    proxy: false,
    shards: [],
    stopping: [],
    retained: [{ shardId: 1_000_000, handOffId: 1 }],
  },
  { type: 'ShardStateHeld', typeName: 'Counter', shardId: 1, handOffId: 0 },
  { type: 'ShardStateReleased', typeName: 'Counter', shardId: -1, handOffId: 1 },
  { type: 'HandOff', typeName: 'Counter', shardId: 1 },
  { type: 'HandOff', typeName: 'Counter', shardId: 1, handOffId: 0 },
  { type: 'ShardStopped', typeName: 'Counter', shardId: 1 },
  { type: 'ShardStoppedAck', typeName: 'Counter', shardId: 1, handOffId: -1 },
  { ...ENVELOPE, replyTo: ASK_FROM, reliable: { incarnation: 9, seq: 5, below: 6 } },
  { ...ENVELOPE, replyTo: ASK_FROM, reliable: { incarnation: 0, seq: 5, below: 1 } },
  { ...CHUNK, part: 2, parts: 2, entities: [] },
  { ...CHUNK, part: 0, parts: 0, entities: [] },
  { ...CHUNK, part: 0, parts: 2, last: true, entities: [] },
  { ...CHUNK, last: false, entities: [] },
  { ...STREAMED, part: 1, last: 1, entities: [] },
  { ...STREAMED, part: 100_000, last: true, entities: [] },
  { ...STREAMED, part: 0, last: true },
  { ...CHUNK, entities: [{ entityId: '', state: new Uint8Array(1) }] },
  { ...CHUNK, entities: [{ entityId: 'e', state: 'not bytes' }] },
  { type: 'RestoreShardState', typeName: 'Counter', shardId: 1, part: 0, parts: 1, entities: [] },
  { type: 'RestoreShardState', typeName: 'Counter', shardId: 1, transferId: 3, part: 0, parts: 1, entities: {} },
  { type: 'ShardStopped', typeName: 'Counter', shardId: 1, handOffId: 1.5 },
  { type: 'ShardStopped', typeName: 'Counter', shardId: 1, handOffId: '7' },
  { type: 'ShardStopped', typeName: 'Counter', shardId: 1, handOffId: Number.MAX_SAFE_INTEGER + 2 },
  { type: 'ShardHome', typeName: 'Counter', shardId: 1, region: 'not an address' },
  { type: 'ShardHome', typeName: 'Counter', shardId: 1, region: `actor-ts://${NODE}` },
  { type: 'ShardHome', typeName: 'Counter', shardId: 1 },
  { ...ENVELOPE, entityId: '' },
  { ...ENVELOPE, entityId: 'x'.repeat(1025) },
  { ...ENVELOPE, entityId: 7 },
  { ...ENVELOPE, hops: -1 },
  { ...ENVELOPE, hops: 256 },
  { type: 'EntityEnvelope', typeName: 'Counter', shardId: 1, entityId: 'e', payload: 1 },
  { ...ENVELOPE, replyTo: { node: NODE } },
  { ...ENVELOPE, replyTo: { node: 'x', askId: 1 } },
  { ...ENVELOPE, replyTo: 'me' },
  { type: 'EntityReply', askId: 0, ok: true, value: 1 },
  { type: 'EntityReply', askId: 1, ok: 'yes', value: 1 },
  { type: 'EntityReply', askId: 1, ok: false },
  { type: 'EntityReply', askId: 1, ok: false, error: 'e'.repeat(4097) },
  { type: 'EntityReplies', askIds: [] },
  { type: 'EntityReplies', askIds: [1, 0] },
  { type: 'EntityReplies', askIds: [1, -2] },
  { type: 'EntityReplies', askIds: [1, 2.5] },
  { type: 'EntityReplies', askIds: [1, '2'] },
  { type: 'EntityReplies', askIds: [Number.MAX_SAFE_INTEGER + 2] },
  { type: 'EntityReplies', askIds: { length: 1, 0: 1 } },
  { type: 'EntityReplies', askIds: 1 },
  { type: 'EntityReplies' },
  { type: 'EntityReplies', askIds: Array.from({ length: 4097 }, (_, i) => i + 1) },
  { type: 'GetShardLocations', typeName: 'Counter', requestId: 0 },
  { type: 'GetShardLocations', typeName: 'Counter', requestId: Number.MAX_SAFE_INTEGER + 2 },
  { type: 'ShardLocations', typeName: 'Counter', requestId: 1, regions: [{ address: NODE }] },
  { type: 'ShardLocations', typeName: 'Counter', requestId: 1, regions: [{ address: 'nope', shards: [] }] },
  { type: 'ShardLocations', typeName: 'Counter', requestId: 1, regions: {} },
  { type: 'ShardLocations', typeName: 'Counter', requestId: 1, regions: [], handingOff: [-1] },
  { type: 'RebalanceNow', typeName: 'Counter', requestId: 1, shardIds: [1.5] },
  { type: 'RebalanceNow', typeName: 'Counter', requestId: 1 },
  { type: 'RebalanceNowResult', typeName: 'Counter', requestId: 1, accepted: [1], unknown: [] },
  { type: 'RebalanceNowResult', typeName: 'Counter', requestId: 1, accepted: [-1], unknown: [], homeless: [] },
  { type: 'ExplainShard', typeName: 'Counter', requestId: 1, shardId: 1_000_000 },
  { type: 'ExplainShard', typeName: 'Counter', requestId: 0, shardId: 1 },
  { ...EXPLAINED },
  { ...EXPLAINED, explanation: { ...EXPLANATION, decision: 'because' } },
  { ...EXPLAINED, explanation: { ...EXPLANATION, message: 'm'.repeat(4097) } },
  { ...EXPLAINED, explanation: { ...EXPLANATION, home: 'nowhere' } },
  { ...EXPLAINED, explanation: { ...EXPLANATION, placement: { shardId: 1, target: 'x' } } },
  { ...EXPLAINED, explanation: { ...EXPLANATION, history: [{ atMs: -1, what: 'allocated' }] } },
  { ...EXPLAINED, explanation: { ...EXPLANATION, history: [{ atMs: 1, what: 'w'.repeat(513) }] } },
  {
    ...EXPLAINED,
    explanation: { ...EXPLANATION, history: Array.from({ length: 17 }, () => ({ atMs: 1, what: 'w' })) },
  },
  {
    ...EXPLAINED,
    explanation: {
      ...EXPLANATION,
      nodes: [{ address: NODE, shards: -1, reachable: true, status: 'up', cordoned: false, matches: null }],
    },
  },
  {
    ...EXPLAINED,
    explanation: {
      ...EXPLANATION,
      nodes: [{ address: NODE, shards: 1, reachable: true, status: 'up', cordoned: 'no', matches: null }],
    },
  },
  { ...DRY_RUN_PLACEMENTS, pins: [{ shardId: 1, target: NODE, mode: 'maybe', expiresAt: null }] },
  { ...DRY_RUN_PLACEMENTS, pins: [{ shardId: 1, target: 'x'.repeat(257), mode: 'prefer', expiresAt: null }] },
  { ...DRY_RUN_PLACEMENTS, pins: [{ shardId: 1, target: NODE, mode: 'prefer', expiresAt: -1 }] },
  { type: 'DryRunRebalance', typeName: 'Counter', requestId: 1, shardIds: [-1] },
  {
    type: 'DryRunAnswer',
    typeName: 'Counter',
    requestId: 1,
    moves: [{ shardId: 1, from: null, to: NODE }],
    warnings: [],
  },
  { type: 'DryRunAnswer', typeName: 'Counter', requestId: 1, moves: [], warnings: [{ shardId: 1 }] },
  { type: 'DryRunAnswer', typeName: 'Counter', requestId: 1, moves: [] },
  { type: 'DrainRegion', typeName: 'Counter', requestId: 1, region: `actor-ts://${NODE}` },
  { type: 'DrainRegion', typeName: 'Counter', requestId: 1 },
  { type: 'DrainStarted', typeName: 'Counter', requestId: 1, moves: [], noCapacity: 1 },
  {
    type: 'DrainStarted',
    typeName: 'Counter',
    requestId: 1,
    moves: [{ shardId: 1_000_000, from: NODE, to: null }],
    noCapacity: false,
  },
];

describe('sharding messages', () => {
  it('lists every message type of the union', () => {
    expect(new Set(VALID.map((m) => m.type))).toEqual(SHARDING_MESSAGE_TYPES);
  });

  it.each(VALID.map((m) => [m.type, m] as const))('%s survives encode -> decode unchanged', (_type, message) => {
    expect(decodeMessage(encodeMessage(message as ProtocolMessage), FAMILIES)).toEqual(message);
  });

  it.each(MALFORMED.map((m) => [JSON.stringify(m).slice(0, 110), m] as const))('rejects %s', (_label, message) => {
    expect(parseMessage(message)).toBeUndefined();
    expect(decodeMessage(encodeValue(message), FAMILIES)).toBeUndefined();
  });

  it("reads a 0.2.0 coordinator's explanation, which has no history, as one with an empty history", () => {
    const older = { ...EXPLAINED, explanation: EXPLANATION };
    expect(decodeMessage(encodeValue(older), FAMILIES)).toEqual({
      ...older,
      explanation: { ...EXPLANATION, history: [] },
    });
  });

  it('ignores fields it does not know: a later release may add optional ones (issue 35)', () => {
    const extraKey = fc.string({ minLength: 1, maxLength: 12 }).map((key) => `later_${key}`);
    const extraValue = fc.oneof(
      fc.integer(),
      fc.string({ maxLength: 20 }),
      fc.boolean(),
      fc.array(fc.nat(), { maxLength: 3 }),
    );
    fc.assert(
      fc.property(fc.constantFrom(...VALID), fc.dictionary(extraKey, extraValue, { maxKeys: 4 }), (message, extra) => {
        const later = { ...extra, ...message };
        expect(decodeMessage(encodeMessage(later as ProtocolMessage), FAMILIES)).toEqual(message);
      }),
      { numRuns: 300 },
    );
  });

  it('treats a reply or payload that an encoder dropped as undefined', () => {
    expect(parseMessage({ type: 'EntityReply', askId: 3, ok: true })).toEqual({
      type: 'EntityReply',
      askId: 3,
      ok: true,
      value: undefined,
    });
  });
});

describe('messages from the wrong sender', () => {
  let cluster: TestCluster;
  useTestClusters(() => (cluster = new TestCluster()));

  it('drops messages for unknown types and coordinator claims from a node that is not the coordinator', async () => {
    const a = cluster.addNode(7001);
    const b = cluster.addNode(7002);
    cluster.initAll({ typeName: 'Counter', behavior: counter(), numberOfShards: 10 });
    await run(1_000);
    const rogue = cluster.net.transport(NodeAddress.parse('rogue@127.0.0.1:6666'));
    rogue.register(SHARDING_MESSAGES);
    const shardId = 4;
    rogue.send(b.address, { type: 'GetShardHome', typeName: 'Nope', shardId });
    rogue.send(b.address, { type: 'GetShardHome', typeName: 'Counter', shardId });
    rogue.send(b.address, { type: 'HostShard', typeName: 'Counter', shardId });
    rogue.send(b.address, { type: 'ShardHome', typeName: 'Counter', shardId, region: rogue.self.toString() });
    rogue.send(b.address, { type: 'HandOff', typeName: 'Counter', shardId, handOffId: 1 });
    rogue.send(b.address, { type: 'EntityReply', askId: 424242, ok: true, value: 'unsolicited' });
    rogue.send(a.address, {
      type: 'RegisterRegion',
      typeName: 'Counter',
      proxy: false,
      shards: [shardId],
      stopping: [],
      retained: [],
    });
    await run(100);
    expect(b.sharding.stats().unroutableMessages).toBe(2);
    expect(b.sharding.localShards('Counter')).toEqual([]);
    // The rogue's claim on the shard was not believed by the region nor recorded by the coordinator.
    const reply = await settle(
      b.sharding.entityRefFor('Counter', entityInShard(shardId, 10)).ask<CounterReply>({ op: 'inc' }),
    );
    expect([a.key, b.key]).toContain(reply.node);
    const locations = await settle(b.sharding.getShardLocations('Counter'));
    expect(locations.regions.map((r) => r.address)).toEqual([a.key, b.key]);
    expect(locations.regions.flatMap((r) => r.shards)).toEqual([shardId]);
    await rogue.close();
  });
});
