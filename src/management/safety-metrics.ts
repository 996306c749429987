// The metrics an operator alerts on when something is wrong rather than merely busy: shards waiting without
// a home, cordoned members, replication lag, rejected frames and held values, failed storage, and writes
// the API refused, by code. Every series exists from the first scrape (0 for every known label value), so
// a dashboard tells "nothing happened" from "not scraped".
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, type Registry } from 'prom-client';
import { readAtScrape } from './scrape.js';
import { SCOPES } from './tokens-file.js';

/** What the safety metrics read at every scrape. */
export interface SafetySource {
  /** Per entity type whose coordinator runs on this node: shards the strategy has no home for now. */
  shardsWaiting(): Iterable<readonly [type: string, count: number]>;
  /** Members under a cordon (they take no new shards). */
  cordonedMembers(): number;
  readonly replication: () => {
    readonly peersBehind: number;
    /** Seconds the oldest own write has waited for some peer; null when every peer holds them all. */
    readonly oldestUnreplicatedSeconds: number | null;
    readonly framesRejected: number;
    readonly heldValues: number;
  };
  readonly storage: () => { readonly failed: boolean; readonly failedCommits: number };
  /** This node's clock against its peers' median in seconds (positive: ahead); null before any measurement. */
  readonly clockOffsetSeconds?: () => number | null;
}

/** Error codes a placement write can be refused with; each has a series from the start. */
export const REFUSED_WRITE_CODES = [
  'storage_unavailable',
  'unknown_target',
  'not_a_member',
  'no_majority',
  'paused',
  'clock_skew',
  'shutting_down',
  'unauthorized',
  'forbidden',
  'invalid_request',
  'invalid_target',
  'invalid_placement',
  'invalid_shard',
  'not_allocated',
  'payload_too_large',
  'hlc_out_of_range',
  'timeout',
] as const;

/** Fed by the server with the code of every refused write request; the metrics plugin counts them. */
export class WriteRefusals {
  private readonly listeners = new Set<(code: string) => void>();

  record(code: string): void {
    for (const listener of this.listeners) listener(code);
  }

  subscribe(listener: (code: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** Answers of write routes under `prefix` with an error status are recorded by their `error` code. */
export function countRefusedWrites(app: FastifyInstance, prefix: string, refusals: WriteRefusals): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if (
      request.method === 'GET' ||
      request.method === 'HEAD' ||
      reply.statusCode < 400 ||
      !request.url.startsWith(prefix)
    )
      return payload;
    refusals.record(typeof payload === 'string' ? codeIn(payload) : 'unknown');
    return payload;
  });
}

function codeIn(payload: string): string {
  try {
    const code: unknown = (JSON.parse(payload) as { error?: unknown }).error;
    // Codes are the server's own snake_case words; anything else is not a label value.
    return typeof code === 'string' && /^[a-z_]{1,40}$/.test(code) ? code : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Requests the management API refused for want of a token or a scope, as the access control counts them. */
export interface AccessRefusals {
  refusals(): ReadonlyArray<{ readonly scope: string; readonly reason: string; readonly count: number }>;
}

/**
 * `actor_ts_http_requests_refused_total{scope, reason}`: requests refused 401 (`unauthorized`: no known token) or
 * 403 (`forbidden`: a token without the scope), by the scope the route needed; every pair has a series from the start.
 */
function registerAccessMetrics(registry: Registry, prefix: string, access: AccessRefusals): void {
  new Counter({
    name: `${prefix}http_requests_refused_total`,
    help: 'Management API requests refused for want of a known token (unauthorized) or of the scope the route needs (forbidden).',
    labelNames: ['scope', 'reason'],
    registers: [registry],
    collect() {
      this.reset();
      for (const scope of SCOPES) for (const reason of ['unauthorized', 'forbidden']) this.inc({ scope, reason }, 0);
      for (const { scope, reason, count } of access.refusals()) this.inc({ scope, reason }, count);
    },
  });
}

/** Registers the safety metrics on `registry`; returns what stops following the refusals. */
export function registerSafetyMetrics(
  registry: Registry,
  prefix: string,
  source: SafetySource | undefined,
  counted: { readonly refusals?: WriteRefusals; readonly access?: AccessRefusals },
): () => void {
  const { refusals, access } = counted;
  if (access !== undefined) registerAccessMetrics(registry, prefix, access);
  const registers = [registry];
  const gauge = (name: string, help: string, read: () => number): void =>
    void new Gauge({ name: `${prefix}${name}`, help, registers, collect: readAtScrape(read) });
  // A total the source keeps: set at each scrape (it only grows while the process lives).
  const total = (name: string, help: string, read: () => number): void =>
    void new Counter({ name: `${prefix}${name}`, help, registers, collect: readAtScrape(read) });
  if (source !== undefined) {
    new Gauge({
      name: `${prefix}shards_waiting`,
      help: 'Shards the coordinator on this node has no home for now (a require pin no member satisfies), per entity type.',
      labelNames: ['type'],
      registers,
      collect() {
        this.reset();
        for (const [type, count] of source.shardsWaiting()) this.set({ type }, count);
      },
    });
    gauge('cordoned_members', 'Members under a cordon: they take no new shards.', () => source.cordonedMembers());
    const offset = source.clockOffsetSeconds;
    if (offset !== undefined) {
      new Gauge({
        name: `${prefix}clock_offset_seconds`,
        help: "This node's wall clock minus the median of its peers' (measured on heartbeats); beyond maxClockOffsetMs it refuses writes with clock_skew.",
        registers,
        collect() {
          this.reset();
          const seconds = offset();
          if (seconds !== null) this.set(seconds);
        },
      });
    }
    gauge(
      'replication_peers_behind',
      'Peers whose placements this replica has not integrated yet.',
      () => source.replication().peersBehind,
    );
    gauge(
      'replication_oldest_unreplicated_seconds',
      "Age of this node's oldest placement write that some peer has not shown to hold (0 when all hold all).",
      () => source.replication().oldestUnreplicatedSeconds ?? 0,
    );
    total(
      'replication_frames_rejected_total',
      'Placement sync frames from peers that were rejected (malformed or over the limit).',
      () => source.replication().framesRejected,
    );
    gauge(
      'placement_values_held',
      "Placement values kept but not counted until this node's clock catches up with them.",
      () => source.replication().heldValues,
    );
    gauge(
      'placement_storage_failed',
      '1 when placement storage failed (a commit failed, or the data files were deleted or replaced): writes are refused.',
      () => (source.storage().failed ? 1 : 0),
    );
    total(
      'placement_storage_failed_commits_total',
      'Placement storage commits that failed.',
      () => source.storage().failedCommits,
    );
  }
  const refused = new Counter({
    name: `${prefix}placement_writes_refused_total`,
    help: 'Write requests to the management API answered with an error, per error code.',
    labelNames: ['code'],
    registers,
  });
  for (const code of REFUSED_WRITE_CODES) refused.inc({ code }, 0);
  return refusals?.subscribe((code) => refused.inc({ code })) ?? (() => undefined);
}
