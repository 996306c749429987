// Entity state travels with a graceful hand-off (issue 23): the old host snapshots each entity after its last
// message and sends the chunks to the new home (protocol 10; through the coordinator, ahead of HostShard, with
// older peers), which restores every entity before it delivers. Over the bound, an entity starts fresh and is
// counted; a state over one chunk travels in several. What the entities processed of reliable sends travels
// along, so a retry of a send the old host processed is answered by the new one, not processed again.
import { describe, expect, it } from 'vitest';
import { counterBehavior, type CounterValue } from '../../src/node/counter.js';
import type { EntityBehavior } from '../../src/sharding/core/entity-api.js';
import type { ShardingMessage } from '../../src/sharding/protocol/messages.js';
import { unpackEntities } from '../../src/sharding/protocol/packed-states.js';
import type { AllocationStrategy } from '../../src/sharding/strategies/index.js';
import {
  TestCluster,
  entityInShard,
  eventually,
  moveShard as move,
  pinTo,
  run,
  settle,
  useTestClusters,
} from './harness.js';
import type { TestNode } from './harness.js';

const SHARDS = 10;

/** A sent chunk's entities, from the packed binary it carries on the wire (or its list, on protocol 7). */
function entitiesOnWire(chunk: ShardingMessage): ReadonlyArray<unknown> {
  const { packed, entities } = chunk as { packed?: Uint8Array; entities?: ReadonlyArray<unknown> };
  return packed === undefined ? (entities ?? []) : (unpackEntities(packed, LIMITS) ?? []);
}
const LIMITS = { maxEntities: 100_000, maxEntityIdLength: 1024 };

/** An entity holding `{ op: 'put', blob }` strings; its snapshot is every blob so far. */
const blobs: EntityBehavior = (ctx) => {
  const kept: string[] = Array.isArray(ctx.restored) ? (ctx.restored as string[]) : [];
  return {
    receive: (message) => {
      const m = message as { op: string; blob?: string };
      if (m.op === 'put' && typeof m.blob === 'string') kept.push(m.blob);
      return {
        count: kept.length,
        bytes: kept.reduce((n, b) => n + b.length, 0),
        restored: ctx.restored !== undefined,
      };
    },
    snapshot: () => kept,
  };
};

