// The audit trail of the management API: every write a node accepted (pin, unpin, cordon, uncordon, drain,
// rebalance), logged once as one structured line and kept in a ring of the last AUDIT_CAPACITY entries for
// `GET /actor-ts/audit`. Each node keeps its own: a write is audited where it was accepted.
import type { Hlc } from '../../crdt/index.js';
import type { Logger } from '../logging.js';

export const AUDIT_CAPACITY = 1_000;

export type AuditAction = 'pin' | 'unpin' | 'cordon' | 'uncordon' | 'drain' | 'rebalance';

/** One accepted write. */
export interface AuditEntry {
  readonly action: AuditAction;
  /** The entity type, or null for a write about a node (cordon, uncordon, drain). */
  readonly typeName: string | null;
  /** The shards written or moved, ascending (a drain's moves of every type; empty for a cordon). */
  readonly shardIds: readonly number[];
  /** The pin's target (targets joined by ", " when a bulk write named several), the node address, or null. */
  readonly target: string | null;
  readonly by: string | null;
  readonly reason: string | null;
  /** The store timestamp of the write; null for writes that do not write the store (rebalance, unpin). */
  readonly hlc: Hlc | null;
  /** When this node accepted it (ISO-8601). */
  readonly at: string;
}

export type AuditInput = Omit<AuditEntry, 'at' | 'by' | 'reason' | 'shardIds'> & {
  readonly shardIds?: readonly number[];
  readonly by?: string | null | undefined;
  readonly reason?: string | null | undefined;
};

export class AuditLog {
  private readonly ring: AuditEntry[] = [];
  private next = 0;

  constructor(
    private readonly logger?: Logger,
    private readonly capacity = AUDIT_CAPACITY,
    private readonly now: () => number = Date.now,
  ) {
    if (!Number.isSafeInteger(capacity) || capacity < 1)
      throw new RangeError(`audit capacity must be a positive integer, got ${capacity}`);
  }

  /** Records an accepted write; call it once, after the write was applied. */
  record(input: AuditInput): AuditEntry {
    const entry: AuditEntry = {
      action: input.action,
      typeName: input.typeName,
      shardIds: [...(input.shardIds ?? [])].sort((a, b) => a - b),
      target: input.target,
      by: input.by ?? null,
      reason: input.reason ?? null,
      hlc: input.hlc,
      at: new Date(this.now()).toISOString(),
    };
    if (this.ring.length < this.capacity) this.ring.push(entry);
    else this.ring[this.next] = entry;
    this.next = (this.next + 1) % this.capacity;
    this.logger?.info({ audit: true, ...entry }, `audit: ${entry.action}`);
    return entry;
  }

  /** The kept entries, newest first. */
  entries(): AuditEntry[] {
    const oldestFirst =
      this.ring.length < this.capacity ? this.ring : [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
    return [...oldestFirst].reverse();
  }
}

/** The distinct targets of a bulk write, as the audit line names them. */
export function targetsText(targets: Iterable<string>): string | null {
  const distinct = [...new Set(targets)];
  return distinct.length === 0 ? null : distinct.join(', ');
}

/** The one author (or reason) of a bulk write's entries, or the distinct ones joined when they differ. */
export function commonText(values: Iterable<string | null | undefined>): string | null {
  const distinct = [...new Set([...values].filter((value): value is string => typeof value === 'string'))];
  return distinct.length === 0 ? null : distinct.join(', ');
}
