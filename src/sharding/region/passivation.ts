// Which entities of one type this node keeps active, and which it passivates: one list in least-recently-used
// order (a touch moves an entry to the end, O(1)) serves both the active-entity limit (evict the first) and idle
// passivation (one sweep timer per region walks from the oldest and stops at the first entity still fresh), so
// a million entities cost no timer each. The order is a linked list, not a Map's insertion order: a Map keeps
// the holes of deleted entries until it rehashes, so finding its first live key after many evictions walks
// them all (that walk was half of the cost of an ask at the limit).
import type { Cancellable, Scheduler } from '../../cluster/scheduler.js';
import type { PassivationReason, PassivationSettings } from '../core/passivation.js';

/** What the tracker needs of a shard: to stop one of its entities (a no-op if it is not active there any more). */
export interface PassivatingShard {
  passivate(entityId: string, reason: PassivationReason): void;
}

interface Active {
  readonly entity: object;
  readonly shard: PassivatingShard;
  readonly entityId: string;
  /** Scheduler time of the entity's last message. */
  touchedAt: number;
  /** Neighbours in least-recently-used order (undefined at the ends). */
  older: Active | undefined;
  newer: Active | undefined;
}

/** Counts of passivations by reason, since the region started. */
export type PassivationCounts = Readonly<Record<PassivationReason, number>>;

export class PassivationTracker {
  /** Keyed by the entity object, not its id: a later incarnation is a new key. */
  private readonly active = new Map<object, Active>();
  /** The least and the most recently touched entry. */
  private oldest: Active | undefined;
  private newest: Active | undefined;
  private sweep: Cancellable | undefined;
  private readonly counts: Record<PassivationReason, number> = { idle: 0, limit: 0, self: 0 };

  constructor(
    private readonly settings: PassivationSettings,
    private readonly scheduler: Scheduler,
  ) {}

  /** Whether either kind of passivation is on; without it, shards need not report touches at all. */
  get enabled(): boolean {
    return this.settings.idleMs !== undefined || this.settings.maxActiveEntities !== undefined;
  }

  get passivated(): PassivationCounts {
    return { ...this.counts };
  }

  /** The entity received a message (or was created for one): it becomes the most recently used. */
  touch(entity: object, shard: PassivatingShard, entityId: string): void {
    if (!this.enabled) return;
    const now = this.scheduler.now();
    const known = this.active.get(entity);
    if (known !== undefined) {
      known.touchedAt = now;
      this.unlink(known);
      this.append(known);
      return;
    }
    const added: Active = { entity, shard, entityId, touchedAt: now, older: undefined, newer: undefined };
    this.active.set(entity, added);
    this.append(added);
    this.startSweep();
    const limit = this.settings.maxActiveEntities;
    if (limit !== undefined && this.active.size > limit) this.evictOldest(added);
  }

  /** The entity stopped (passivated, or its shard stopped): it no longer counts as active. */
  remove(entity: object): void {
    const known = this.active.get(entity);
    if (known === undefined) return;
    this.active.delete(entity);
    this.unlink(known);
  }

  /** A shard passivated one of its entities for `reason`. */
  count(reason: PassivationReason): void {
    this.counts[reason]++;
  }

  /** Stops the sweep timer (the region stops). */
  close(): void {
    this.sweep?.cancel();
    this.sweep = undefined;
  }

  private evictOldest(except: Active): void {
    const victim = this.oldest === except ? except.newer : this.oldest;
    if (victim === undefined) return;
    this.remove(victim.entity);
    victim.shard.passivate(victim.entityId, 'limit');
  }

  private append(entry: Active): void {
    entry.older = this.newest;
    entry.newer = undefined;
    if (this.newest === undefined) this.oldest = entry;
    else this.newest.newer = entry;
    this.newest = entry;
  }

  private unlink(entry: Active): void {
    if (entry.older === undefined) this.oldest = entry.newer;
    else entry.older.newer = entry.newer;
    if (entry.newer === undefined) this.newest = entry.older;
    else entry.newer.older = entry.older;
    entry.older = undefined;
    entry.newer = undefined;
  }

  private startSweep(): void {
    const idleMs = this.settings.idleMs;
    if (idleMs === undefined || this.sweep !== undefined) return;
    // Half the timeout: an idle entity stops between idleMs and 1.5 x idleMs after its last message.
    this.sweep = this.scheduler.setInterval(() => this.sweepIdle(idleMs), Math.max(1, Math.floor(idleMs / 2)));
  }

  private sweepIdle(idleMs: number): void {
    const cutoff = this.scheduler.now() - idleMs;
    const idle: Active[] = [];
    while (this.oldest !== undefined && this.oldest.touchedAt <= cutoff) {
      idle.push(this.oldest);
      this.remove(this.oldest.entity);
    }
    for (const active of idle) active.shard.passivate(active.entityId, 'idle');
    // Nothing left to watch: no timer keeps running for an empty region.
    if (this.active.size === 0) this.close();
  }
}
