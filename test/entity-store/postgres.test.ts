// The PostgreSQL entity store on a real server (a throwaway cluster made with initdb, test/support/postgres-
// server.ts): the store contract; the schema migrated once when nodes open the store together and recorded in
// the migration table; a claim fencing a writer on another connection; a server that stops failing every call
// with entity_store_unavailable, and the same handle working again once the server is back.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresEntityStore } from '../../src/entity-store/postgres-entity-store.js';
import { startPostgres, type PostgresServer } from '../support/postgres-server.js';
import { checkFenceUnderLoad, entityStoreContract, runWriter } from './contract.js';

let server: PostgresServer;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.destroy());

describe('PostgreSQL entity store', () => {
  entityStoreContract(() => openPostgresEntityStore(server.url), 'pg');

  it('nodes opening the store together migrate the schema once, recorded in actor_ts_migrations', async () => {
    const stores = await Promise.all(Array.from({ length: 4 }, () => openPostgresEntityStore(server.url)));
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    const { rows } = await client.query<{ version: number }>(
      'SELECT version FROM actor_ts_migrations ORDER BY version',
    );
    await client.end();
    expect(rows.map((row) => row.version)).toEqual([1, 2]);
    expect(await stores[0]!.migrate()).toBe(2);
    await Promise.all(stores.map((store) => store.close()));
  });

  it('a claim fences a writer on another connection: no commit of it lands after the claim', async () => {
    const writerStore = await openPostgresEntityStore(server.url);
    const claimant = await openPostgresEntityStore(server.url);
    await checkFenceUnderLoad(claimant, runWriter(writerStore, 'pg-fence'), 'pg-fence', 20);
    await Promise.all([writerStore.close(), claimant.close()]);
  });

  it('a stopped server fails every call with entity_store_unavailable; the same handle works once it is back', async () => {
    const store = await openPostgresEntityStore(server.url, { connectTimeoutMs: 1_000 });
    const epoch = await store.claim({ typeName: 'pg-outage', shardId: 1 });
    server.stop('fast');
    try {
      await expect(
        store.commit([{ typeName: 'pg-outage', entityId: 'x', shardId: 1, epoch, value: new Uint8Array([1]) }]),
      ).rejects.toMatchObject({ code: 'entity_store_unavailable' });
      await expect(store.load('pg-outage', 'x')).rejects.toMatchObject({ code: 'entity_store_unavailable' });
    } finally {
      server.start();
    }
    const value = new Uint8Array([2]);
    expect(await store.commit([{ typeName: 'pg-outage', entityId: 'x', shardId: 1, epoch, value }])).toEqual({
      fenced: [],
    });
    expect(await store.load('pg-outage', 'x')).toEqual(value);
    await store.close();
  });
});
