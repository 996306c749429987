// Turning store changes into coordinator work on this node: a pin of a type changed (here or on another
// node), or a cordon did (every type's candidates may have changed). The coordinators running here start a
// rebalance round at once and ask again for their shards without a home, rather than at their next tick;
// changes arriving together share one round per type.
import type { PlacementStore } from '../../../crdt/index.js';
import { isInternalNamespace } from './cordons.js';

export interface ChangeTargets {
  /** The initialised types. */
  typeNames(): Iterable<string>;
  /** The type's coordinator when it runs on this node. */
  coordinator(typeName: string): { rebalanceSoon(): void } | undefined;
  readonly stopped: () => boolean;
}

export class PlacementChanges {
  private readonly queued = new Set<string>();

  constructor(
    private readonly store: Pick<PlacementStore, 'snapshot'>,
    private readonly targets: ChangeTargets,
  ) {}

  /** The store changed `name`: a type's pins, or an internal namespace (cordons) that concerns every type. */
  changed(name: string): void {
    if (!isInternalNamespace(name)) {
      this.queue(name);
      return;
    }
    for (const typeName of this.targets.typeNames()) this.queue(typeName);
  }

  /** A pinned target may just have become able to take its shards (it joined, or its region registered). */
  mayApply(typeName: string): void {
    if (this.store.snapshot(typeName).placements.size > 0) this.queue(typeName);
  }

  private queue(typeName: string): void {
    const { coordinator, stopped } = this.targets;
    if (stopped() || coordinator(typeName) === undefined || this.queued.has(typeName)) return;
    this.queued.add(typeName);
    queueMicrotask(() => {
      this.queued.delete(typeName);
      if (!stopped()) coordinator(typeName)?.rebalanceSoon();
    });
  }
}
