// Reconnecting with backoff: an EntityStore in front of another that, after a call failed, fails the calls of the
// next while at once (entity_store_unavailable, saying when it tries again) instead of sending every message's
// load or commit to a server that is down. The first call after the wait goes through; its success ends the
// outage, its failure doubles the wait (up to a bound). It also remembers why the store is out, for health.
import {
  EntityStoreError,
  type CommitResult,
  type EntityStore,
  type EntityWrite,
  type EpochCheck,
  type ShardKey,
} from './entity-store.js';

/** How long to wait after the first failure, and at most; the clock. Defaults: 100 ms, 5 s, Date.now. */
export interface BackoffOptions {
  readonly initialMs?: number;
  readonly maxMs?: number;
  readonly now?: () => number;
}

export class BackoffStore implements EntityStore {
  readonly kind: EntityStore['kind'];
  readonly where: string;
  /** Present when the store behind has it: a store without it has unchanged rows written again. */
  readonly checkEpochs?: (checks: ReadonlyArray<EpochCheck>) => Promise<CommitResult>;
  private waitMs = 0;
  private retryAt = 0;
  private failure: string | undefined;

  constructor(
    private readonly inner: EntityStore,
    private readonly options: BackoffOptions = {},
  ) {
    this.kind = inner.kind;
    this.where = inner.where;
    if (inner.checkEpochs !== undefined) {
      const check = inner.checkEpochs.bind(inner);
      this.checkEpochs = (checks) => this.call(() => check(checks));
    }
  }

  /** Why the store is out now (its last call failed), or undefined. */
  get problem(): string | undefined {
    return this.failure;
  }

  claim(shard: ShardKey): Promise<number> {
    return this.call(() => this.inner.claim(shard));
  }

  load(typeName: string, entityId: string): Promise<Uint8Array | undefined> {
    return this.call(() => this.inner.load(typeName, entityId));
  }

  commit(writes: ReadonlyArray<EntityWrite>): Promise<CommitResult> {
    return this.call(() => this.inner.commit(writes));
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private async call<T>(attempt: () => Promise<T>): Promise<T> {
    const now = this.now();
    if (this.failure !== undefined && now < this.retryAt) {
      throw new EntityStoreError(`${this.failure} (retrying in ${this.retryAt - now} ms)`);
    }
    try {
      const result = await attempt();
      this.failure = undefined;
      this.waitMs = 0;
      return result;
    } catch (error) {
      // A fenced write is an answer, not a failure: only unavailability is thrown, and backs off.
      // Calls that were in flight together fail together: the wait grows once per probe, not once per call.
      if (this.now() >= this.retryAt) {
        const { initialMs = 100, maxMs = 5_000 } = this.options;
        this.waitMs = Math.min(maxMs, this.waitMs === 0 ? initialMs : this.waitMs * 2);
        this.retryAt = this.now() + this.waitMs;
      }
      this.failure = error instanceof Error ? error.message : String(error);
      throw error;
    }
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}
