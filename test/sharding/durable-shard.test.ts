// Durable entities at the level of one shard on one host (issue 36): an answer leaves only after the state it
// produced is committed; an entity starts from its committed row; a host whose commit is refused by a later
// claim acknowledges nothing more; a store that fails resets the entity to its row; a bad snapshot or a bad row
// fails that message or that start with a typed error. Real group commit over the in-memory store.
import { describe, expect, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import { encodeValue } from '../../src/cluster/transport/message-codec.js';
import type { EntityStore } from '../../src/entity-store/entity-store.js';
import { GroupCommit } from '../../src/entity-store/group-commit.js';
import { silentLogger } from '../../src/logging.js';
import type { EntityBehavior, EntityRef, HostOutcome } from '../../src/sharding/core/entity-api.js';
import type { SendMark } from '../../src/sharding/region/send-marks.js';
import { Shard } from '../../src/sharding/region/shard.js';
import { MemoryEntityStore } from '../support/memory-entity-store.js';
import { deliver, hostShard, type Counted } from './durable-fixtures.js';

const counted = (): Counted => ({ ran: [], restored: [] });
const mark = (seq: number): SendMark => ({ node: 's@127.0.0.1:9', incarnation: 5, seq, below: 1 });

describe('a durable shard', () => {
  it('answers only once the state is committed, and a new host starts from the committed row', async () => {
    const store = new MemoryEntityStore();
    const seen = counted();
    const a = hostShard(store, '1', seen);
    let committedAtAnswer = -1;
    const answer = deliver(a, { add: 5 }).then((outcome) => {
      committedAtAnswer = store.commits;
      return outcome;
    });
    expect(await answer).toEqual({ ok: true, value: 5 });
    expect(committedAtAnswer).toBe(1);
    expect(await deliver(a, { add: 2 })).toEqual({ ok: true, value: 7 });
    const b = hostShard(store, '2', seen);
    expect(await deliver(b, { add: 1 })).toEqual({ ok: true, value: 8 });
    expect(seen.restored).toEqual([undefined, 7]);
  });

  it('a send the old host committed is answered by the new host without running it again', async () => {
    const store = new MemoryEntityStore();
    const seen = counted();
    const a = hostShard(store, '1', seen);
    expect(await deliver(a, { add: 1, tag: 's1' }, mark(1))).toEqual({ ok: true, value: 1 });
    const b = hostShard(store, '2', seen);
    // The retry of s1 (its answer was lost with the old host) and a new send s2.
    expect(await deliver(b, { add: 1, tag: 's1' }, mark(1))).toEqual({ ok: true, value: null });
    expect(await deliver(b, { add: 1, tag: 's2' }, mark(2))).toEqual({ ok: true, value: 2 });
    expect(seen.ran).toEqual([
      { host: '1', tag: 's1' },
      { host: '2', tag: 's2' },
    ]);
  });

  it('an old host whose commit a later claim refuses acknowledges nothing more, and the new state stands', async () => {
    const store = new MemoryEntityStore();
    const seen = counted();
    const old = hostShard(store, '1', seen);
    expect(await deliver(old, { add: 10 })).toEqual({ ok: true, value: 10 });
    const next = hostShard(store, '2', seen);
    expect(await deliver(next, { add: 1 })).toEqual({ ok: true, value: 11 });
    // The old host, paused through all that, runs a message: its commit carries the old epoch.
    const late = await deliver(old, { add: 100 }, mark(1));
    expect(late).toMatchObject({ ok: false, code: 'entity_fenced', retry: true });
    expect(await deliver(old, { add: 100 })).toMatchObject({ ok: false, code: 'entity_fenced' });
    expect(store.fencedWrites).toBe(1);
    expect(await deliver(next, { get: true })).toEqual({ ok: true, value: 11 });
  });

  it('a store that fails acknowledges nothing and resets the entity to its committed row', async () => {
    const store = new MemoryEntityStore();
    const seen = counted();
    const shard = hostShard(store, '1', seen);
    expect(await deliver(shard, { add: 3 })).toEqual({ ok: true, value: 3 });
    store.down = true;
    expect(await deliver(shard, { add: 4 }, mark(1))).toMatchObject({
      ok: false,
      code: 'entity_store_unavailable',
      retry: true,
    });
    store.down = false;
    // The next incarnation read the row: the unacknowledged add is not in it; its retry applies it once.
    expect(await deliver(shard, { add: 4 }, mark(1))).toEqual({ ok: true, value: 7 });
    expect(seen.restored).toEqual([undefined, 3]);
  });

  it('a snapshot over maxEntitySnapshotBytes fails its message with a typed error and keeps the committed state', async () => {
    const store = new MemoryEntityStore();
    const shard = hostShard(store, '1', counted(), 200);
    expect(await deliver(shard, { add: 1 })).toEqual({ ok: true, value: 1 });
    expect(await deliver(shard, { add: 1, big: 500 })).toMatchObject({ ok: false, code: 'entity_snapshot_invalid' });
    expect(await deliver(shard, { get: true })).toEqual({ ok: true, value: 1 });
  });

  it('a stored row that does not decode fails the start with a typed error naming the entity', async () => {
    const store = new MemoryEntityStore();
    store.rows.set('T/bad', new Uint8Array([0xc1, 0xff, 0x00]));
    store.rows.set('T/old', encodeValue([99, null, []]));
    const shard = hostShard(store, '1', counted());
    const bad = await deliver(shard, { add: 1 }, undefined, 'bad');
    expect(bad).toMatchObject({ ok: false, code: 'entity_state_invalid' });
    expect(!bad.ok && bad.error).toContain('"bad"');
    expect(await deliver(shard, { add: 1 }, undefined, 'old')).toMatchObject({
      ok: false,
      code: 'entity_state_invalid',
    });
    // The rows are left as they are, and the shard's other entities run.
    expect(store.rows.get('T/bad')).toEqual(new Uint8Array([0xc1, 0xff, 0x00]));
    expect(await deliver(shard, { add: 2 }, undefined, 'fine')).toEqual({ ok: true, value: 2 });
  });

  it('a passivated entity comes back from the store', async () => {
    const store = new MemoryEntityStore();
    const seen = counted();
    const shard = hostShard(store, '1', seen);
    await deliver(shard, { add: 6 });
    shard.passivate('e', 'idle');
    expect(await deliver(shard, { add: 1 })).toEqual({ ok: true, value: 7 });
    expect(seen.restored).toEqual([undefined, 6]);
  });

  it('a stopping shard reports its end only after its last commits', async () => {
    const store = new MemoryEntityStore();
    const shard = hostShard(store, '1', counted());
    void deliver(shard, { add: 1 });
    void deliver(shard, { add: 1 });
    await shard.stop(1_000);
    expect(store.commits).toBeGreaterThanOrEqual(1);
    const next = hostShard(store, '2', counted());
    expect(await deliver(next, { get: true })).toEqual({ ok: true, value: 2 });
  });
});

describe('a durable answer that leaves the state as committed', () => {
  it('writes nothing, and leaves only once the commit before it is durable', async () => {
    const store = new MemoryEntityStore();
    const shard = hostShard(store, '1', counted());
    const changed = deliver(shard, { add: 5 });
    const unchanged = deliver(shard, { get: true });
    let commitsAtAnswer = -1;
    void unchanged.then(() => (commitsAtAnswer = store.commits));
    expect(await changed).toEqual({ ok: true, value: 5 });
    expect(await unchanged).toEqual({ ok: true, value: 5 });
    expect(commitsAtAnswer).toBe(1);
    expect(await deliver(shard, { add: 0 })).toEqual({ ok: true, value: 5 });
    expect(store.commits).toBe(1);
    expect(store.checks).toBeGreaterThanOrEqual(1);
  });

  it('a restored entity that answers without a change writes nothing either', async () => {
    const store = new MemoryEntityStore();
    expect(await deliver(hostShard(store, '1', counted()), { add: 7 })).toEqual({ ok: true, value: 7 });
    const next = hostShard(store, '2', counted());
    expect(await deliver(next, { get: true })).toEqual({ ok: true, value: 7 });
    expect(store.commits).toBe(1);
    // A reliable send is a change (its mark is committed with the state), whatever it does to the state.
    expect(await deliver(next, { add: 0 }, mark(1))).toEqual({ ok: true, value: 7 });
    expect(store.commits).toBe(2);
  });

  it('is refused on a host whose shard a later host claimed, which fences the shard there', async () => {
    const store = new MemoryEntityStore();
    const old = hostShard(store, '1', counted());
    expect(await deliver(old, { add: 10 })).toEqual({ ok: true, value: 10 });
    const next = hostShard(store, '2', counted());
    expect(await deliver(next, { add: 1 })).toEqual({ ok: true, value: 11 });
    // The old host, paused through that, answers a read from its state of 10: refused, not a stale answer.
    expect(await deliver(old, { get: true })).toMatchObject({ ok: false, code: 'entity_fenced', retry: true });
    expect(await deliver(old, { get: true }, undefined, 'other')).toMatchObject({ ok: false, code: 'entity_fenced' });
    expect(store.fencedWrites).toBe(0);
  });

  it('is not acknowledged when the commit before it failed, nor when the store cannot be read', async () => {
    const store = new MemoryEntityStore();
    const shard = hostShard(store, '1', counted());
    expect(await deliver(shard, { add: 3 })).toEqual({ ok: true, value: 3 });
    store.down = true;
    const [changed, unchanged] = await Promise.all([deliver(shard, { add: 4 }), deliver(shard, { get: true })]);
    expect(changed).toMatchObject({ ok: false, code: 'entity_store_unavailable' });
    expect(unchanged).toMatchObject({ ok: false, code: 'entity_store_unavailable', retry: true });
    expect(await deliver(shard, { get: true }, undefined, 'fresh')).toMatchObject({
      ok: false,
      code: 'entity_store_unavailable',
    });
    store.down = false;
    expect(await deliver(shard, { get: true })).toEqual({ ok: true, value: 3 });
  });

  it('is written again with a store that cannot check an epoch alone', async () => {
    const store = new MemoryEntityStore({ epochChecks: false });
    const shard = hostShard(store, '1', counted());
    expect(await deliver(shard, { add: 2 })).toEqual({ ok: true, value: 2 });
    expect(await deliver(shard, { get: true })).toEqual({ ok: true, value: 2 });
    expect(store.commits).toBe(2);
  });
});

describe('a durable shard stopping with an epoch check under way', () => {
  it('reports its end only once the check answered, so a graceful move fails no read', async () => {
    const store = new MemoryEntityStore();
    const shard = hostShard(store, '1', counted());
    expect(await deliver(shard, { add: 1 })).toEqual({ ok: true, value: 1 });
    let answered: unknown;
    void deliver(shard, { get: true }).then((outcome) => (answered = outcome));
    await shard.stop(1_000);
    expect(answered).toEqual({ ok: true, value: 1 });
    // Its next host claims only now: had the check been read after that claim, the read would have been refused.
    expect(await deliver(hostShard(store, '2', counted()), { get: true })).toEqual({ ok: true, value: 1 });
  });
});
