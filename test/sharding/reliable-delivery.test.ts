// Both ends of reliable send on their own: the sender's bounds and retry copies, the host's duplicate table
// (a running copy dropped, a done one answered again with the same success or failure, numbers below the
// sender's oldest outstanding one forgotten, a shard's entries handed to another host), and `send` refusing
// at once beyond the bounds.
import { describe, expect, it } from 'vitest';
import type { EntityOutcome } from '../../src/sharding/core/entity-api.js';
import { DedupTable, parseProcessedSends } from '../../src/sharding/region/dedup-table.js';
import { ReliableDelivery } from '../../src/sharding/region/reliable-delivery.js';
import { TestCluster, entityInShard, pinTo, run, settle, useTestClusters } from './harness.js';
import { counter } from './harness.js';

const LIMITS = { maxOutstandingSends: 3, maxOutstandingSendsPerShard: 2 };
const replyTo = (askId: number) => ({ node: 'sys@127.0.0.1:1', askId });

describe('ReliableDelivery as sender', () => {
  it('refuses beyond the per-shard and per-region bounds, and frees a slot when a send closes', () => {
    const sends = new ReliableDelivery(LIMITS);
    expect(sends.open(1, 'e', 1, replyTo(1))).toBeDefined();
    expect(sends.open(1, 'e', 2, replyTo(2))).toBeDefined();
    expect(sends.open(1, 'e', 3, replyTo(3))).toBeUndefined();
    expect(sends.open(2, 'e', 4, replyTo(4))).toBeDefined();
    expect(sends.open(3, 'e', 5, replyTo(5))).toBeUndefined();
    sends.closed(1);
    expect(sends.open(1, 'e', 6, replyTo(6))).toMatchObject({ reliable: { seq: 6, below: 2 } });
  });

  it('retries a send only after a whole tick, with the oldest outstanding number, and not while it waits in the buffer', () => {
    const sends = new ReliableDelivery(LIMITS);
    sends.open(1, 'e', 'a', replyTo(10));
    sends.open(2, 'e', 'b', replyTo(11));
    sends.routed(10, 'forwarded');
    expect(sends.retries(() => false)).toEqual([]);
    const copies = sends.retries((envelope) => envelope.replyTo?.askId === 11);
    expect(copies.map((c) => c.reliable)).toEqual([{ incarnation: sends.incarnation, seq: 10, below: 10 }]);
    expect(sends.hasLeft(10)).toBe(true);
    expect(sends.hasLeft(11)).toBe(false);
    expect(sends.stats().messagesRedelivered).toBe(1);
  });
});

const E = { shardId: 1, entityId: 'e' };

