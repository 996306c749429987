// The sharding routing table: every message type has exactly one route, the sets derived from it are the ones
// the runtime used to keep by hand, and the router hands each message to the handler its route names.
import { describe, expect, it } from 'vitest';
import { routeShardingMessage, type RouteTargets } from '../../src/sharding/message-router.js';
import {
  SHARDING_MESSAGES,
  SHARDING_MESSAGE_TYPES,
  SHARDING_ROUTES,
  isRoutedTo,
  parseShardingMessage,
  typesRoutedTo,
  type ShardingMessage,
  type ShardingRoute,
} from '../../src/sharding/protocol/messages.js';

// The three lists ClusterSharding and messages.ts kept by hand before the table.
const OLD_TYPES = [
  'RegisterRegion',
  'RegisterAck',
  'RegisterRequired',
  'GetShardHome',
  'ShardHome',
  'HostShard',
  'ShardStarted',
  'BeginHandOff',
  'BeginHandOffAck',
  'HandOff',
  'ShardStopped',
  'GracefulShutdownRequest',
  'GracefulShutdownAck',
  'EntityEnvelope',
  'EntityReply',
  'GetShardLocations',
  'ShardLocations',
  'RebalanceNow',
  'RebalanceNowResult',
  'RequestRebalance',
  'RebalanceRequested',
];
// Explain and dry runs (issue 12), asked of the coordinator and answered to the requester.
const INSIGHT_REQUESTS = ['ExplainShard', 'DryRunPlacements', 'DryRunRebalance'];
const INSIGHT_ANSWERS = ['ShardExplained', 'DryRunAnswer'];
const OLD_REGION_BOUND = [
  'RegisterAck',
  'RegisterRequired',
  'ShardHome',
  'HostShard',
  'BeginHandOff',
  'HandOff',
  'GracefulShutdownAck',
  'EntityEnvelope',
];
const OLD_COORDINATOR_BOUND = [
  'RegisterRegion',
  'GetShardHome',
  'ShardStarted',
  'BeginHandOffAck',
  'ShardStopped',
  'GracefulShutdownRequest',
  'GetShardLocations',
  'RebalanceNow',
  'RequestRebalance',
];

