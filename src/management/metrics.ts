// Prometheus metrics of one node at GET /metrics: a Fastify plugin over a per-node prom-client Registry, fed by a
// MetricsSource that the node wiring implements. Gauges read the source at scrape time; counters and histograms
// move on the events the source reports through `subscribe`.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { MEMBER_STATUSES, type FailoverPhase } from '../cluster/member.js';
import { registerSafetyMetrics, type AccessRefusals, type SafetySource, type WriteRefusals } from './safety-metrics.js';
import { readAtScrape } from './scrape.js';
import { registerEntityMetrics } from './entity-metrics.js';
import { registerEntityStoreMetrics, type EntityStoreFigures } from './entity-store-metrics.js';
import { registerTransportMetrics, type TransportFigures } from './transport-metrics.js';

export { TRANSPORT_CONNECTION_STATES, TRANSPORT_REFUSAL_REASONS, type TransportFigures } from './transport-metrics.js';

export const METRICS_PREFIX = 'actor_ts_';

/** Where an applied placement update came from: written on this node, or received from a peer. */
export type PlacementOrigin = 'local' | 'remote';

/** Member statuses always exported (as 0 when no member has them) so series do not appear and vanish. */

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
  /** A reliable send of `type` passed its deadline; `delivered`: a copy had left this node (outcome unknown). */
  onSendTimeout(type: string, delivered: boolean): void;
  /** `count` entities' states of `type` met `outcome` at a hand-off (shipped, restored, too_large, failed, lost). */
  onEntitySnapshots(type: string, outcome: string, count: number): void;
  /**
   * A failover incident reached `phase` on this node, `seconds` after the failed member's last sign of life
   * here (failover-timeline.ts). Optional for sources that do not follow failovers.
   */
  onFailoverPhase?(phase: FailoverPhase, seconds: number): void;
}

/** Per entity type, the reliable-delivery and state-transfer totals of this node (read at scrape). */
export interface DeliveryFigures {
  readonly type: string;
  readonly redelivered: number;
  readonly deduplicated: number;
  /** Entity state bytes this node's regions shipped with hand-offs, since the start. */
  readonly stateBytesShipped: number;
  /** Entity state bytes this node's coordinator holds now for shards between two homes. */
  readonly stateBytesHeld: number;
  /** Entity state bytes this node's regions keep from their shards' stops until the new homes started them. */
  readonly stateBytesRetained: number;
  /** Entities of the type active (started, not stopped) on this node now. */
  readonly entitiesActive?: number;
  /** Entities of the type this node passivated since the start, by reason (idle, limit, self). */
  readonly entitiesPassivated?: Readonly<Record<string, number>>;
  /** Messages of the type its schema refused on this node since the start (issue 37). */
  readonly messagesInvalid?: number;
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
  /** Reliable delivery and state transfer per entity type; absent: those series stay empty. */
  delivery?(): Iterable<DeliveryFigures>;
  /** True when placements are durable: only then is the storage commit histogram exported. */
  readonly durable: boolean;
  /** Starts delivering events to `events`; returns the function that stops it (called when the server closes). */
  subscribe(events: MetricsEvents): () => void;
  /** Shards waiting, cordons, replication lag, storage failure (safety-metrics.ts); absent: not exported. */
  readonly safety?: SafetySource;
  /** The node's durable entity store (entity-store-metrics.ts); absent: those series are not exported. */
  readonly entityStore?: EntityStoreFigures;
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
  onSendTimeout(type: string, delivered: boolean): void {
    for (const listener of this.listeners) listener.onSendTimeout(type, delivered);
  }
  onEntitySnapshots(type: string, outcome: string, count: number): void {
    for (const listener of this.listeners) listener.onEntitySnapshots(type, outcome, count);
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
  /** Write requests the API refused, counted per code. */
  readonly refusals?: WriteRefusals;
  /** Requests refused for want of a token or scope (actor_ts_http_requests_refused_total). */
  readonly access?: AccessRefusals;
}

/** One node's registry and metrics. Tests and the plugin use it; nothing here is global. */
export class NodeMetrics {
  readonly registry = new Registry();
  readonly events: MetricsEvents;
  /** Gives every per-type series of every type the source knows a 0 sample; called before each scrape. */
  readonly prime: () => void;
  /** Stops following the refusals. */
  readonly close: () => void;

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
    const gauge = (name: string, help: string, read: () => number): void =>
      void new Gauge({ name: `${METRICS_PREFIX}${name}`, help, registers, collect: readAtScrape(read) });
    const store = (): { readonly items: number; readonly generation: number } => source.placementStore();
    gauge('placement_store_items', "History items in this node's placement store document.", () => store().items);
    gauge(
      'placement_store_generation',
      "Compaction generation of this node's placement store.",
      () => store().generation,
    );
    const transport = source.transport?.bind(source);
    if (transport !== undefined) registerTransportMetrics(transport, registers, METRICS_PREFIX);

