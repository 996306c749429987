// An EntityStore in memory, for the sharding unit tests that run under fake time (the real stores are tested
// against lmdb and a real PostgreSQL server in test/entity-store/). It keeps the contract's rules: a claim
// increments the shard's epoch, a commit refuses the writes of shards claimed since. Typed against the real
// interface, so it cannot drift; `down` makes every call fail as an unreachable store does, `onCommit` lets a
// test act between a commit and its answer (a crash right after the commit), and `{ epochChecks: false }` gives
// a store without the optional `checkEpochs`, as a store written before it would be.
import {
  EntityStoreError,
  type CommitResult,
  type EntityStore,
  type EntityWrite,
  type EpochCheck,
  type ShardKey,
} from '../../src/entity-store/entity-store.js';

export class MemoryEntityStore implements EntityStore {
  readonly kind = 'lmdb';
  readonly where = 'memory';
  readonly rows = new Map<string, Uint8Array>();
  readonly epochs = new Map<string, number>();
  /** Every call fails with entity_store_unavailable while true. */
  down = false;
  commits = 0;
  fencedWrites = 0;
  /** Calls of checkEpochs. */
  checks = 0;
  readonly checkEpochs?: (checks: ReadonlyArray<EpochCheck>) => Promise<CommitResult>;
  /** Runs after a commit is applied, before its promise resolves. */
  onCommit: ((writes: ReadonlyArray<EntityWrite>) => void) | undefined;

  constructor(options: { readonly epochChecks?: boolean } = {}) {
    if (options.epochChecks === false) return;
    this.checkEpochs = async (checks) => {
      this.check();
      this.checks++;
      const fenced = new Map<string, ShardKey>();
      for (const { typeName, shardId, epoch } of checks) {
        if (this.isFenced({ typeName, shardId, epoch }))
          fenced.set(shardKey({ typeName, shardId }), { typeName, shardId });
      }
      return { fenced: [...fenced.values()] };
    };
  }

  async claim(shard: ShardKey): Promise<number> {
    this.check();
    const key = shardKey(shard);
    const epoch = (this.epochs.get(key) ?? 0) + 1;
    this.epochs.set(key, epoch);
    return epoch;
  }

  async load(typeName: string, entityId: string): Promise<Uint8Array | undefined> {
    this.check();
    return this.rows.get(`${typeName}/${entityId}`);
  }

  async commit(writes: ReadonlyArray<EntityWrite>): Promise<CommitResult> {
    this.check();
    const fenced = new Map<string, ShardKey>();
    for (const write of writes) {
      if (this.isFenced(write)) {
        fenced.set(shardKey(write), { typeName: write.typeName, shardId: write.shardId });
        this.fencedWrites++;
        continue;
      }
      this.rows.set(`${write.typeName}/${write.entityId}`, write.value);
    }
    this.commits++;
    this.onCommit?.(writes);
    return { fenced: [...fenced.values()] };
  }

  async close(): Promise<void> {}

  private isFenced(check: EpochCheck): boolean {
    return (this.epochs.get(shardKey(check)) ?? Infinity) > check.epoch;
  }

  private check(): void {
    if (this.down) throw new EntityStoreError('the memory store is down');
  }
}

function shardKey(shard: ShardKey): string {
  return `${shard.typeName}/${shard.shardId}`;
}