// One well-formed message of every type; the `satisfies` makes the compiler name any type left out.
const SAMPLES = {
  RegisterRegion: { type: 'RegisterRegion', typeName: 'T', proxy: false, shards: [1], stopping: [], retained: [] },
  RegisterAck: { type: 'RegisterAck', typeName: 'T' },
  RegisterRequired: { type: 'RegisterRequired', typeName: 'T' },
  GetShardHome: { type: 'GetShardHome', typeName: 'T', shardId: 1 },
  ShardHome: { type: 'ShardHome', typeName: 'T', shardId: 1, region: 'sys@127.0.0.1:1' },
  HostShard: { type: 'HostShard', typeName: 'T', shardId: 1 },
  ShardStarted: { type: 'ShardStarted', typeName: 'T', shardId: 1 },
  BeginHandOff: { type: 'BeginHandOff', typeName: 'T', shardId: 1 },
  BeginHandOffAck: { type: 'BeginHandOffAck', typeName: 'T', shardId: 1 },
  HandOff: { type: 'HandOff', typeName: 'T', shardId: 1, handOffId: 1 },
  ShardStopped: { type: 'ShardStopped', typeName: 'T', shardId: 1, handOffId: 1 },
  GracefulShutdownRequest: { type: 'GracefulShutdownRequest', typeName: 'T' },
  GracefulShutdownAck: { type: 'GracefulShutdownAck', typeName: 'T' },
  EntityEnvelope: { type: 'EntityEnvelope', typeName: 'T', shardId: 1, entityId: 'e', payload: 1, hops: 0 },
  EntityReply: { type: 'EntityReply', askId: 1, ok: true, value: 2 },
  EntityReplies: { type: 'EntityReplies', askIds: [1, 2] },
  GetShardLocations: { type: 'GetShardLocations', typeName: 'T', requestId: 1 },
  ShardLocations: { type: 'ShardLocations', typeName: 'T', requestId: 1, regions: [], handingOff: [] },
  RebalanceNow: { type: 'RebalanceNow', typeName: 'T', requestId: 1, shardIds: [1] },
  RebalanceNowResult: {
    type: 'RebalanceNowResult',
    typeName: 'T',
    requestId: 1,
    accepted: [],
    unknown: [],
    homeless: [],
  },
  RequestRebalance: { type: 'RequestRebalance', typeName: 'T', requestId: 1 },
  RebalanceRequested: { type: 'RebalanceRequested', typeName: 'T', requestId: 1 },
  ExplainShard: { type: 'ExplainShard', typeName: 'T', requestId: 1, shardId: 3 },
  ShardExplained: { type: 'ShardExplained', typeName: 'T', requestId: 1, explanation: null },
  DryRunPlacements: {
    type: 'DryRunPlacements',
    typeName: 'T',
    requestId: 1,
    pins: [{ shardId: 3, target: 'zone=a', mode: 'require', expiresAt: null }],
  },
  DryRunRebalance: { type: 'DryRunRebalance', typeName: 'T', requestId: 1, shardIds: [3] },
  DryRunAnswer: {
    type: 'DryRunAnswer',
    typeName: 'T',
    requestId: 1,
    moves: [{ shardId: 3, from: 'sys@127.0.0.1:1', to: null }],
    warnings: [],
  },
  DrainRegion: { type: 'DrainRegion', typeName: 'T', requestId: 1, region: 'sys@127.0.0.1:1' },
  DrainStarted: {
    type: 'DrainStarted',
    typeName: 'T',
    requestId: 1,
    moves: [
      { shardId: 1, from: 'sys@127.0.0.1:1', to: 'sys@127.0.0.1:2' },
      { shardId: 2, from: 'sys@127.0.0.1:1', to: null },
    ],
    noCapacity: false,
  },
  ShardStateChunk: {
    type: 'ShardStateChunk',
    typeName: 'T',
    shardId: 1,
    handOffId: 7,
    part: 0,
    parts: 1,
    entities: [{ entityId: 'e', state: new Uint8Array([1, 2]) }],
  },
  ShardStoppedAck: { type: 'ShardStoppedAck', typeName: 'T', shardId: 1, handOffId: 7 },
  RestoreShardState: {
    type: 'RestoreShardState',
    typeName: 'T',
    shardId: 1,
    transferId: 7,
    part: 0,
    parts: 2,
    entities: [],
  },
  ShardStateHeld: { type: 'ShardStateHeld', typeName: 'T', shardId: 1, handOffId: 7 },
  ShardStateReleased: { type: 'ShardStateReleased', typeName: 'T', shardId: 1, handOffId: 7 },
} satisfies { [T in ShardingMessage['type']]: Extract<ShardingMessage, { type: T }> };

// Messages added after the table (issue 12: drain), with their routes.
const DRAIN_TYPES = { DrainRegion: 'coordinator', DrainStarted: 'requester' } as const;
// Entity state of a graceful hand-off (issue 23): old host to coordinator, coordinator to new host, and the
// old host's copy kept until released.
const STATE_TYPES = {
  ShardStateChunk: 'coordinator',
  RestoreShardState: 'region',
  ShardStoppedAck: 'region',
  ShardStateHeld: 'coordinator',
  ShardStateReleased: 'region',
} as const;
// Many answers without a value (sends' acknowledgements) in one frame, to the asker.
const REPLIES_TYPES = { EntityReplies: 'asker' } as const;
const ALL_TYPES = [
  ...OLD_TYPES,
  ...INSIGHT_REQUESTS,
  ...INSIGHT_ANSWERS,
  ...Object.keys(DRAIN_TYPES),
  ...Object.keys(STATE_TYPES),
  ...Object.keys(REPLIES_TYPES),
];

