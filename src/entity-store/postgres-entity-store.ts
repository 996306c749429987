// The entity store on PostgreSQL, through node-postgres (`pg`): a pool of connections, the schema created and
// migrated on open (a versioned migration table, under an advisory lock so nodes starting together migrate
// once), a claim as one atomic increment, and a commit as one statement that reads the epochs of its shards
// FOR SHARE before it writes: a claim (an update of the same row) waits for a commit in flight, and a commit
// after a claim sees the new epoch, so no write of an older epoch lands after a claim returned.
import pg from 'pg';
import {
  EntityStoreError,
  describePostgresUrl,
  type CommitResult,
  type EntityStore,
  type EntityWrite,
  type EpochCheck,
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

/**
 * A group commit. `current` locks the epoch rows of the writes' shards FOR SHARE (a claim, which updates such a
 * row, waits for this statement's transaction, and this statement reads a claim that committed first); the writes
 * under a current epoch are upserted; the statement answers the shards whose writes were refused (a later epoch,
 * or a shard never claimed). One (type, entity) appears once per batch (the group commit keeps the latest).
 */
const COMMIT_SQL = `
WITH r AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::integer[], $4::bigint[], $5::integer[], $6::integer[])
    AS r(type_name, entity_id, shard_id, epoch, start_at, length)
), w AS (
  SELECT type_name, entity_id, shard_id, epoch, substring($7::bytea FROM start_at FOR length) AS record FROM r
), current AS (
  SELECT e.type_name, e.shard_id, e.epoch FROM actor_ts_shard_epochs e
  WHERE (e.type_name, e.shard_id) IN (SELECT DISTINCT type_name, shard_id FROM w)
  ORDER BY e.type_name, e.shard_id
  FOR SHARE
), accepted AS (
  SELECT w.* FROM w JOIN current c ON c.type_name = w.type_name AND c.shard_id = w.shard_id AND c.epoch <= w.epoch
), written AS (
  INSERT INTO actor_ts_entities (type_name, entity_id, shard_id, epoch, record)
  SELECT type_name, entity_id, shard_id, epoch, record FROM accepted
  ON CONFLICT (type_name, entity_id) DO UPDATE SET shard_id = EXCLUDED.shard_id, epoch = EXCLUDED.epoch,
    record = EXCLUDED.record, updated_at = now()
  RETURNING 1
)
SELECT DISTINCT w.type_name, w.shard_id FROM w
WHERE NOT EXISTS (SELECT 1 FROM accepted a WHERE a.type_name = w.type_name AND a.shard_id = w.shard_id)`;

/**
 * The shards among the checks whose epoch row is later than theirs, or missing (never claimed): one statement,
 * read at its start, so a claim committed before the call is seen and one after it orders after the answers this
 * confirms. No lock: nothing is written on what it read.
 */
const CHECK_SQL = `
SELECT DISTINCT c.type_name, c.shard_id
FROM unnest($1::text[], $2::integer[], $3::bigint[]) AS c(type_name, shard_id, epoch)
WHERE NOT EXISTS (
  SELECT 1 FROM actor_ts_shard_epochs e
  WHERE e.type_name = c.type_name AND e.shard_id = c.shard_id AND e.epoch <= c.epoch)`;

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
      'actor_ts_load',
    );
    // A view of pg's Buffer, not a copy: it is the row's own (a small one may share a pool slab, which the
    // decoder copies out of).
    const record = rows[0]?.record;
    return record === undefined ? undefined : new Uint8Array(record.buffer, record.byteOffset, record.byteLength);
  }

  /**
   * One statement, so one round trip (and one WAL flush) per group commit: the epochs of the writes' shards are
   * read FOR SHARE, the writes whose epoch is current are upserted, and the shards of the others come back.
   */
  async commit(writes: ReadonlyArray<EntityWrite>): Promise<CommitResult> {
    if (writes.length === 0) return { fenced: [] };
    // The records travel as one binary parameter cut by (start, length) in the statement: a bytea[] parameter
    // is sent as text, every byte as two hex digits inside an escaped array literal.
    const starts: number[] = [];
    let at = 1;
    for (const w of writes) {
      starts.push(at);
      at += w.value.byteLength;
    }
    const records = Buffer.concat(writes.map((w) => w.value));
    const { rows } = await this.query<{ type_name: string; shard_id: number }>(
      COMMIT_SQL,
      [
        writes.map((w) => w.typeName),
        writes.map((w) => w.entityId),
        writes.map((w) => w.shardId),
        writes.map((w) => w.epoch),
        starts,
        writes.map((w) => w.value.byteLength),
        records,
      ],
      'actor_ts_commit',
    );
    return { fenced: rows.map((row) => ({ typeName: row.type_name, shardId: row.shard_id })) };
  }

  async checkEpochs(checks: ReadonlyArray<EpochCheck>): Promise<CommitResult> {
    if (checks.length === 0) return { fenced: [] };
    const { rows } = await this.query<{ type_name: string; shard_id: number }>(
      CHECK_SQL,
      [checks.map((c) => c.typeName), checks.map((c) => c.shardId), checks.map((c) => c.epoch)],
      'actor_ts_check_epochs',
    );
    return { fenced: rows.map((row) => ({ typeName: row.type_name, shardId: row.shard_id })) };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  /** `name`: the statement is prepared once per connection and run by name after (no parse, no plan again). */
  private async query<R extends pg.QueryResultRow>(
    text: string,
    values: unknown[],
    name?: string,
  ): Promise<pg.QueryResult<R>> {
    this.requireOpen();
    try {
      return await this.pool.query<R>(name === undefined ? { text, values } : { name, text, values });
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
