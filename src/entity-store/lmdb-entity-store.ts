// The embedded entity store: one lmdb environment in a directory that every node process on the machine opens
// (lmdb's write lock is shared between processes, so a claim and a commit are each one atomic transaction
// against the latest data of all of them). Commits are fsynced before they resolve (never noSync or writemap).
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { DURABLE_LMDB_OPTIONS } from '../../crdt/index.js';
import {
  EntityStoreError,
  type CommitResult,
  type EntityStore,
  type EntityWrite,
  type EpochCheck,
  type ShardKey,
} from './entity-store.js';

const FILE = 'entities.mdb';

/** Opens (creating) the store in `dir`; EntityStoreError when the directory or file cannot be used. */
export function openLmdbEntityStore(dir: string): EntityStore {
  const path = resolve(dir);
  try {
    mkdirSync(path, { recursive: true });
    const env = open({
      path: join(path, FILE),
      noSubdir: true,
      maxDbs: 4,
      // The placement store's settings: fsynced before the transaction's promise resolves.
      ...DURABLE_LMDB_OPTIONS,
    });
    return new LmdbEntityStore(path, env);
  } catch (cause) {
    throw new EntityStoreError(`cannot open the entity store in ${path}: ${messageOf(cause)}`, { cause });
  }
}

// Not exported: its declaration would name lmdb's types, which a consumer's compiler need not read.
class LmdbEntityStore implements EntityStore {
  readonly kind = 'lmdb';
  private readonly epochs: Database<number, [string, number]>;
  private readonly rows: Database<Uint8Array, [string, string]>;
  private closed = false;

  constructor(
    readonly where: string,
    private readonly env: RootDatabase,
  ) {
    this.epochs = env.openDB({ name: 'shard-epochs', encoding: 'ordered-binary' });
    this.rows = env.openDB({ name: 'entities', encoding: 'binary' });
  }

  async claim(shard: ShardKey): Promise<number> {
    const key: [string, number] = [shard.typeName, shard.shardId];
    return this.write(() => {
      const epoch = (this.epochs.get(key) ?? 0) + 1;
      void this.epochs.put(key, epoch);
      return epoch;
    });
  }

  async load(typeName: string, entityId: string): Promise<Uint8Array | undefined> {
    this.requireOpen();
    try {
      // Another process may have committed since this process's read snapshot was taken.
      this.env.resetReadTxn();
      // lmdb's `get` of a binary value is already a copy of its own (not a view of the map): a view of it.
      const value = this.rows.get([typeName, entityId]);
      return value === undefined ? undefined : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
    } catch (cause) {
      throw new EntityStoreError(`cannot read the entity store in ${this.where}: ${messageOf(cause)}`, { cause });
    }
  }

  async commit(writes: ReadonlyArray<EntityWrite>): Promise<CommitResult> {
    return this.write(() => {
      const fenced = new Map<string, ShardKey>();
      for (const write of writes) {
        const shardKey = `${write.shardId} ${write.typeName}`;
        if (fenced.has(shardKey)) continue;
        // Read inside the write transaction: the latest claim of any process on this machine.
        if (this.isFenced(write)) {
          fenced.set(shardKey, { typeName: write.typeName, shardId: write.shardId });
          continue;
        }
        void this.rows.put([write.typeName, write.entityId], write.value);
      }
      return { fenced: [...fenced.values()] };
    });
  }

  async checkEpochs(checks: ReadonlyArray<EpochCheck>): Promise<CommitResult> {
    this.requireOpen();
    try {
      // A fresh read snapshot: every claim any process committed before this call is in it. No write
      // transaction, so no fsync: a claim committed after this read orders after the answer it confirms.
      this.env.resetReadTxn();
      const fenced = new Map<string, ShardKey>();
      for (const { typeName, shardId, epoch } of checks) {
        if (this.isFenced({ typeName, shardId, epoch })) fenced.set(`${shardId} ${typeName}`, { typeName, shardId });
      }
      return { fenced: [...fenced.values()] };
    } catch (cause) {
      throw new EntityStoreError(`cannot read the entity store in ${this.where}: ${messageOf(cause)}`, { cause });
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.env.close();
  }

  /** A shard never claimed has no epoch: a write under no claim is refused as well. */
  private isFenced(check: EpochCheck): boolean {
    return (this.epochs.get([check.typeName, check.shardId]) ?? Infinity) > check.epoch;
  }

  /** Runs `body` in one write transaction, resolved once it is on disk. */
  private async write<T>(body: () => T): Promise<T> {
    this.requireOpen();
    try {
      return await this.env.transaction(body);
    } catch (cause) {
      throw new EntityStoreError(`cannot commit to the entity store in ${this.where}: ${messageOf(cause)}`, {
        cause,
      });
    }
  }

  private requireOpen(): void {
    if (this.closed) throw new EntityStoreError(`the entity store in ${this.where} is closed`);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
