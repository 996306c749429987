// Prometheus metrics of one node at GET /metrics: a Fastify plugin over a per-node prom-client Registry, fed by a
// MetricsSource that the node wiring implements. Gauges read the source at scrape time; counters and histograms
// move on the events the source reports through `subscribe`.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { MEMBER_STATUSES, type FailoverPhase } from '../cluster/member.js';

export const METRICS_PREFIX = 'actor_ts_';

/** Where an applied placement update came from: written on this node, or received from a peer. */
export type PlacementOrigin = 'local' | 'remote';

/** Member statuses always exported (as 0 when no member has them) so series do not appear and vanish. */

/** Connection states of the cluster transport, always exported (as 0 when none is in them). */
export const TRANSPORT_CONNECTION_STATES = ['inbound-handshaking', 'inbound-open', 'outbound-connecting', 'outbound-open'] as const;

/** What the cluster transport holds now (TcpTransport.usage() has this shape). */
export interface TransportFigures {
  readonly connections: Readonly<Record<(typeof TRANSPORT_CONNECTION_STATES)[number], number>>;
  /** Bytes of incomplete inbound frames in the shared budget. */
  readonly inboundBufferedBytes: number;
}

/**
 * Events the node reports as they happen. Every method must be cheap and must not throw: the caller is the
 * sharding runtime or the placement store, on its hot path.
 */
export interface MetricsEvents {
  /** A shard of `type` finished handing off from this node's coordinator view; `seconds` from start to stop. */
  onHandOffCompleted(type: string, seconds: number): void;
  /** The coordinator of `type` ran one rebalance round (whether or not it moved anything). */
  onRebalanceRound(type: string): void;
  /**
   * This node applied a placement update. `hlcWallMs` is the wall time of the write's HLC: for remote updates
   * `now - hlcWallMs` is the propagation delay (negative values from clock skew count as 0).
   */
  onPlacementApplied(origin: PlacementOrigin, hlcWallMs: number): void;
  /** A durable placement store committed to storage in `seconds`. */
  onStorageCommit(seconds: number): void;
  /**
   * A failover incident reached `phase` on this node, `seconds` after the failed member's last sign of life
   * here (failover-timeline.ts). Optional for sources that do not follow failovers.
   */
  onFailoverPhase?(phase: FailoverPhase, seconds: number): void;
}

/** Current figures, read at every scrape; plus the event subscription. */
export interface MetricsSource {
  /** Per entity type: how many shards this node hosts now. */
  shardsHosted(): Iterable<readonly [type: string, count: number]>;
  /** Explicit placements per entity type and mode (use mode "pin" while placements have no mode). */
  placements(): Iterable<{ readonly type: string; readonly mode: string; readonly count: number }>;
  /** Every member this node knows, with its status and whether this node sees it reachable. */
  members(): Iterable<{ readonly status: string; readonly reachable: boolean }>;
  /** The placement store replica: its generation and its document's history items. */
  placementStore(): { readonly generation: number; readonly items: number };
  /** The cluster transport's connections and buffers; without it the transport gauges are left out. */
  transport?(): TransportFigures;
  /** True when placements are durable: only then is the storage commit histogram exported. */
  readonly durable: boolean;
  /** Starts delivering events to `events`; returns the function that stops it (called when the server closes). */
  subscribe(events: MetricsEvents): () => void;
}

/** A fan-out of MetricsEvents: the wiring calls its methods, `subscribe` is what a MetricsSource returns. */
export class MetricsEventHub implements MetricsEvents {
  private readonly listeners = new Set<MetricsEvents>();

  readonly subscribe = (events: MetricsEvents): (() => void) => {
    this.listeners.add(events);
    return () => {
      this.listeners.delete(events);
    };
  };

  onHandOffCompleted(type: string, seconds: number): void {
    for (const listener of this.listeners) listener.onHandOffCompleted(type, seconds);
  }
  onRebalanceRound(type: string): void {
    for (const listener of this.listeners) listener.onRebalanceRound(type);
  }
  onPlacementApplied(origin: PlacementOrigin, hlcWallMs: number): void {
    for (const listener of this.listeners) listener.onPlacementApplied(origin, hlcWallMs);
  }
  onStorageCommit(seconds: number): void {
    for (const listener of this.listeners) listener.onStorageCommit(seconds);
  }
  onFailoverPhase(phase: FailoverPhase, seconds: number): void {
    for (const listener of this.listeners) listener.onFailoverPhase?.(phase, seconds);
  }
}

export interface NodeMetricsOptions {
  /** Also export prom-client's Node.js process metrics (with the actor_ts_ prefix). Default true. */
  readonly processMetrics?: boolean;
  /** Wall clock for propagation delays; injectable for tests. Default Date.now. */
  readonly now?: () => number;
}

/** One node's registry and metrics. Tests and the plugin use it; nothing here is global. */
export class NodeMetrics {
  readonly registry = new Registry();
  readonly events: MetricsEvents;

