// Entity metrics per type, read at scrape from the sharding runtime's region stats (issue 37):
// actor_ts_entities_active{type}, actor_ts_entities_passivated_total{type,reason} and
// actor_ts_messages_invalid_total{type}.
import { Counter, Gauge, type Registry } from 'prom-client';

/** One entity type's figures (MetricsSource's DeliveryFigures has these fields). */
export interface EntityFigures {
  readonly type: string;
  readonly entitiesActive?: number;
  readonly entitiesPassivated?: Readonly<Record<string, number>>;
  readonly messagesInvalid?: number;
}

/** Registers both series on `registers`; `read` is called at every scrape. */
export function registerEntityMetrics(
  read: () => Iterable<EntityFigures>,
  registers: Registry[],
  prefix: string,
): void {
  new Gauge({
    name: `${prefix}entities_active`,
    help: 'Entities active (started, not passivated or stopped) on this node, per entity type.',
    labelNames: ['type'],
    registers,
    collect() {
      this.reset();
      for (const figures of read()) this.set({ type: figures.type }, figures.entitiesActive ?? 0);
    },
  });
  new Counter({
    name: `${prefix}entities_passivated_total`,
    help: 'Entities this node passivated, per entity type and reason (idle, limit, self).',
    labelNames: ['type', 'reason'],
    registers,
    collect() {
      this.reset();
      for (const { type, entitiesPassivated = {} } of read())
        for (const [reason, count] of Object.entries(entitiesPassivated)) this.inc({ type, reason }, count);
    },
  });
  new Counter({
    name: `${prefix}messages_invalid_total`,
    help: "Messages an entity type's schema refused on this node (an ask or send answered invalid_message, a tell dropped).",
    labelNames: ['type'],
    registers,
    collect() {
      this.reset();
      for (const { type, messagesInvalid = 0 } of read()) this.inc({ type }, messagesInvalid);
    },
  });
}
