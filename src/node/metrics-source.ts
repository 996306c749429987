// The node's MetricsSource: what GET /metrics reads at every scrape (hosted shards, placements, members, the
// store, the cluster transport's connections and buffers) and the events it counts (hand-offs, rebalance rounds, applied placements), taken from the cluster, the
// sharding runtime and the placement store (and, when it is durable, how long its commits take).
import type { PlacementReplicatorStats, PlacementStore } from '../../crdt/index.js';
import type { Membership } from '../cluster/member.js';
import type { SafetySource } from '../management/safety-metrics.js';
import type { EntityStoreFigures } from '../management/entity-store-metrics.js';
import {
  MetricsEventHub,
  type DeliveryFigures,
  type MetricsSource,
  type TransportFigures,
} from '../management/metrics.js';
import type { RegionStats } from '../sharding/region/region-stats.js';
import type { ClusterSharding } from '../sharding/cluster-sharding.js';
import { entityTypeNames, isInternalNamespace } from '../sharding/placements/cordons.js';

/** What `/metrics` reads of one node, and the event hub its coordinators report to. */
export interface NodeMetricsSource extends MetricsSource {
  /** Pass to ClusterSharding's `events` so coordinators on this node report hand-offs and rounds. */
  readonly hub: MetricsEventHub;
  /** Stops following the store. */
  close(): void;
}

/** The metrics source of a node wired by hand: follows its membership and store; pass `hub` to ClusterSharding. */
export function nodeMetricsSource(
  membership: Membership & { readonly clock?: { offsetMs(): number | undefined } },
  store: PlacementStore,
  sharding: () => ClusterSharding | undefined,
  transport?: MeasuredTransport,
  replication?: { stats(): PlacementReplicatorStats },
  entityStore?: EntityStoreFigures,
): NodeMetricsSource {
  const hub = new MetricsEventHub();
  const self = membership.self.toString();
  // A change names the shards whose winner changed; the winner's HLC wall time is when it was written.
  const stopFollowing = store.onChange((typeName, shardIds) => {
    // Cordons share the store but are not placements.
    if (isInternalNamespace(typeName)) return;
    const placements = store.snapshot(typeName).placements;
    for (const shardId of shardIds) {
      const placement = placements.get(shardId);
      if (placement !== undefined)
        hub.onPlacementApplied(placement.writer === self ? 'local' : 'remote', placement.hlc.wallMs);
    }
  });
  const durability = store.durability;
  const durable = durability !== undefined;
  const stopTiming = durability?.onCommitted((seconds) => hub.onStorageCommit(seconds)) ?? (() => undefined);
  return {
    hub,
    durable,
    ...(entityStore === undefined ? {} : { entityStore }),
    subscribe: hub.subscribe,
    shardsHosted: function* () {
      const types = sharding()?.stats().types ?? {};
      for (const [type, stats] of Object.entries(types)) yield [type, stats.region.localShards] as const;
    },
    placements: function* () {
      // Every type this node runs as well as every type with pins: a type without pins reads 0, not "absent".
      const types = new Set([...Object.keys(sharding()?.stats().types ?? {}), ...entityTypeNames(store)]);
      for (const type of types) {
        const counts = new Map<string, number>([
          ['prefer', 0],
          ['require', 0],
        ]);
        for (const placement of store.snapshot(type).placements.values()) {
          const mode = placement.meta?.['mode'] === 'require' ? 'require' : 'prefer';
          counts.set(mode, (counts.get(mode) ?? 0) + 1);
        }
        for (const [mode, count] of counts) yield { type, mode, count };
      }
    },
    ...(transport === undefined ? {} : { transport: () => transportFigures(transport) }),
    delivery: function* () {
      const types = sharding()?.stats().types ?? {};
      for (const [type, { region, coordinator }] of Object.entries(types)) {
        const { messagesRedelivered: redelivered, messagesDeduplicated: deduplicated } = region;
        const { stateBytesShipped, stateBytesRetained, stateBytesWaiting } = region;
        const stateBytesHeld = coordinator?.handOffStateBytes ?? 0;
        const entities = entityFigures(region);
        const state = { stateBytesShipped, stateBytesHeld, stateBytesRetained, stateBytesWaiting };
        yield { type, redelivered, deduplicated, ...state, ...entities };
      }
    },
    members: () => membership.members().map((member) => ({ status: member.status, reachable: member.reachable })),
    placementStore: () => {
      const { generation, documentItems } = store.stats();
      return { generation, items: documentItems };
    },
    safety: safetySource(membership, store, sharding, replication),
    close: () => {
      stopFollowing();
      stopTiming();
    },
  };
}

/** What the safety metrics read (safety-metrics.ts), from this node's membership, store, runtime and replication. */
function safetySource(
  membership: Membership & { readonly clock?: { offsetMs(): number | undefined } },
  store: PlacementStore,
  sharding: () => ClusterSharding | undefined,
  replication: { stats(): PlacementReplicatorStats } | undefined,
): SafetySource {
  const durability = store.durability;
  return {
    shardsWaiting: function* () {
      const types = sharding()?.stats().types ?? {};
      // Only the coordinator's node knows; elsewhere 0, so a sum over nodes counts each shard once.
      for (const [type, stats] of Object.entries(types)) yield [type, stats.coordinator?.waitingShards ?? 0] as const;
    },
    cordonedMembers: () => {
      const cordoned = new Set((sharding()?.cordons.list() ?? []).map((cordon) => cordon.address));
      return membership.members().filter((member) => cordoned.has(member.address.toString())).length;
    },
    replication: () => {
      const stats = replication?.stats();
      const oldest = stats?.oldestUnreplicatedMs ?? null;
      return {
        peersBehind: stats?.peersBehind ?? 0,
        oldestUnreplicatedSeconds: oldest === null ? null : oldest / 1000,
        framesRejected: stats?.framesRejected ?? 0,
        heldValues: store.stats().heldValues,
      };
    },
    storage: () => {
      if (durability === undefined) return { failed: false, failedCommits: 0 };
      const health = durability.storageHealth();
      return { failed: health.failure !== null, failedCommits: health.failedCommits };
    },
    clockOffsetSeconds: () => {
      const offsetMs = membership.clock?.offsetMs();
      return offsetMs === undefined ? null : offsetMs / 1000;
    },
  };
}

/** What the transport metrics read of the cluster transport (TcpTransport has it). */
interface MeasuredTransport {
  usage(): TransportFigures;
  stats(): { readonly refusedProtocolVersion: number };
  tlsRefusals(): ReadonlyMap<string, number>;
  readonly tls?: { current(): { readonly validToMs: number } } | undefined;
}

/** The transport's figures at a scrape: connections, refusals (protocol, TLS) and the cluster certificate's expiry. */
function transportFigures(transport: MeasuredTransport): TransportFigures {
  const tls = transport.tls;
  return {
    ...transport.usage(),
    refused: { protocol_version: transport.stats().refusedProtocolVersion },
    tlsRefused: Object.fromEntries(transport.tlsRefusals()),
    certificates: tls === undefined ? [] : [{ port: 'cluster', validToMs: tls.current().validToMs }],
  };
}

/** A region's active and passivated entities and refused messages, as the metrics read them. */
function entityFigures(
  region: RegionStats,
): Pick<DeliveryFigures, 'entitiesActive' | 'entitiesPassivated' | 'messagesInvalid'> {
  const { localEntities, entitiesPassivated, messagesInvalid } = region;
  return { entitiesActive: localEntities, entitiesPassivated, messagesInvalid };
}