const sorted = (values: Iterable<string>): string[] => [...values].sort();

describe('SHARDING_ROUTES', () => {
  it('routes every message type, and the type set is the table', () => {
    expect(sorted(Object.keys(SHARDING_ROUTES))).toEqual(sorted(ALL_TYPES));
    expect(sorted(SHARDING_MESSAGE_TYPES)).toEqual(sorted(ALL_TYPES));
    expect(SHARDING_MESSAGES.types).toBe(SHARDING_MESSAGE_TYPES);
    for (const type of ALL_TYPES)
      expect(['region', 'coordinator', 'asker', 'requester']).toContain(
        SHARDING_ROUTES[type as keyof typeof SHARDING_ROUTES],
      );
  });

  it('derives the region and coordinator sets the runtime kept by hand', () => {
    expect(sorted(typesRoutedTo('region'))).toEqual(
      sorted([...OLD_REGION_BOUND, 'RestoreShardState', 'ShardStoppedAck', 'ShardStateReleased']),
    );
    expect(sorted(typesRoutedTo('coordinator'))).toEqual(
      sorted([...OLD_COORDINATOR_BOUND, ...INSIGHT_REQUESTS, 'DrainRegion', 'ShardStateChunk', 'ShardStateHeld']),
    );
    expect(sorted(typesRoutedTo('asker'))).toEqual(['EntityReplies', 'EntityReply']);
    expect(sorted(typesRoutedTo('requester'))).toEqual(
      sorted(['DrainStarted', 'RebalanceNowResult', 'RebalanceRequested', 'ShardLocations', ...INSIGHT_ANSWERS]),
    );
    for (const [type, route] of Object.entries(DRAIN_TYPES))
      expect(SHARDING_ROUTES[type as keyof typeof DRAIN_TYPES]).toBe(route);
  });

  it('gives the family a parse that accepts a sample of every type', () => {
    for (const sample of Object.values(SAMPLES))
      expect(SHARDING_MESSAGES.parse(sample)).toEqual(parseShardingMessage(sample));
    for (const sample of Object.values(SAMPLES)) expect(SHARDING_MESSAGES.parse(sample)).toBeDefined();
  });
});

describe('routeShardingMessage', () => {
  function recorder(has: { region: boolean; coordinator: boolean }): {
    targets: RouteTargets;
    seen: Array<[ShardingRoute, string]>;
  } {
    const seen: Array<[ShardingRoute, string]> = [];
    const targets: RouteTargets = {
      region: () => (has.region ? { handle: (_from, message) => void seen.push(['region', message.type]) } : undefined),
      coordinator: () =>
        has.coordinator ? { handle: (_from, message) => void seen.push(['coordinator', message.type]) } : undefined,
      entityReply: (message) => void seen.push(['asker', message.type]),
      coordinatorAnswer: (message) => void seen.push(['requester', message.type]),
    };
    return { targets, seen };
  }

  it('hands every message to the handler its route names, and to no other', () => {
    for (const message of Object.values(SAMPLES) as ShardingMessage[]) {
      const { targets, seen } = recorder({ region: true, coordinator: true });
      expect(routeShardingMessage('sys@127.0.0.1:2', message, targets)).toBe(true);
      expect(seen).toEqual([[SHARDING_ROUTES[message.type], message.type]]);
      expect(isRoutedTo(message, SHARDING_ROUTES[message.type])).toBe(true);
    }
  });

  it('reports region and coordinator messages with no handler here as unroutable', () => {
    for (const message of Object.values(SAMPLES) as ShardingMessage[]) {
      const { targets, seen } = recorder({ region: false, coordinator: false });
      const routed = routeShardingMessage('sys@127.0.0.1:2', message, targets);
      const route = SHARDING_ROUTES[message.type];
      expect(routed).toBe(route === 'asker' || route === 'requester');
      expect(seen.length).toBe(routed ? 1 : 0);
    }
  });
});
