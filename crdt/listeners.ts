// The store's update and change listeners. A throwing listener is logged and skipped, never allowed to
// abort the update that called it; `busy` tells the store a listener is running (it then defers work that
// would pull the document out from under the write that called back).
import type { PlacementLog } from './log.js';

/**
 * Receives every update the document applied, as encoded bytes, with whether it was written here or arrived from a
 * peer: the hook replication pushes from.
 */
export type UpdateListener = (update: Uint8Array, origin: 'local' | 'remote') => void;
/**
 * Told which shards of which entity type changed their visible placement (after any local or remote update), for
 * caches and strategies to refresh.
 */
export type ChangeListener = (typeName: string, shardIds: readonly number[]) => void;

export class StoreListeners {
  private readonly updates = new Set<UpdateListener>();
  private readonly changes = new Set<ChangeListener>();
  private running = 0;

  constructor(private readonly log: PlacementLog) {}

  get busy(): boolean {
    return this.running > 0;
  }

  onUpdate(listener: UpdateListener): () => void {
    this.updates.add(listener);
    return () => this.updates.delete(listener);
  }

  onChange(listener: ChangeListener): () => void {
    this.changes.add(listener);
    return () => this.changes.delete(listener);
  }

  emitUpdate(bytes: Uint8Array, origin: 'local' | 'remote'): void {
    for (const listener of [...this.updates]) this.guard('update', () => listener(bytes, origin));
  }

  emitChange(typeName: string, shardIds: readonly number[]): void {
    for (const listener of [...this.changes]) this.guard('change', () => listener(typeName, shardIds));
  }

  private guard(kind: string, call: () => void): void {
    this.running++;
    try {
      call();
    } catch (error) {
      this.log({
        level: 'warn',
        message: `placement ${kind} listener threw: ${error instanceof Error ? error.message : String(error)}`,
        details: { error },
      });
    } finally {
      this.running--;
    }
  }
}
