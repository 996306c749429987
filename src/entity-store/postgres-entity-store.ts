// The entity store on PostgreSQL, through node-postgres (`pg`): a pool of connections, the schema created and
// migrated on open (a versioned migration table, under an advisory lock so nodes starting together migrate
// once), a claim as one atomic increment, and a commit as one transaction that reads the epochs of its shards
// FOR SHARE before it writes: a claim (an update of the same row) waits for a commit in flight, and a commit
// after a claim sees the new epoch, so no write of an older epoch lands after a claim returned.
import pg from 'pg';
import {
  EntityStoreError,
  describePostgresUrl,
  type CommitResult,
  type EntityStore,
  type EntityWrite,
  type ShardKey,
} from './entity-store.js';

/** The schema's migrations, in order; a row per applied version in actor_ts_migrations. Never edit one: add. */
const MIGRATIONS: ReadonlyArray<string> = [
  `CREATE TABLE actor_ts_shard_epochs (
     type_name text NOT NULL,
     shard_id integer NOT NULL,
     epoch bigint NOT NULL,
     PRIMARY KEY (type_name, shard_id))`,
  `CREATE TABLE actor_ts_entities (
     type_name text NOT NULL,
     entity_id text NOT NULL,
     shard_id integer NOT NULL,
     epoch bigint NOT NULL,
     record bytea NOT NULL,
     updated_at timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (type_name, entity_id))`,
];

/** One advisory lock key for the project's migrations (any fixed 64-bit number). */
const MIGRATION_LOCK = 7_701_036;

/** The connection pool's bounds (every field optional, with the default it names). */
export interface PostgresEntityStoreOptions {
  /** Connections kept at most; default 4 (one commit is in flight per node at a time). */
  readonly maxConnections?: number;
  /** A connection attempt fails after this long; default 5,000 ms. */
  readonly connectTimeoutMs?: number;
  /** A statement fails after this long (the server cancels it); default 10,000 ms. */
  readonly statementTimeoutMs?: number;
}

/** Connects, migrates the schema and returns the store; EntityStoreError when the server cannot be used. */
export async function openPostgresEntityStore(
  url: string,
  options: PostgresEntityStoreOptions = {},
): Promise<EntityStore & { migrate(): Promise<number> }> {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? 4,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    statement_timeout: options.statementTimeoutMs ?? 10_000,
  });
  // An idle connection the server dropped (a restart) is an error event on the pool: without a listener it
  // would crash the process. The next query opens a new connection.
  pool.on('error', () => undefined);
  const store = new PostgresEntityStore(describePostgresUrl(url), pool);
  try {
    await store.migrate();
    return store;
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
}

// Not exported: its declaration would name pg's types (@types/pg is a development dependency).
class PostgresEntityStore implements EntityStore {
  readonly kind = 'postgres';
  private closed = false;

  constructor(
    readonly where: string,
    private readonly pool: pg.Pool,
  ) {}

