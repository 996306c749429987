// One node's account of each failover incident (issue 26): when a member went silent, then when this node saw
// each phase of its failover (detected, suspected-confirmed, decided, removed, re-homed, first-message), each
// as seconds since the member's last sign of life here, on the monotonic clock. One log line per phase and
// incident, and a listener per phase for the metrics (actor_ts_failover_phase_seconds{phase}). A node records
// the phases it takes part in: its detectors, the leader's decision, the coordinator's removal and re-homing.
import { performance } from 'node:perf_hooks';
import { silentLogger, type Logger } from '../../logging.js';
import type { FailoverPhase } from '../member.js';

export { FAILOVER_PHASES, type FailoverPhase } from '../member.js';

/** Incidents are forgotten this long after they opened (a failover that takes longer is long finished or stuck). */
export const INCIDENT_RETENTION_MS = 300_000;
/** Most incidents kept at once; the oldest goes first. */
export const MAX_INCIDENTS = 256;

export type FailoverPhaseListener = (phase: FailoverPhase, seconds: number, member: string) => void;

interface Incident {
  readonly anchorMs: number;
  readonly seen: Map<FailoverPhase, number>;
}

export class FailoverTimeline {
  private readonly incidents = new Map<string, Incident>();
  private readonly listeners = new Set<FailoverPhaseListener>();
  private readonly now: () => number;
  private readonly logger: Logger;

  constructor(options: { readonly now?: () => number; readonly logger?: Logger } = {}) {
    this.now = options.now ?? (() => performance.now());
    this.logger = options.logger ?? silentLogger();
  }

  /** Calls `listener` for every phase recorded from now on; returns the unsubscribe function. */
  onPhase(listener: FailoverPhaseListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** `member` (an address) went silent `silentForMs` ago: opens its incident unless one is open. */
  open(member: string, silentForMs = 0): void {
    const now = this.now();
    for (const [key, incident] of this.incidents)
      if (now - incident.anchorMs > INCIDENT_RETENTION_MS) this.incidents.delete(key);
    if (this.incidents.has(member)) return;
    if (this.incidents.size >= MAX_INCIDENTS) {
      const oldest = this.incidents.keys().next().value;
      if (oldest !== undefined) this.incidents.delete(oldest);
    }
    this.incidents.set(member, { anchorMs: now - Math.max(0, silentForMs), seen: new Map() });
  }

  /** The incident of `member` reached `phase` (once per incident; a member with no open incident is ignored). */
  reached(member: string, phase: FailoverPhase): void {
    const incident = this.incidents.get(member);
    if (incident === undefined || incident.seen.has(phase)) return;
    const seconds = Math.max(0, this.now() - incident.anchorMs) / 1000;
    incident.seen.set(phase, seconds);
    this.logger.info(
      { member, phase, seconds: Math.round(seconds * 1000) / 1000, phases: Object.fromEntries(incident.seen) },
      'failover phase',
    );
    for (const listener of this.listeners) listener(phase, seconds, member);
  }

  /** `member` is back (Up and reachable: recovered, or a new process at its address): its incident is over. */
  close(member: string): void {
    this.incidents.delete(member);
  }

  /** Whether `member` has an open incident. */
  isOpen(member: string): boolean {
    return this.incidents.has(member);
  }
}
