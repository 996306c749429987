// The metrics the node's events move (hand-offs, rebalance rounds, placement updates and their propagation,
// storage commits, send timeouts, entity snapshots, failover phases): the events' contract, the hub the wiring
// calls, and the counters and histograms each event feeds. Gauges read at scrape time are metrics.ts's.
import { Counter, Histogram, type Registry } from 'prom-client';
import type { FailoverPhase } from '../cluster/member.js';

/** Where an applied placement update came from: written on this node, or received from a peer. */
export type PlacementOrigin = 'local' | 'remote';

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

/** What the event metrics need beside their registry: whether placements are durable, and the wall clock. */
export interface EventMetricsOptions {
  /** Whether placements are durable: only then is the storage commit histogram exported. */
  readonly durable: boolean;
  /** Wall clock for propagation delays. */
  readonly now: () => number;
}

/** The counters and histograms the events move, registered once per node. */
function eventSeries(registers: Registry[], prefix: string, durable: boolean) {
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L> =>
    new Counter({ name: `${prefix}${name}`, help, labelNames, registers });
  const histogram = <L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]) =>
    new Histogram<L>({ name: `${prefix}${name}`, help, labelNames, buckets, registers });
  return {
    sendTimeouts: counter(
      'send_timeouts_total',
      'Reliable sends past their deadline, per entity type and whether a copy had left this node (delivered: outcome unknown).',
      ['type', 'delivered'],
    ),
    snapshots: counter(
      'entity_snapshots_total',
      'Entity states at graceful hand-offs, per entity type and outcome (shipped, restored, too_large, failed, lost).',
      ['type', 'outcome'],
    ),
    handOffs: counter('handoffs_total', 'Completed shard hand-offs, per entity type.', ['type']),
    handOffDuration: histogram(
      'handoff_duration_seconds',
      'Time from the start of a hand-off to the shard stopped on its old node.',
      ['type'],
      [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    ),
    rebalanceRounds: counter(
      'rebalance_rounds_total',
      'Rebalance rounds run by the coordinator on this node, per entity type.',
      ['type'],
    ),
    updates: counter(
      'placement_updates_total',
      'Placement updates applied by this node, per origin (local write or received from a peer).',
      ['origin'],
    ),
    propagation: histogram(
      'placement_propagation_seconds',
      "Time from a remote placement write's HLC wall time to when this node applied it.",
      [],
      [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    ),
    // Only a durable store gets the commit histogram: an always-empty one would suggest commits that never happen.
    commits: durable
      ? histogram(
          'placement_storage_commit_seconds',
          'Latency of committing placement store updates to durable storage.',
          [],
          [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
        )
      : undefined,
    failoverPhases: histogram(
      'failover_phase_seconds',
      "Per failover incident this node took part in, the time from the failed member's last sign of life here to each phase: detected, suspected-confirmed, decided, removed, re-homed, first-message.",
      ['phase'],
      [0.25, 0.5, 1, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 60],
    ),
  };
}

/**
 * Registers the event-fed metrics; returns the events that move them and `ensure`, which gives a type's series
 * their 0 sample (once per type, before its first event or scrape: zero() of a histogram resets what it observed).
 */
export function registerEventMetrics(
  registers: Registry[],
  prefix: string,
  options: EventMetricsOptions,
): { readonly events: MetricsEvents; readonly ensure: (type: string) => void } {
  const m = eventSeries(registers, prefix, options.durable);
  // Both origins exist from the start so rate() over them works before the first update.
  m.updates.inc({ origin: 'local' }, 0);
  m.updates.inc({ origin: 'remote' }, 0);
  // Per type likewise: "no hand-offs yet" must read 0, not as a series that is not there.
  const primed = new Set<string>();
  const ensure = (type: string): void => {
    if (primed.has(type)) return;
    primed.add(type);
    m.handOffs.inc({ type }, 0);
    m.rebalanceRounds.inc({ type }, 0);
    m.handOffDuration.zero({ type });
  };
  const events: MetricsEvents = {
    onHandOffCompleted(type, seconds) {
      ensure(type);
      m.handOffs.inc({ type });
      m.handOffDuration.observe({ type }, Math.max(0, seconds));
    },
    onRebalanceRound(type) {
      ensure(type);
      m.rebalanceRounds.inc({ type });
    },
    onPlacementApplied(origin, hlcWallMs) {
      m.updates.inc({ origin });
      // A local write is applied where it was made: its delay is not propagation.
      if (origin === 'remote') m.propagation.observe(Math.max(0, options.now() - hlcWallMs) / 1000);
    },
    onStorageCommit(seconds) {
      m.commits?.observe(Math.max(0, seconds));
    },
    onSendTimeout(type, delivered) {
      m.sendTimeouts.inc({ type, delivered: String(delivered) });
    },
    onEntitySnapshots(type, outcome, count) {
      m.snapshots.inc({ type, outcome }, count);
    },
    onFailoverPhase(phase, seconds) {
      m.failoverPhases.observe({ phase }, Math.max(0, seconds));
    },
  };
  return { events, ensure };
}