  /** Applies the migrations this database has not had yet; the version reached. */
  async migrate(): Promise<number> {
    return this.inTransaction(async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await client.query(
        'CREATE TABLE IF NOT EXISTS actor_ts_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      const { rows } = await client.query<{ version: number | null }>(
        'SELECT max(version) AS version FROM actor_ts_migrations',
      );
      const applied = rows[0]?.version ?? 0;
      for (let version = applied + 1; version <= MIGRATIONS.length; version++) {
        await client.query(MIGRATIONS[version - 1] as string);
        await client.query('INSERT INTO actor_ts_migrations (version) VALUES ($1)', [version]);
      }
      return MIGRATIONS.length;
    });
  }

  async claim(shard: ShardKey): Promise<number> {
    const { rows } = await this.query<{ epoch: string }>(
      `INSERT INTO actor_ts_shard_epochs (type_name, shard_id, epoch) VALUES ($1, $2, 1)
       ON CONFLICT (type_name, shard_id) DO UPDATE SET epoch = actor_ts_shard_epochs.epoch + 1
       RETURNING epoch`,
      [shard.typeName, shard.shardId],
    );
    return Number(rows[0]?.epoch);
  }

  async load(typeName: string, entityId: string): Promise<Uint8Array | undefined> {
    const { rows } = await this.query<{ record: Buffer }>(
      'SELECT record FROM actor_ts_entities WHERE type_name = $1 AND entity_id = $2',
      [typeName, entityId],
    );
    const record = rows[0]?.record;
    return record === undefined ? undefined : new Uint8Array(record);
  }

  async commit(writes: ReadonlyArray<EntityWrite>): Promise<CommitResult> {
    if (writes.length === 0) return { fenced: [] };
    return this.inTransaction(async (client) => {
      const fenced = await this.fencedShards(client, writes);
      const isFenced = (write: EntityWrite): boolean =>
        fenced.some((shard) => shard.typeName === write.typeName && shard.shardId === write.shardId);
      const kept = writes.filter((write) => !isFenced(write));
      if (kept.length > 0) {
        await client.query(
          `INSERT INTO actor_ts_entities (type_name, entity_id, shard_id, epoch, record)
           SELECT * FROM unnest($1::text[], $2::text[], $3::integer[], $4::bigint[], $5::bytea[])
           ON CONFLICT (type_name, entity_id) DO UPDATE SET shard_id = EXCLUDED.shard_id, epoch = EXCLUDED.epoch,
             record = EXCLUDED.record, updated_at = now()`,
          [
            kept.map((w) => w.typeName),
            kept.map((w) => w.entityId),
            kept.map((w) => w.shardId),
            kept.map((w) => w.epoch),
            kept.map((w) => Buffer.from(w.value.buffer, w.value.byteOffset, w.value.byteLength)),
          ],
        );
      }
      return { fenced };
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  /** The shards among the writes' whose epoch in the store is later than the writes carry (locked FOR SHARE). */
  private async fencedShards(client: pg.PoolClient, writes: ReadonlyArray<EntityWrite>): Promise<ShardKey[]> {
    const held = new Map<string, EntityWrite>();
    for (const write of writes) held.set(`${write.shardId} ${write.typeName}`, write);
    const shards = [...held.values()];
    const { rows } = await client.query<{ type_name: string; shard_id: number; epoch: string }>(
      `SELECT e.type_name, e.shard_id, e.epoch FROM actor_ts_shard_epochs e
       JOIN unnest($1::text[], $2::integer[]) AS w(type_name, shard_id)
         ON e.type_name = w.type_name AND e.shard_id = w.shard_id
       ORDER BY e.type_name, e.shard_id
       FOR SHARE OF e`,
      [shards.map((w) => w.typeName), shards.map((w) => w.shardId)],
    );
    const current = new Map(rows.map((row) => [`${row.shard_id} ${row.type_name}`, Number(row.epoch)]));
    // A shard never claimed has no row: a write for it was not made under any claim, and is refused as well.
    return shards
      .filter((write) => (current.get(`${write.shardId} ${write.typeName}`) ?? Infinity) > write.epoch)
      .map(({ typeName, shardId }) => ({ typeName, shardId }));
  }

  private async query<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    this.requireOpen();
    try {
      return await this.pool.query<R>(text, values);
    } catch (cause) {
      throw this.unavailable(cause);
    }
  }

  private async inTransaction<T>(body: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    this.requireOpen();
    let client: pg.PoolClient | undefined;
    try {
      client = await this.pool.connect();
      await client.query('BEGIN');
      const result = await body(client);
      await client.query('COMMIT');
      client.release();
      return result;
    } catch (cause) {
      // A connection whose transaction failed half-way is not given back to the pool: it may be broken.
      client?.release(true);
      throw this.unavailable(cause);
    }
  }

  private unavailable(cause: unknown): EntityStoreError {
    const text = cause instanceof Error ? cause.message : String(cause);
    return new EntityStoreError(`the entity store at ${this.where} failed: ${text}`, { cause });
  }

  private requireOpen(): void {
    if (this.closed) throw new EntityStoreError(`the entity store at ${this.where} is closed`);
  }
}
