// Opens the store a node's configuration names: lmdb in a directory, or PostgreSQL at a URL.
import { type EntityStore, type EntityStoreConfig } from './entity-store.js';
import { openLmdbEntityStore } from './lmdb-entity-store.js';
import { openPostgresEntityStore } from './postgres-entity-store.js';

/** The store, open and (PostgreSQL) migrated; EntityStoreError when it cannot be used now. */
export async function openEntityStore(config: EntityStoreConfig): Promise<EntityStore> {
  return config.kind === 'lmdb' ? openLmdbEntityStore(config.dir) : openPostgresEntityStore(config.url);
}