describe('DedupTable (the host)', () => {
  it('drops a copy of a running send, answers a done one again with the same result, and forgets below the mark', () => {
    const host = new DedupTable();
    const replies: EntityOutcome[] = [];
    const reply = (outcome: EntityOutcome) => void replies.push(outcome);
    const first = host.admit('s', { incarnation: 1, seq: 5, below: 5 }, E, reply);
    expect(first).toBeDefined();
    expect(host.admit('s', { incarnation: 1, seq: 5, below: 5 }, E, reply)).toBeUndefined();
    expect(replies).toEqual([]);
    first?.({ ok: true, value: 'big answer' });
    expect(replies).toEqual([{ ok: true, value: null }]);
    expect(host.admit('s', { incarnation: 1, seq: 5, below: 5 }, E, reply)).toBeUndefined();
    expect(replies[1]).toEqual({ ok: true, value: null });
    const failing = host.admit('s', { incarnation: 1, seq: 6, below: 5 }, E, reply);
    failing?.({ ok: false, error: 'boom' });
    expect(host.admit('s', { incarnation: 1, seq: 6, below: 5 }, E, reply)).toBeUndefined();
    expect(replies[3]).toMatchObject({ ok: false });
    // Another incarnation of the sender (it restarted) numbers afresh.
    expect(host.admit('s', { incarnation: 2, seq: 5, below: 5 }, E, reply)).toBeDefined();
    // The sender says nothing below 7 is outstanding: 5 and 6 are forgotten.
    host.admit('s', { incarnation: 1, seq: 7, below: 7 }, E, reply);
    expect(host.admit('s', { incarnation: 1, seq: 5, below: 7 }, E, reply)).toBeDefined();
    expect(host.deduplicated).toBe(3);
  });

  it("hands a shard's processed sends to another table, by entity, so a retry there is answered and not run", () => {
    const old = new DedupTable();
    const replies: EntityOutcome[] = [];
    const reply = (outcome: EntityOutcome) => void replies.push(outcome);
    const sender = 'sys@127.0.0.1:1';
    const processOld = (
      seq: number,
      below: number,
      target: typeof E,
      outcome: EntityOutcome = { ok: true, value: 1 },
    ) => old.admit(sender, { incarnation: 1, seq, below }, target, reply)?.(outcome);
    processOld(5, 5, E);
    processOld(6, 5, { shardId: 1, entityId: 'f' }, { ok: false, error: 'boom' });
    processOld(7, 5, { shardId: 2, entityId: 'g' });
    const moved = old.take(1);
    expect([...moved]).toEqual([
      ['e', [{ node: sender, incarnation: 1, done: [5], failed: [] }]],
      ['f', [{ node: sender, incarnation: 1, done: [6], failed: [6] }]],
    ]);
    // The old host keeps its copy (the shard may come back), until the sender's progress passes it.
    expect(old.admit(sender, { incarnation: 1, seq: 5, below: 5 }, E, reply)).toBeUndefined();
    processOld(9, 8, { shardId: 2, entityId: 'g' });
    old.prune();
    expect(old.take(1)).toEqual(new Map());
    const next = new DedupTable();
    next.restore(1, moved);
    replies.length = 0;
    expect(next.admit(sender, { incarnation: 1, seq: 5, below: 5 }, E, reply)).toBeUndefined();
    expect(
      next.admit(sender, { incarnation: 1, seq: 6, below: 5 }, { shardId: 1, entityId: 'f' }, reply),
    ).toBeUndefined();
    expect(replies).toEqual([{ ok: true, value: null }, expect.objectContaining({ ok: false })]);
    expect(next.deduplicated).toBe(2);
  });

  it("carries its senders' progress with a shard: the new home forgets what the old host forgot (issue 40)", () => {
    const sender = 'sys@127.0.0.1:1';
    const process = (host: DedupTable, seq: number, below: number, shardId = 1, entityId = 'e') =>
      host.admit(sender, { incarnation: 1, seq, below }, { shardId, entityId }, () => {})?.({ ok: true, value: 1 });
    const [a, b, unaware] = [new DedupTable(), new DedupTable(), new DedupTable()];
    for (const host of [a, unaware]) process(host, 5, 1);
    const toB = a.take(1);
    unaware.take(1);
    b.restore(1, toB);
    b.advance(1, a.progressOf(1));
    // B then hears from the sender that nothing below 8 is outstanding (a send to another shard), and e runs 10.
    process(b, 9, 8, 2, 'g');
    process(b, 10, 8);
    const toA = b.take(1);
    expect(toA.get('e')).toEqual([{ node: sender, incarnation: 1, done: [10], failed: [] }]);
    const progress = b.progressOf(1);
    expect(progress).toEqual([{ node: sender, incarnation: 1, below: 8 }]);
    // Back on A, which kept 5: with B's progress it gives e's sends on as they came back (its state is not
    // spliced again); a host that never heard that progress gives 5 and 10, and would splice it at every hop.
    for (const host of [a, unaware]) host.restore(1, toA);
    a.advance(1, progress);
    expect(a.take(1).get('e')).toEqual(toA.get('e'));
    expect(unaware.take(1).get('e')?.[0]?.done).toEqual([5, 10]);
    // Progress never goes back, and a sender the shard has no entries of is not added.
    a.advance(1, [
      { node: sender, incarnation: 1, below: 2 },
      { node: 'sys@127.0.0.1:2', incarnation: 3, below: 50 },
    ]);
    expect(a.progressOf(1)).toEqual(progress);
    expect(a.progressOf(7)).toEqual([]);
  });

  it('refuses processed sends from the network that are not well formed', () => {
    const node = 'sys@127.0.0.1:1';
    expect(parseProcessedSends([{ node, incarnation: 1, done: [1, 2], failed: [] }])).toHaveLength(1);
    for (const bad of [
      {},
      [{ node: 'nobody', incarnation: 1, done: [], failed: [] }],
      [{ node, incarnation: 0, done: [], failed: [] }],
      [{ node, incarnation: 1, done: [1.5], failed: [] }],
      [{ node, incarnation: 1, done: [], failed: 'x' }],
      [{ node, incarnation: 1, done: new Array(10_001).fill(1), failed: [] }],
    ])
      expect(parseProcessedSends(bad)).toBeUndefined();
  });
});

describe('send bounds', () => {
  let cluster: TestCluster;
  useTestClusters(() => (cluster = new TestCluster({ config: { maxOutstandingSendsPerShard: 2 } })));

  it('rejects a send beyond maxOutstandingSendsPerShard at once with buffer_overflow', async () => {
    const [a, b] = cluster.addNodes(7001, 7002);
    cluster.initAll({
      typeName: 'Counter',
      behavior: counter(),
      numberOfShards: 10,
      allocationStrategy: pinTo(() => b.address),
    });
    const ref = a.sharding.entityRefFor('Counter', entityInShard(2, 10));
    await settle(ref.ask({ op: 'inc' }));
    cluster.members.setReachable(b.address, false);
    const held = [ref.send({ op: 'inc' }, { timeoutMs: 10_000 }), ref.send({ op: 'inc' }, { timeoutMs: 10_000 })];
    await expect(ref.send({ op: 'inc' })).rejects.toMatchObject({ code: 'buffer_overflow' });
    cluster.members.setReachable(b.address, true);
    await settle(Promise.all(held));
    await run(100);
    expect(await settle(ref.ask({ op: 'get' }))).toMatchObject({ count: 3 });
  });
});
