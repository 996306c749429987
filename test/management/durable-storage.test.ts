// A node started with a data directory (in process, real lmdb): health reports the storage, an acknowledged
// write is on disk and back after a restart without waiting for a peer, a second node on the same directory
// refuses to start naming it, and a failed commit answers 503 storage_unavailable while reads go on.
import { describe, expect, it } from 'vitest';
import { DurablePlacementStore, PersistenceError } from '../../crdt/index.js';
import { startNode, type RunningNode } from '../../src/node/node.js';
import { API, COUNTER, expectError, getPlacements } from './node-fixture.js';
import { useDataRoot } from '../support/data-root.js';
import { postPlacements } from '../support/post-placements.js';

const data = useDataRoot('placement-node-storage-');

interface StorageBody {
  durable: boolean;
  path: string | null;
  bytesOnDisk: number;
  lastCommitAt: number | null;
  logRecordsSinceSnapshot: number;
  restored: boolean;
  failure: string | null;
}

async function storageOf(node: RunningNode): Promise<{ status: string; storage: StorageBody }> {
  return (await node.http.inject({ method: 'GET', url: `${API}/health` })).json<{
    status: string;
    storage: StorageBody;
  }>();
}

describe('a node with --data-dir', () => {
  it('reports its storage, keeps acknowledged writes across a restart and takes writes at once after it', async () => {
    const dataDir = data.dir('restart');
    const first = await data.start('restart');
    const before = await storageOf(first);
    expect(before.storage).toMatchObject({ durable: true, path: dataDir, restored: false, failure: null });
    const target = first.address.toString();
    const post = await postPlacements(first, {
      placements: [
        { shardId: 1, target },
        { shardId: 2, target },
      ],
    });
    expect(post.statusCode, post.body).toBe(202);
    expect((await first.http.inject({ method: 'DELETE', url: `${COUNTER}/placements/2` })).statusCode).toBe(204);
    const after = (await storageOf(first)).storage;
    expect(after.lastCommitAt).toEqual(expect.any(Number));
    expect(after.logRecordsSinceSnapshot).toBeGreaterThanOrEqual(2);
    expect(after.bytesOnDisk).toBeGreaterThan(0);
    await first.stop();

    const second = await startNode({ dataDir, port: first.address.port, http: { port: 0 }, logLevel: 'silent' });
    data.started.push(second);
    // Before the node has joined anything, its replica already holds what was acknowledged.
    expect((await getPlacements(second)).placements.map(({ shardId, target: t }) => [shardId, t])).toEqual([
      [1, target],
    ]);
    expect((await storageOf(second)).storage.restored).toBe(true);
    expect(second.sharding.placementStore).toBeInstanceOf(DurablePlacementStore);
    // Restored, so a write does not wait for a first sync with anyone.
    await second.counterPlacements.setPlacement(3, target);
    await second.stop();
  });

  it('exports the commit latency of its storage and the placements per mode in /metrics', async () => {
    const node = await data.start('metrics');
    const target = node.address.toString();
    const write = await postPlacements(node, {
      placements: [
        { shardId: 1, target },
        { shardId: 2, target, mode: 'require' },
      ],
    });
    expect(write.statusCode).toBe(202);
    const text = (await node.http.inject({ method: 'GET', url: '/metrics' })).body;
    const count = /^actor_ts_placement_storage_commit_seconds_count (\d+)$/m.exec(text);
    expect(Number(count?.[1])).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/^actor_ts_placements\{type="Counter",mode="prefer"\} 1$/m);
    expect(text).toMatch(/^actor_ts_placements\{type="Counter",mode="require"\} 1$/m);
  });

  it('refuses to start on a directory another running node holds, naming the directory', async () => {
    const dataDir = data.dir('shared');
    const holder = await data.start('shared');
    const error = await startNode({ dataDir, port: 0, http: { port: 0 }, logLevel: 'silent' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PersistenceError);
    expect((error as PersistenceError).code).toBe('locked');
    expect((error as PersistenceError).message).toContain(dataDir);
  });

  it('answers a write whose commit failed with 503 storage_unavailable and keeps serving reads', async () => {
    const node = await data.start('failing');
    const target = node.address.toString();
    expect(
      (await node.http.inject({ method: 'POST', url: `${COUNTER}/placements`, payload: { shardId: 1, target } }))
        .statusCode,
    ).toBe(202);
    const store = node.sharding.placementStore as DurablePlacementStore;
    // The disk fills up: lmdb's commit fails.
    Object.assign(store.persistence, {
      append: () => Promise.reject(new PersistenceError('storage_unavailable', 'commit failed: MDB_MAP_FULL')),
    });
    const failed = expectError(
      await node.http.inject({ method: 'POST', url: `${COUNTER}/placements`, payload: { shardId: 2, target } }),
      503,
      'storage_unavailable',
    );
    expect(failed.message).toMatch(/MDB_MAP_FULL/);
    // Refused at once from now on, removals too.
    expectError(
      await node.http.inject({ method: 'DELETE', url: `${COUNTER}/placements/1` }),
      503,
      'storage_unavailable',
    );
    expect((await getPlacements(node)).placements.map(({ shardId }) => shardId)).toContain(1);
    const health = await storageOf(node);
    expect(health.status).toBe('degraded');
    expect(health.storage.failure).toMatch(/refuses placement writes/);
  });
});