  constructor(source: MetricsSource, options: NodeMetricsOptions = {}) {
    const registers = [this.registry];
    const now = options.now ?? Date.now;
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: METRICS_PREFIX });

    new Gauge({
      name: `${METRICS_PREFIX}shards_hosted`,
      help: 'Shards this node hosts, per entity type.',
      labelNames: ['type'],
      registers,
      collect() {
        this.reset();
        for (const [type, count] of source.shardsHosted()) this.set({ type }, count);
      },
    });
    new Gauge({
      name: `${METRICS_PREFIX}placements`,
      help: 'Explicit placements in the placement store, per entity type and mode.',
      labelNames: ['type', 'mode'],
      registers,
      collect() {
        this.reset();
        for (const { type, mode, count } of source.placements()) this.inc({ type, mode }, count);
      },
    });
    new Gauge({
      name: `${METRICS_PREFIX}cluster_members`,
      help: 'Cluster members known to this node, per status.',
      labelNames: ['status'],
      registers,
      collect() {
        this.reset();
        for (const status of MEMBER_STATUSES) this.set({ status }, 0);
        for (const member of source.members()) this.inc({ status: member.status });
      },
    });
    new Gauge({
      name: `${METRICS_PREFIX}unreachable_members`,
      help: 'Members the cluster currently sees as unreachable (any live observer reports them; the gossiped table).',
      registers,
      collect() {
        let unreachable = 0;
        for (const member of source.members()) if (!member.reachable) unreachable += 1;
        this.set(unreachable);
      },
    });
    new Gauge({
      name: `${METRICS_PREFIX}placement_store_items`,
      help: "History items in this node's placement store document.",
      registers,
      collect() {
        this.set(source.placementStore().items);
      },
    });
    new Gauge({
      name: `${METRICS_PREFIX}placement_store_generation`,
      help: "Compaction generation of this node's placement store.",
      registers,
      collect() {
        this.set(source.placementStore().generation);
      },
    });

    const transport = source.transport?.bind(source);
    if (transport !== undefined) {
      new Gauge({
        name: `${METRICS_PREFIX}transport_connections`,
        help: 'Cluster transport connections not yet ended, per direction and state.',
        labelNames: ['state'],
        registers,
        collect() {
          const { connections } = transport();
          for (const state of TRANSPORT_CONNECTION_STATES) this.set({ state }, connections[state]);
        },
      });
      new Gauge({
        name: `${METRICS_PREFIX}transport_inbound_buffered_bytes`,
        help: 'Bytes of incomplete inbound frames the cluster transport holds (its shared inbound budget in use).',
        registers,
        collect() {
          this.set(transport().inboundBufferedBytes);
        },
      });
    }

    const handOffs = new Counter({
      name: `${METRICS_PREFIX}handoffs_total`,
      help: 'Completed shard hand-offs, per entity type.',
      labelNames: ['type'],
      registers,
    });
    const handOffDuration = new Histogram({
      name: `${METRICS_PREFIX}handoff_duration_seconds`,
      help: 'Time from the start of a hand-off to the shard stopped on its old node.',
      labelNames: ['type'],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    const rebalanceRounds = new Counter({
      name: `${METRICS_PREFIX}rebalance_rounds_total`,
      help: 'Rebalance rounds run by the coordinator on this node, per entity type.',
      labelNames: ['type'],
      registers,
    });
    const updates = new Counter({
      name: `${METRICS_PREFIX}placement_updates_total`,
      help: 'Placement updates applied by this node, per origin (local write or received from a peer).',
      labelNames: ['origin'],
      registers,
    });
    const propagation = new Histogram({
      name: `${METRICS_PREFIX}placement_propagation_seconds`,
      help: "Time from a remote placement write's HLC wall time to when this node applied it.",
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    // Registered only for durable stores: an always-empty histogram would suggest commits that never happen.
    const commits = source.durable
      ? new Histogram({
          name: `${METRICS_PREFIX}placement_storage_commit_seconds`,
          help: 'Latency of committing placement store updates to durable storage.',
          buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
          registers,
        })
      : undefined;
    const failoverPhases = new Histogram({
      name: `${METRICS_PREFIX}failover_phase_seconds`,
      help: "Per failover incident this node took part in, the time from the failed member's last sign of life here to each phase: detected, suspected-confirmed, decided, removed, re-homed, first-message.",
      labelNames: ['phase'],
      buckets: [0.25, 0.5, 1, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 60],
      registers,
    });
    // Both origins exist from the start so rate() over them works before the first update.
    updates.inc({ origin: 'local' }, 0);
    updates.inc({ origin: 'remote' }, 0);

    this.events = {
      onHandOffCompleted(type, seconds) {
        handOffs.inc({ type });
        handOffDuration.observe({ type }, Math.max(0, seconds));
      },
      onRebalanceRound(type) {
        rebalanceRounds.inc({ type });
      },
      onPlacementApplied(origin, hlcWallMs) {
        updates.inc({ origin });
        // A local write is applied where it was made: its delay is not propagation.
        if (origin === 'remote') propagation.observe(Math.max(0, now() - hlcWallMs) / 1000);
      },
      onStorageCommit(seconds) {
        commits?.observe(Math.max(0, seconds));
      },
      onFailoverPhase(phase, seconds) {
        failoverPhases.observe({ phase }, Math.max(0, seconds));
      },
    };
  }
}

export interface MetricsPluginOptions {
  readonly source: MetricsSource;
  /** The read-route guard of the management server (bearer check with --auth-reads); absent means open. */
  readonly guard?: (request: FastifyRequest) => Promise<void>;
  readonly metrics?: NodeMetricsOptions;
}

export const METRICS_PATH = '/metrics';

/** GET /metrics in Prometheus text format. Subscribes to the source's events for the server's lifetime. */
export const metricsPlugin: FastifyPluginAsync<MetricsPluginOptions> = async (app, options) => {
  const metrics = new NodeMetrics(options.source, options.metrics);
  const unsubscribe = options.source.subscribe(metrics.events);
  app.addHook('onClose', async () => {
    unsubscribe();
  });
  const guard = options.guard;
  app.get(METRICS_PATH, guard ? { onRequest: guard } : {}, async (_request, reply) => {
    const body = await metrics.registry.metrics();
    return reply.header('content-type', metrics.registry.contentType).header('cache-control', 'no-store').send(body);
  });
};
