// What the coordinator reports of a failover (issue 26): a downed member's region removed, then its first
// shard started on a new home (re-homed). The orphaned shards of each removed region are remembered until one
// of them starts elsewhere, bounded by the shard count.
import type { CoordinatorEvents } from './settings.js';

export class FailoverReport {
  /** Shards of removed regions not yet started elsewhere, with the region they were on. */
  private readonly orphans = new Map<number, string>();

  constructor(private readonly events: CoordinatorEvents | undefined) {}

  regionRemoved(region: string, shards: Iterable<number>): void {
    if (this.events?.onFailoverStep === undefined) return;
    this.events.onFailoverStep(region, 'removed');
    for (const shardId of shards) this.orphans.set(shardId, region);
  }

  shardStarted(region: string, shardId: number): void {
    const from = this.orphans.get(shardId);
    if (from === undefined || from === region) return;
    for (const [orphan, previous] of [...this.orphans]) if (previous === from) this.orphans.delete(orphan);
    this.events?.onFailoverStep?.(from, 're-homed');
  }
}