describe('entity state across a graceful hand-off', () => {
  let cluster: TestCluster;
  let target: () => string = () => '';
  useTestClusters(() => (cluster = new TestCluster()));

  /** a, b, c and what b sends; `relayed`: every handshake agreed protocol 9 (the state goes via the coordinator). */
  function start(
    behavior: EntityBehavior,
    config = {},
    relayed = false,
  ): { a: TestNode; b: TestNode; c: TestNode; sent: ShardingMessage[] } {
    cluster = new TestCluster({ config });
    const [a, b, c] = cluster.addNodes(7001, 7002, 7003);
    if (relayed) for (const n of [a, b, c]) Object.assign(n.transport, { protocols: { of: () => ({ protocol: 9 }) } });
    target = () => b.key;
    cluster.initAll({
      typeName: 'Counter',
      behavior,
      numberOfShards: SHARDS,
      allocationStrategy: pinTo(() => target()),
    });
    const sent: ShardingMessage[] = [];
    const send = b.transport.send.bind(b.transport);
    b.transport.send = (to, message) => {
      sent.push(message as unknown as ShardingMessage);
      send(to, message);
    };
    return { a, b, c, sent };
  }

  const moveShard = (via: TestNode, shardId: number, to: TestNode, from: TestNode): Promise<void> =>
    move({ via, shardId, from, to }, (node) => (target = () => node.key));

  /** Drops `from`'s messages that would give `to` a shard: its state, HostShard, ShardHome. */
  function withholdShards(from: TestNode, to: TestNode): void {
    const send = from.transport.send.bind(from.transport);
    from.transport.send = (address, message) => {
      const type = (message as { type: string }).type;
      if (address.equals(to.address) && ['RestoreShardState', 'HostShard', 'ShardHome'].includes(type)) return;
      send(address, message);
    };
  }

  /** The Counter `id` asked through `via` to do `op` (`get` or `increment`), answered. */
  const counter = (via: TestNode, id: string, op: 'get' | 'increment' = 'get'): Promise<CounterValue> =>
    settle(via.sharding.entityRefFor('Counter', id).ask<CounterValue>({ op }));
  const countUp = async (via: TestNode, id: string, times: number): Promise<void> => {
    for (let i = 0; i < times; i++) await counter(via, id, 'increment');
  };

  /** Bytes of hand-off state the coordinator on `node` holds, and the old host's kept copy on `node`. */
  const heldAt = (node: TestNode): number =>
    node.sharding.stats().types['Counter']?.coordinator?.handOffStateBytes ?? 0;
  const retainedAt = (node: TestNode): number | undefined =>
    node.sharding.stats().types['Counter']?.region.stateBytesRetained;

  it('keeps every Counter value through rebalanceNow and a graceful leave', async () => {
    const { a, b, c } = start(counterBehavior);
    const ids = [entityInShard(4, SHARDS, 'x'), entityInShard(4, SHARDS, 'y'), entityInShard(4, SHARDS, 'z')];
    for (const [i, id] of ids.entries()) {
      for (let n = 0; n <= i; n++)
        await settle(a.sharding.entityRefFor('Counter', id).ask({ op: 'increment', by: 10 }));
    }
    await moveShard(a, 4, c, b);
    for (const [i, id] of ids.entries()) {
      expect(await counter(a, id)).toMatchObject({
        value: 10 * (i + 1),
        node: c.key,
      });
    }
    // A graceful leave of the host hands the shard on with its state too (the strategy's fallback takes it).
    target = () => b.key;
    const left = cluster.members.leave(c.address);
    await settle(left);
    expect(c.sharding.stats().types['Counter']?.region).toMatchObject({ snapshotsShipped: 3 });
    expect(b.sharding.stats().types['Counter']?.region).toMatchObject({ snapshotsRestored: 3 });
    for (const [i, id] of ids.entries()) {
      const answer = await settle(a.sharding.entityRefFor('Counter', id).ask<CounterValue>({ op: 'increment', by: 1 }));
      expect(answer).toMatchObject({ value: 10 * (i + 1) + 1 });
      expect(answer.node).not.toBe(c.key);
    }
  });

  it('a new home on protocol 7 gets the state as the list, from a coordinator that received it packed', async () => {
    const { a, b, c, sent } = start(counterBehavior);
    // What a's and b's handshakes with c would agree if c ran the previous release (its range [7, 7]).
    const older = { of: (peer: string) => ({ protocol: peer === c.key ? 7 : 8 }) };
    for (const node of [a, b]) Object.assign(node.transport, { protocols: older });
    const toC = sentTo(a, c);
    const id = entityInShard(4, SHARDS, 'v');
    await countUp(a, id, 3);
    await moveShard(a, 4, c, b);
    expect(await counter(a, id)).toMatchObject({ value: 3, node: c.key });
    const restores = toC.filter((m) => m.type === 'RestoreShardState');
    expect(restores.length).toBeGreaterThan(0);
    for (const restore of restores) expect(Object.keys(restore)).toEqual(expect.arrayContaining(['entities']));
    expect(restores.some((m) => 'packed' in m)).toBe(false);
    const chunks = sent.filter((m) => m.type === 'ShardStateChunk');
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks.every((m) => 'packed' in m && !('entities' in m))).toBe(true);
  });

  it('a packed chunk garbled on the way is refused whole: the shard starts fresh on its new home once its hand-off timeout passed, nothing else changes', async () => {
    const { a, b, c } = start(counterBehavior, { handOffTimeoutMs: 5_000 });
    const kept = entityInShard(3, SHARDS, 'k');
    const moved = entityInShard(4, SHARDS, 'm');
    await countUp(a, kept, 2);
    await countUp(a, moved, 3);
    // The old host's chunk for c loses its last byte: c's parse refuses the whole message.
    const send = b.transport.send.bind(b.transport);
    b.transport.send = (to, message) => {
      const packed = (message as { packed?: Uint8Array }).packed;
      if (to.equals(c.address) && message.type === 'RestoreShardState' && packed !== undefined)
        return send(to, { ...message, packed: packed.subarray(0, packed.byteLength - 1) });
      send(to, message);
    };
    await moveShard(a, 4, c, b);
    expect(await counter(a, moved)).toMatchObject({ value: 0, node: c.key });
    expect(c.sharding.stats().types['Counter']?.region).toMatchObject({ snapshotsRestored: 0 });
    expect(await counter(a, kept)).toMatchObject({ value: 2, node: b.key });
  });

  it('an entity whose snapshot exceeds maxEntitySnapshotBytes starts fresh, is counted, and the others keep theirs', async () => {
    const { a, b, c } = start(blobs, { maxEntitySnapshotBytes: 4_096 });
    const small = entityInShard(5, SHARDS, 's');
    const big = entityInShard(5, SHARDS, 'b');
    await settle(a.sharding.entityRefFor('Counter', small).ask({ op: 'put', blob: 'x'.repeat(100) }));
    await settle(a.sharding.entityRefFor('Counter', big).ask({ op: 'put', blob: 'y'.repeat(10_000) }));
    await moveShard(a, 5, c, b);
    expect(await settle(a.sharding.entityRefFor('Counter', small).ask({ op: 'get' }))).toEqual({
      count: 1,
      bytes: 100,
      restored: true,
    });
    expect(await settle(a.sharding.entityRefFor('Counter', big).ask({ op: 'get' }))).toEqual({
      count: 0,
      bytes: 0,
      restored: false,
    });
    expect(b.sharding.stats().types['Counter']?.region).toMatchObject({ snapshotsTooLarge: 1, snapshotsShipped: 1 });
  });

  it('chunks a shard whose state exceeds one chunk, sends them straight to the new home, and restores all of it', async () => {
    const { a, b, c, sent } = start(blobs, { stateChunkBytes: 16 * 1024 });
    const ids = Array.from({ length: 12 }, (_, i) => entityInShard(6, SHARDS, `c${i}-`));
    for (const id of ids)
      await settle(a.sharding.entityRefFor('Counter', id).ask({ op: 'put', blob: 'z'.repeat(5_000) }));
    const toCoordinator = sentTo(b, a);
    await moveShard(a, 6, c, b);
    // Protocol 10: from b to c as c's RestoreShardState; the coordinator neither got nor holds any of it.
    const chunks = sent.filter((m) => m.type === 'RestoreShardState');
    expect(toCoordinator.filter((m) => m.type === 'ShardStateChunk')).toEqual([]);
    expect(heldAt(a)).toBe(0);
    expect(chunks.length).toBeGreaterThanOrEqual(4);
    // On the wire (protocol 8) a chunk's entities are one packed binary.
    for (const chunk of chunks) expect(entitiesOnWire(chunk).length).toBeLessThanOrEqual(3);
    for (const id of ids)
      expect(await settle(a.sharding.entityRefFor('Counter', id).ask({ op: 'get' }))).toEqual({
        count: 1,
        bytes: 5_000,
        restored: true,
      });
  });

  /** Ids of 12 entities of shard 6, each holding a 5,000-byte blob (with 16 KiB chunks: four chunks or more). */
  async function blobsInShard6(via: TestNode): Promise<string[]> {
    const ids = Array.from({ length: 12 }, (_, i) => entityInShard(6, SHARDS, `s${i}-`));
    for (const id of ids)
      await settle(via.sharding.entityRefFor('Counter', id).ask({ op: 'put', blob: 'z'.repeat(5_000) }));
    return ids;
  }

  /** What `node` sends to `to`, recorded (after the link put it in the form `to`'s protocol reads). */
  function sentTo(node: TestNode, to: TestNode): ShardingMessage[] {
    const recorded: ShardingMessage[] = [];
    const send = node.transport.send.bind(node.transport);
    node.transport.send = (address, message) => {
      if (address.equals(to.address)) recorded.push(message as unknown as ShardingMessage);
      send(address, message);
    };
    return recorded;
  }

  const place = (chunk: ShardingMessage) => {
    const { part, parts, last } = chunk as { part: number; parts?: number; last?: true };
    return { part, parts, last };
  };

  it('mixed versions: a protocol-9 old host streams (no count, the last marked); a new home on 8 gets the count', async () => {
    const { a, b, c, sent } = start(blobs, { stateChunkBytes: 16 * 1024 });
    // a (the coordinator) and b on 9; c on 8, as a's handshake with it would agree.
    Object.assign(a.transport, { protocols: { of: (peer: string) => ({ protocol: peer === c.key ? 8 : 9 }) } });
    Object.assign(b.transport, { protocols: { of: () => ({ protocol: 9 }) } });
    const toC = sentTo(a, c);
    const ids = await blobsInShard6(a);
    await moveShard(a, 6, c, b);
    const chunks = sent.filter((m) => m.type === 'ShardStateChunk').map(place);
    expect(chunks.length).toBeGreaterThanOrEqual(4);
    expect(chunks).toEqual(
      chunks.map((_, part) => ({ part, parts: undefined, last: part === chunks.length - 1 || undefined })),
    );
    const restores = toC.filter((m) => m.type === 'RestoreShardState').map(place);
    expect(restores).toEqual(chunks.map(({ part }) => ({ part, parts: chunks.length, last: undefined })));
    for (const id of ids)
      expect(await settle(a.sharding.entityRefFor('Counter', id).ask({ op: 'get' }))).toMatchObject({ restored: true });
  });

  it('mixed versions: an old host on 8 sends the count, and a coordinator and new home on 9 read it', async () => {
    const { a, b, c, sent } = start(blobs, { stateChunkBytes: 16 * 1024 });
    // b runs the previous release: its handshakes agree 8, and so does a's with b.
    Object.assign(a.transport, { protocols: { of: (peer: string) => ({ protocol: peer === b.key ? 8 : 9 }) } });
    Object.assign(b.transport, { protocols: { of: () => ({ protocol: 8 }) } });
    const toC = sentTo(a, c);
    const ids = await blobsInShard6(a);
    await moveShard(a, 6, c, b);
    const chunks = sent.filter((m) => m.type === 'ShardStateChunk').map(place);
    expect(chunks.length).toBeGreaterThanOrEqual(4);
    expect(chunks).toEqual(chunks.map((_, part) => ({ part, parts: chunks.length, last: undefined })));
    expect(toC.filter((m) => m.type === 'RestoreShardState').map(place)).toEqual(chunks);
    for (const id of ids)
      expect(await settle(a.sharding.entityRefFor('Counter', id).ask({ op: 'get' }))).toMatchObject({ restored: true });
  });

  it('relayed: a coordinator lost mid-hand-off loses neither the state it held nor a message: the old host kept a copy', async () => {
    const { a, b, c } = start(counterBehavior, {}, true);
    const id = entityInShard(7, SHARDS, 'k');
    await countUp(b, id, 5);
    // a (the coordinator) receives b's state but never gets it, the HostShard or the news to c before it dies.
    withholdShards(a, c);
    target = () => c.key;
    await settle(b.sharding.rebalanceNow('Counter', [7]));
    await eventually(() => !b.sharding.localShards('Counter').includes(7), 'shard 7 stopped on b');
    await eventually(() => heldAt(a) > 0, 'the state held by a');
    const during = b.sharding.entityRefFor('Counter', id).ask<CounterValue>({ op: 'increment' }, { timeoutMs: 20_000 });
    expect(retainedAt(b)).toBeGreaterThan(0);
    await cluster.crashAndRemove(a);
    // b is the coordinator now: its region names the state it kept, the new coordinator asks for it, and c
    // restores it before the ask sent meanwhile is applied there.
    expect(await settle(during)).toMatchObject({ value: 6, node: c.key });
    expect(await counter(b, id)).toMatchObject({ value: 6, node: c.key });
    // c's start released b's copy.
    await eventually(() => retainedAt(b) === 0, 'b released');
  });

  it('keeps the values through a graceful leave of the oldest node (the coordinator) while it hosts them', async () => {
    const { a, b, c } = start(counterBehavior);
    target = () => a.key;
    const ids = [entityInShard(8, SHARDS, 'o'), entityInShard(8, SHARDS, 'p')];
    for (const id of ids) await countUp(c, id, 3);
    expect(a.sharding.localShards('Counter')).toEqual([8]);
    await settle(cluster.members.leave(a.address));
    for (const id of ids) {
      const answer = await counter(c, id, 'increment');
      expect(answer.value).toBe(4);
      expect([b.key, c.key]).toContain(answer.node);
    }
  });

  it("relayed: a coordinator's node that leaves mid-hand-off loses no state: the old host's copy goes to the next one", async () => {
    const { a, b, c } = start(counterBehavior, {}, true);
    const id = entityInShard(2, SHARDS, 'm');
    await countUp(c, id, 3);
    withholdShards(a, c);
    target = () => c.key;
    await settle(c.sharding.rebalanceNow('Counter', [2]));
    await eventually(() => heldAt(a) > 0, 'the state held by a');
    // a leaves (a rolling restart's step): its coordinator stops with the state; b's takes over.
    await settle(cluster.members.leave(a.address));
    expect(await counter(c, id, 'increment')).toMatchObject({
      value: 4,
      node: c.key,
    });
    await eventually(() => retainedAt(b) === 0, 'b released');
  });

  it('relayed: a leaving node waits until its state is restored, so a coordinator crash meanwhile loses none of it', async () => {
    const { a, b, c } = start(counterBehavior, {}, true);
    target = () => c.key;
    const id = entityInShard(3, SHARDS, 'q');
    await countUp(b, id, 4);
    expect(c.sharding.localShards('Counter')).toEqual([3]);
    // b never hears of its new shard from a: a's coordinator holds c's state while c leaves.
    withholdShards(a, b);
    target = () => b.key;
    let left = false;
    void cluster.members.leave(c.address).then(() => (left = true));
    await eventually(() => heldAt(a) > 0, 'the state held by a');
    await run(2_000);
    expect(left).toBe(false);
    expect(retainedAt(c)).toBeGreaterThan(0);
    // The coordinator dies with its copy; b's asks c, still leaving, for the one it kept.
    await cluster.crashAndRemove(a);
    await eventually(() => left, "c's leave");
    expect(await counter(b, id)).toMatchObject({
      value: 4,
      node: b.key,
    });
  });

  it('a leaving node whose shard no other region may take ends its leave without waiting for a release', async () => {
    cluster = new TestCluster();
    const [a, b] = cluster.addNodes(7001, 7002);
    // Shard 1 may live on b alone (as under a require pin): once b leaves it has no home.
    const onlyB: AllocationStrategy = {
      allocate: (_shardId, candidates) => candidates.find((c) => c.equals(b.address)),
      rebalance: () => new Set(),
    };
    cluster.initAll({
      typeName: 'Counter',
      behavior: counterBehavior,
      numberOfShards: SHARDS,
      allocationStrategy: onlyB,
    });
    await settle(a.sharding.entityRefFor('Counter', entityInShard(1, SHARDS)).ask({ op: 'increment' }));
    expect(b.sharding.localShards('Counter')).toEqual([1]);
    let left = false;
    void cluster.members.leave(b.address).then(() => (left = true));
    await eventually(() => left, "b's leave", 5_000);
    expect(retainedAt(b)).toBe(0);
    // The state waits at the coordinator for a home.
    expect(heldAt(a)).toBeGreaterThan(0);
  });

  it('a send whose confirmation was lost before the move is answered by the new home, not processed again', async () => {
    const { a, b, c } = start(counterBehavior);
    const id = entityInShard(9, SHARDS, 'r');
    await settle(a.sharding.entityRefFor('Counter', id).ask({ op: 'increment' }));
    // b processes the send, but its confirmation never reaches a: a keeps retrying it.
    let loseReplies = true;
    const send = b.transport.send.bind(b.transport);
    b.transport.send = (to, message) => {
      if (!loseReplies || !['EntityReply', 'EntityReplies'].includes((message as { type: string }).type))
        send(to, message);
    };
    const sent = a.sharding.entityRefFor('Counter', id).send({ op: 'increment' });
    await eventually(
      () => (b.sharding.stats().types['Counter']?.region.messagesDeduplicated ?? 0) > 0,
      'a retry reached b',
    );
    await moveShard(a, 9, c, b);
    loseReplies = false;
    await settle(sent);
    expect(c.sharding.stats().types['Counter']?.region.messagesDeduplicated).toBeGreaterThan(0);
    expect(await counter(a, id)).toMatchObject({
      value: 2,
      node: c.key,
    });
  });
});