    // Totals kept by the sharding runtime, read at scrape (so they count from the node's start).
    const deliveryTotal = (name: string, help: string, pick: (figures: DeliveryFigures) => number): void => {
      new Counter({
        name: `${METRICS_PREFIX}${name}`,
        help,
        labelNames: ['type'],
        registers,
        collect() {
          this.reset();
          for (const figures of source.delivery?.() ?? []) this.inc({ type: figures.type }, pick(figures));
        },
      });
    };
    deliveryTotal(
      'messages_redelivered_total',
      'Copies of reliable sends this node routed again (retries), per entity type.',
      (f) => f.redelivered,
    );
    deliveryTotal(
      'messages_deduplicated_total',
      'Retried copies of sends this node recognised as already running or processed, per entity type.',
      (f) => f.deduplicated,
    );
    deliveryTotal(
      'handoff_state_bytes_total',
      'Entity state bytes this node shipped with graceful hand-offs, per entity type.',
      (f) => f.stateBytesShipped,
    );
    new Gauge({
      name: `${METRICS_PREFIX}handoff_state_bytes`,
      help: "Entity state bytes this node's coordinator holds for shards between their old and new home, per entity type.",
      labelNames: ['type'],
      registers,
      collect() {
        this.reset();
        for (const figures of source.delivery?.() ?? []) this.set({ type: figures.type }, figures.stateBytesHeld);
      },
    });
    new Gauge({
      name: `${METRICS_PREFIX}handoff_state_retained_bytes`,
      help: "Entity state bytes this node keeps from its shards' stops until their new homes started them, per entity type.",
      labelNames: ['type'],
      registers,
      collect() {
        this.reset();
        for (const figures of source.delivery?.() ?? []) this.set({ type: figures.type }, figures.stateBytesRetained);
      },
    });
    registerEntityMetrics(() => source.delivery?.() ?? [], registers, METRICS_PREFIX);
    // Counted by the events below, each declared the same way.
    const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L> =>
      new Counter({ name: `${METRICS_PREFIX}${name}`, help, labelNames, registers });
    const sendTimeouts = counter(
      'send_timeouts_total',
      'Reliable sends past their deadline, per entity type and whether a copy had left this node (delivered: outcome unknown).',
      ['type', 'delivered'],
    );
    const snapshots = counter(
      'entity_snapshots_total',
      'Entity states at graceful hand-offs, per entity type and outcome (shipped, restored, too_large, failed, lost).',
      ['type', 'outcome'],
    );
    const handOffs = counter('handoffs_total', 'Completed shard hand-offs, per entity type.', ['type']);
    const handOffDuration = new Histogram({
      name: `${METRICS_PREFIX}handoff_duration_seconds`,
      help: 'Time from the start of a hand-off to the shard stopped on its old node.',
      labelNames: ['type'],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    const rebalanceRounds = counter(
      'rebalance_rounds_total',
      'Rebalance rounds run by the coordinator on this node, per entity type.',
      ['type'],
    );
    const updates = counter(
      'placement_updates_total',
      'Placement updates applied by this node, per origin (local write or received from a peer).',
      ['origin'],
    );
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
    // Per type likewise: "no hand-offs yet" must read 0, not as a series that is not there.
    // Once per type, before its first event or scrape: zero() of a histogram resets what it observed.
    const primed = new Set<string>();
    const ensure = (type: string): void => {
      if (primed.has(type)) return;
      primed.add(type);
      handOffs.inc({ type }, 0);
      rebalanceRounds.inc({ type }, 0);
      handOffDuration.zero({ type });
    };
    this.prime = () => {
      for (const [type] of source.shardsHosted()) ensure(type);
    };
    this.close = registerSafetyMetrics(this.registry, METRICS_PREFIX, source.safety, options);

    this.events = {
      onHandOffCompleted(type, seconds) {
        ensure(type);
        handOffs.inc({ type });
        handOffDuration.observe({ type }, Math.max(0, seconds));
      },
      onRebalanceRound(type) {
        ensure(type);
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
      onSendTimeout(type, delivered) {
        sendTimeouts.inc({ type, delivered: String(delivered) });
      },
      onEntitySnapshots(type, outcome, count) {
        snapshots.inc({ type, outcome }, count);
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
  const { entityStore } = options.source;
  const stopStore = entityStore && registerEntityStoreMetrics(entityStore, [metrics.registry], METRICS_PREFIX);
  app.addHook('onClose', async () => {
    unsubscribe();
    stopStore?.();
    metrics.close();
  });
  const guard = options.guard;
  app.get(METRICS_PATH, guard ? { onRequest: guard } : {}, async (_request, reply) => {
    metrics.prime();
    const body = await metrics.registry.metrics();
    return reply.header('content-type', metrics.registry.contentType).header('cache-control', 'no-store').send(body);
  });
};
