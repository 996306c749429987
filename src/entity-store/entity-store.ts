// The durable entity store's contract: rows of bytes keyed by (type, entity id), each written under a shard's
// epoch, and the per-shard epoch that fences an old writer out. Two implementations keep it: an lmdb directory
// (lmdb-entity-store.ts, one machine, no server) and PostgreSQL (postgres-entity-store.ts, a real cluster).
// Nothing here knows what the bytes mean: the runtime encodes an entity's state and its settled sends into them.
import { ActorTsError } from '../errors.js';

/** Where a node keeps its durable entities, as `startNode({ entityStore })` takes it. */
export type EntityStoreConfig =
  { readonly kind: 'postgres'; readonly url: string } | { readonly kind: 'lmdb'; readonly dir: string };

/** One entity's row, as a commit writes it. */
export interface EntityWrite {
  readonly typeName: string;
  readonly entityId: string;
  readonly shardId: number;
  /** The epoch the writing host holds for the shard (its claim); refused when the store holds a later one. */
  readonly epoch: number;
  readonly value: Uint8Array;
}

/** A shard of a type, as fencing knows it. */
export interface ShardKey {
  readonly typeName: string;
  readonly shardId: number;
}

/** A shard and the epoch its host holds, for a check that writes nothing (`EntityStore.checkEpochs`). */
export interface EpochCheck extends ShardKey {
  readonly epoch: number;
}

/** What one commit did: the writes of `fenced` shards were refused (a later claim exists); all others are durable. */
export interface CommitResult {
  readonly fenced: ReadonlyArray<ShardKey>;
}

/**
 * A store of durable entity rows. Every method rejects with EntityStoreError('entity_store_unavailable') when the
 * store cannot answer (server down, disk full, closed); a resolved commit is durable (fsynced or committed by the
 * server) for every write not in `fenced`.
 */
export interface EntityStore {
  readonly kind: EntityStoreConfig['kind'];
  /** A human-readable name of where the rows are (a directory, or the server without credentials). */
  readonly where: string;
  /**
   * Claims a shard for the caller: its epoch is incremented in the store and returned. From then on, every
   * commit carrying an older epoch for the shard is refused, and every commit that was accepted before is visible.
   */
  claim(shard: ShardKey): Promise<number>;
  /** The last committed row of an entity, or undefined. */
  load(typeName: string, entityId: string): Promise<Uint8Array | undefined>;
  /** Writes the rows in one transaction, but for those whose shard's epoch in the store is later than theirs. */
  commit(writes: ReadonlyArray<EntityWrite>): Promise<CommitResult>;
  /**
   * Optional: the shards among `checks` whose epoch in the store is later than theirs (or that were never
   * claimed), each named once, read after the call began, writing nothing. An answer that left its entity's state as committed
   * waits for this instead of writing the same row again; with a store that lacks it, the row is written again.
   */
  checkEpochs?(checks: ReadonlyArray<EpochCheck>): Promise<CommitResult>;
  close(): Promise<void>;
}

/** The store could not answer; nothing was committed by the call that failed. */
export class EntityStoreError extends ActorTsError {
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('entity_store_unavailable', message);
    this.name = 'EntityStoreError';
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/**
 * Reads the CLI's form of a store: `postgres://...` (or `postgresql://...`) or `lmdb:DIR`; `invalid_argument`
 * for anything else.
 */
export function parseEntityStore(text: string): EntityStoreConfig {
  if (/^postgres(ql)?:\/\//.test(text)) return { kind: 'postgres', url: text };
  if (text.startsWith('lmdb:') && text.length > 'lmdb:'.length) return { kind: 'lmdb', dir: text.slice(5) };
  throw new ActorTsError(
    'invalid_argument',
    `entity store ${JSON.stringify(text)} is neither postgres://user@host:5432/db nor lmdb:DIR`,
  );
}

/** Checks a store configuration as given to `startNode` (`invalid_argument` naming the bad field). */
export function checkEntityStoreConfig(value: unknown): EntityStoreConfig {
  const config = value as Partial<Record<string, unknown>> | null;
  if (typeof config !== 'object' || config === null)
    throw invalid("entityStore must be { kind: 'postgres', url } or { kind: 'lmdb', dir }");
  if (config['kind'] === 'postgres') {
    const url = config['url'];
    if (typeof url !== 'string' || !/^postgres(ql)?:\/\//.test(url))
      throw invalid('entityStore.url must be a postgres:// URL');
    return { kind: 'postgres', url };
  }
  if (config['kind'] === 'lmdb') {
    const dir = config['dir'];
    if (typeof dir !== 'string' || dir.length === 0) throw invalid('entityStore.dir must be a non-empty path');
    return { kind: 'lmdb', dir };
  }
  throw invalid(`entityStore.kind must be 'postgres' or 'lmdb', got ${JSON.stringify(config['kind'])}`);
}

/** The URL without its password, for logs and health. */
export function describePostgresUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    return parsed.toString();
  } catch {
    return 'postgres://(unparseable url)';
  }
}

function invalid(message: string): ActorTsError {
  return new ActorTsError('invalid_argument', message);
}
