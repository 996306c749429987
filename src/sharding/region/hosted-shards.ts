// The shards one region hosts, in the order they started (a new coordinator receives them in that order),
// and their stopping: a hand-off stops a shard's entities and reports the end under the HandOff id that
// asked for it last, so a late report of an earlier stop cannot end a later hand-off.
import type { NodeAddress } from '../../cluster/address.js';
import { systemScheduler } from '../../cluster/scheduler.js';
import type { PassivationSettings } from '../core/passivation.js';
import { PassivationTracker, type PassivationCounts } from './passivation.js';
import type { Logger } from '../../logging.js';
import type { EntityBehavior } from '../core/entity-api.js';
import type { HeldStates } from './held-state.js';
import { Shard, type ShardEntityOptions } from './shard.js';
import type { StoppedStates } from './shard-state.js';

export interface HostedShardsOptions {
  readonly entities: ShardEntityOptions;
  readonly typeName: string;
  readonly behavior: EntityBehavior;
  /** When entities of the type are passivated on this node (all its shards together). */
  readonly passivation?: PassivationSettings;
  readonly self: NodeAddress;
  readonly handOffTimeoutMs: number;
  /**
   * A shard stopped by `handOff` is gone; `handOffId` is the one to report it under, if anybody waits, and
   * `stopped` the states it hands over (its entities' snapshots, taken after their last messages, and the states
   * it still held).
   */
  readonly onStopped: (shardId: number, handOffId: number | undefined, stopped: StoppedStates) => void;
}

export class HostedShards {
  private readonly shards = new Map<number, Shard>();
  /** Stopping shards whose end a coordinator waits for: the HandOff id to report it under (the latest one). */
  private readonly stopReports = new Map<number, number>();
  /** One per region: the active-entity limit is per node and type, and one sweep timer serves every shard. */
  private readonly passivation: PassivationTracker;
  private readonly entities: ShardEntityOptions;

  constructor(
    private readonly options: HostedShardsOptions,
    private readonly logger: Logger,
  ) {
    const scheduler = options.entities.scheduler ?? systemScheduler;
    this.passivation = new PassivationTracker(options.passivation ?? {}, scheduler);
    this.entities = { ...options.entities, passivation: this.passivation };
  }

  /** Entities passivated here since the start, by reason. */
  get passivated(): PassivationCounts {
    return this.passivation.passivated;
  }

  /** Shards present, running or stopping. */
  get size(): number {
    return this.shards.size;
  }

  get(shardId: number): Shard | undefined {
    return this.shards.get(shardId);
  }

  /** The shard, started now (`started`, its entities' states held from `restore()`) unless it was present. */
  ensure(
    shardId: number,
    restore: () => HeldStates | undefined = () => undefined,
  ): { readonly shard: Shard; readonly started: boolean } {
    const present = this.shards.get(shardId);
    if (present !== undefined) return { shard: present, started: false };
    const { typeName, behavior, self } = this.options;
    const shard = new Shard(typeName, shardId, behavior, self, this.logger, this.entities, restore());
    this.shards.set(shardId, shard);
    return { shard, started: true };
  }

  /** Hosted shard ids, ascending (shards being handed off are no longer counted). */
  running(): number[] {
    return this.idsWhere((shard) => !shard.isStopping);
  }

  /** Shards whose entities may still run here although no longer counted as hosted. */
  stopping(): number[] {
    return this.idsWhere((shard) => shard.isStopping);
  }

  entityCount(): number {
    let count = 0;
    for (const shard of this.shards.values()) count += shard.entityCount;
    return count;
  }

  /**
   * Stops a shard for a hand-off and calls `onStopped` once it is gone. False when it is not here (nothing
   * to wait for). Also for a shard already stopping: the coordinator asking now waits for a report under
   * its own id before the shard may start elsewhere.
   */
  handOff(shardId: number, handOffId: number): boolean {
    const shard = this.shards.get(shardId);
    if (shard === undefined) return false;
    this.stopReports.set(shardId, handOffId);
    if (shard.isStopping) return true;
    void shard.stop(this.options.handOffTimeoutMs, true).then(() => {
      if (this.shards.get(shardId) === shard) this.shards.delete(shardId);
      const reportAs = this.stopReports.get(shardId);
      this.stopReports.delete(shardId);
      this.options.onStopped(shardId, reportAs, shard.stoppedStates);
    });
    return true;
  }

  /** Stops every shard here without reporting (nobody is left to report to: leaving, or downed). */
  async stopAll(): Promise<void> {
    const shards = [...this.shards];
    await Promise.all(shards.map(([, shard]) => shard.stop(this.options.handOffTimeoutMs)));
    for (const [shardId, shard] of shards) {
      if (this.shards.get(shardId) !== shard) continue;
      this.shards.delete(shardId);
      // A later copy of the shard must not inherit a report nobody waits for any more.
      this.stopReports.delete(shardId);
    }
  }

  /** Forgets every shard at once and waits for their entities to stop (the node shuts down). */
  async shutdown(): Promise<void> {
    const shards = [...this.shards.values()];
    this.shards.clear();
    this.passivation.close();
    await Promise.all(shards.map((shard) => shard.stop(this.options.handOffTimeoutMs)));
  }

  private idsWhere(test: (shard: Shard) => boolean): number[] {
    return [...this.shards]
      .filter(([, shard]) => test(shard))
      .map(([id]) => id)
      .sort((a, b) => a - b);
  }
}
