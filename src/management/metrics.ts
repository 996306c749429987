// Prometheus metrics of one node at GET /metrics: a Fastify plugin over a per-node prom-client Registry, fed by a
// MetricsSource that the node wiring implements. Gauges read the source at scrape time; counters and histograms
// move on the events the source reports through `subscribe`.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { MEMBER_STATUSES } from '../cluster/member.js';
import { registerSafetyMetrics, type AccessRefusals, type SafetySource, type WriteRefusals } from './safety-metrics.js';
import { readAtScrape } from './scrape.js';
import { registerEntityMetrics } from './entity-metrics.js';
import { registerEntityStoreMetrics, type EntityStoreFigures } from './entity-store-metrics.js';
import { registerTransportMetrics, type TransportFigures } from './transport-metrics.js';
import { registerEventMetrics, type MetricsEvents } from './event-metrics.js';

export { MetricsEventHub, type MetricsEvents, type PlacementOrigin } from './event-metrics.js';

export { TRANSPORT_CONNECTION_STATES, TRANSPORT_REFUSAL_REASONS, type TransportFigures } from './transport-metrics.js';

export const METRICS_PREFIX = 'actor_ts_';

/** Member statuses always exported (as 0 when no member has them) so series do not appear and vanish. */

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
  /** Entity state bytes this node's regions received for shards not started here yet. */
  readonly stateBytesWaiting: number;
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
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: METRICS_PREFIX });
    registerClusterGauges(source, registers);
    registerDeliveryMetrics(source, registers);
    const counted = registerEventMetrics(registers, METRICS_PREFIX, {
      durable: source.durable,
      now: options.now ?? Date.now,
    });
    this.events = counted.events;
    this.prime = () => {
      for (const [type] of source.shardsHosted()) counted.ensure(type);
    };
    this.close = registerSafetyMetrics(this.registry, METRICS_PREFIX, source.safety, options);
  }
}

/** Gauges of what this node hosts and knows, read from the source at every scrape. */
function registerClusterGauges(source: MetricsSource, registers: Registry[]): void {
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
}

/** Per entity type, a figure the sharding runtime keeps, exported as a counter (a total) or a gauge (a level). */
const DELIVERY_SERIES: ReadonlyArray<
  readonly [kind: 'counter' | 'gauge', name: string, help: string, pick: (f: DeliveryFigures) => number]
> = [
  [
    'counter',
    'messages_redelivered_total',
    'Copies of reliable sends this node routed again (retries), per entity type.',
    (f) => f.redelivered,
  ],
  [
    'counter',
    'messages_deduplicated_total',
    'Retried copies of sends this node recognised as already running or processed, per entity type.',
    (f) => f.deduplicated,
  ],
  [
    'counter',
    'handoff_state_bytes_total',
    'Entity state bytes this node shipped with graceful hand-offs, per entity type.',
    (f) => f.stateBytesShipped,
  ],
  [
    'gauge',
    'handoff_state_bytes',
    "Entity state bytes this node's coordinator holds for shards between their old and new home, per entity type.",
    (f) => f.stateBytesHeld,
  ],
  [
    'gauge',
    'handoff_state_retained_bytes',
    "Entity state bytes this node keeps from its shards' stops until their new homes started them, per entity type.",
    (f) => f.stateBytesRetained,
  ],
  [
    'gauge',
    'handoff_state_waiting_bytes',
    'Entity state bytes this node received for shards not started here yet, per entity type.',
    (f) => f.stateBytesWaiting,
  ],
];

/** Totals and gauges kept by the sharding runtime (delivery, hand-off state, entities), read at scrape. */
function registerDeliveryMetrics(source: MetricsSource, registers: Registry[]): void {
  const figures = (): Iterable<DeliveryFigures> => source.delivery?.() ?? [];
  // Totals read at scrape count from the node's start.
  for (const [kind, name, help, pick] of DELIVERY_SERIES) {
    const Metric = kind === 'counter' ? Counter : Gauge;
    new Metric({
      name: `${METRICS_PREFIX}${name}`,
      help,
      labelNames: ['type'],
      registers,
      collect() {
        this.reset();
        for (const f of figures()) this.inc({ type: f.type }, pick(f));
      },
    });
  }
  registerEntityMetrics(figures, registers, METRICS_PREFIX);
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
