// The group commit's epoch checks (an answer that left its entity's state as committed): staged with the writes
// of the next transaction and read beside them, one per shard and epoch; a check that fails fails no write of its
// batch, a fenced one fences that shard's later writes at once, and a store without checkEpochs is refused.
import { describe, expect, it, vi } from 'vitest';
import type { EntityWrite } from '../../src/entity-store/entity-store.js';
import { GroupCommit } from '../../src/entity-store/group-commit.js';
import { MemoryEntityStore } from '../support/memory-entity-store.js';

const write = (epoch: number, entityId = 'e'): EntityWrite => ({
  typeName: 'T',
  entityId,
  shardId: 1,
  epoch,
  value: new Uint8Array([1]),
});
const shard = (epoch: number) => ({ typeName: 'T', shardId: 1, epoch });

describe('GroupCommit epoch checks', () => {
  it('reads the checks of one turn once per shard and epoch, beside the writes, and counts them', async () => {
    const store = new MemoryEntityStore();
    const epoch = await store.claim({ typeName: 'T', shardId: 1 });
    const commit = new GroupCommit(store);
    const calls = vi.spyOn(store, 'checkEpochs');
    const outcomes = await Promise.all([
      commit.check(shard(epoch)),
      commit.check(shard(epoch)),
      commit.write(write(epoch)),
    ]);
    expect(outcomes).toEqual(['committed', 'committed', 'committed']);
    expect(calls).toHaveBeenCalledTimes(1);
    expect(calls.mock.calls[0]?.[0]).toEqual([shard(epoch)]);
    expect(commit.stats()).toMatchObject({ commits: 1, writesCommitted: 1, checksConfirmed: 1, failures: 0 });
  });

  it('a check that fails fails no write of its transaction, and is counted as a failure', async () => {
    const store = new MemoryEntityStore();
    const epoch = await store.claim({ typeName: 'T', shardId: 1 });
    const commit = new GroupCommit(store);
    vi.spyOn(store, 'checkEpochs').mockRejectedValueOnce(new Error('connection reset'));
    const [checked, written] = await Promise.allSettled([commit.check(shard(epoch)), commit.write(write(epoch))]);
    expect(checked).toMatchObject({ status: 'rejected', reason: { code: 'entity_store_unavailable' } });
    expect(written).toEqual({ status: 'fulfilled', value: 'committed' });
    expect(store.rows.size).toBe(1);
    expect(commit.stats()).toMatchObject({
      writesCommitted: 1,
      failures: 1,
      lastError: 'epoch check failed: Error: connection reset',
    });
    expect(await commit.check(shard(epoch))).toBe('committed');
    expect(commit.stats().lastError).toBeUndefined();
  });

  it('a fenced check fences the later writes of that shard and epoch without asking the store', async () => {
    const store = new MemoryEntityStore();
    const epoch = await store.claim({ typeName: 'T', shardId: 1 });
    const commit = new GroupCommit(store);
    await store.claim({ typeName: 'T', shardId: 1 });
    expect(await commit.check(shard(epoch))).toBe('fenced');
    const commits = store.commits;
    expect(await commit.write(write(epoch))).toBe('fenced');
    expect(store.commits).toBe(commits);
    expect(await commit.write(write(epoch + 1))).toBe('committed');
  });

  it('refuses a check over a store without checkEpochs', async () => {
    const commit = new GroupCommit(new MemoryEntityStore({ epochChecks: false }));
    expect(commit.checksEpochs).toBe(false);
    await expect(commit.check(shard(1))).rejects.toMatchObject({ code: 'invalid_argument' });
  });
});
