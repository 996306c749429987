// Another node process on the same lmdb entity store (lmdb.test.ts): runs the compiled store from dist/,
// claims shard 1 of the type given, commits 'w' = 1, 2, 3, ... and prints "ok <n>" after each until a commit
// is fenced, then prints "fenced <last landed>" and exits.
import { openLmdbEntityStore } from '../../dist/src/entity-store/lmdb-entity-store.js';

const [dir, typeName] = process.argv.slice(2);
const store = openLmdbEntityStore(dir);
const epoch = await store.claim({ typeName, shardId: 1 });
let n = 0;
for (;;) {
  const value = new Uint8Array([(n + 1) & 255, ((n + 1) >> 8) & 255, 7]);
  const { fenced } = await store.commit([{ typeName, entityId: 'w', shardId: 1, epoch, value }]);
  if (fenced.length > 0) break;
  n++;
  process.stdout.write(`ok ${n}\n`);
}
process.stdout.write(`fenced ${n}\n`);
await store.close();
