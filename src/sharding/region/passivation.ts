// Which entities of one type this node keeps active, and which it passivates: one Map in least-recently-used
// order (a touch is delete + set, O(1)) serves both the active-entity limit (evict the first key) and idle
// passivation (one sweep timer per region walks from the oldest and stops at the first entity still fresh), so
// a million entities cost no timer each.
import type { Cancellable, Scheduler } from '../../cluster/scheduler.js';
import type { PassivationReason, PassivationSettings } from '../core/passivation.js';

/** What the tracker needs of a shard: to stop one of its entities (a no-op if it is not active there any more). */
export interface PassivatingShard {
  passivate(entityId: string, reason: PassivationReason): void;
}

interface Active {
  readonly shard: PassivatingShard;
  readonly entityId: string;
  /** Scheduler time of the entity's last message. */
  touchedAt: number;
}

/** Counts of passivations by reason, since the region started. */
export type PassivationCounts = Readonly<Record<PassivationReason, number>>;

export class PassivationTracker {
  /** Keyed by the entity object, not its id: a later incarnation is a new key. Oldest touch first. */
  private readonly active = new Map<object, Active>();
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
      this.active.delete(entity);
      known.touchedAt = now;
      this.active.set(entity, known);
      return;
    }
    this.active.set(entity, { shard, entityId, touchedAt: now });
    this.startSweep();
    const limit = this.settings.maxActiveEntities;
    if (limit !== undefined && this.active.size > limit) this.evictOldest(entity);
  }

  /** The entity stopped (passivated, or its shard stopped): it no longer counts as active. */
  remove(entity: object): void {
    this.active.delete(entity);
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

  private evictOldest(except: object): void {
    for (const [entity, active] of this.active) {
      if (entity === except) continue;
      // The shard removes it from here (remove), synchronously.
      this.active.delete(entity);
      active.shard.passivate(active.entityId, 'limit');
      return;
    }
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
    for (const [entity, active] of this.active) {
      if (active.touchedAt > cutoff) break;
      this.active.delete(entity);
      idle.push(active);
    }
    for (const active of idle) active.shard.passivate(active.entityId, 'idle');
    // Nothing left to watch: no timer keeps running for an empty region.
    if (this.active.size === 0) this.close();
  }
}
