// The host's acknowledgements coalesced (reply-coalescer.ts): the answers without a value it owes one node within
// a tick leave in one EntityReplies frame, answers with a value or a failure still go alone, and an EntityReplies
// that is malformed, too long or unsolicited settles nothing on the asking node.
import { describe, expect, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import { isFamilyMessage, type WireMessage } from '../../src/cluster/transport/wire-message.js';
import { MAX_REPLIES_PER_MESSAGE } from '../../src/sharding/protocol/entity-messages.js';
import { SHARDING_MESSAGES } from '../../src/sharding/protocol/messages.js';
import { ReplyCoalescer } from '../../src/sharding/region/reply-coalescer.js';
import type { EntityBehavior } from '../../src/sharding/core/entity-api.js';
import { TestCluster, counter, entityInShard, pinTo, run, settle, useTestClusters, type TestNode } from './harness.js';

const SHARDS = 10;
const SHARD = 3;

/** What `node` sends to `to` from now on, by message type. */
function recordSends(node: TestNode, to: TestNode): WireMessage[] {
  const sent: WireMessage[] = [];
  const send = node.transport.send.bind(node.transport);
  node.transport.send = (address, message) => {
    if (address.toString() === to.key) sent.push(message);
    send(address, message);
  };
  return sent;
}

const ofType = (sent: readonly WireMessage[], type: string): WireMessage[] => sent.filter((m) => m.type === type);

/** The ask ids an EntityReplies carries; none for any other message. */
const askIdsOf = (message: WireMessage | undefined): readonly number[] =>
  message !== undefined && isFamilyMessage(SHARDING_MESSAGES, message) && message.type === 'EntityReplies'
    ? message.askIds
    : [];

describe('replies coalesced by the host', () => {
  let cluster: TestCluster;
  useTestClusters(() => (cluster = new TestCluster()));

  it('sends the acknowledgements of many sends to one node in one EntityReplies frame', async () => {
    const [a, b] = cluster.addNodes(7001, 7002);
    cluster.initAll({
      typeName: 'Counter',
      behavior: counter(),
      numberOfShards: SHARDS,
      allocationStrategy: pinTo(() => b.address),
    });
    const entities = [0, 1, 2, 3].map((i) => entityInShard(SHARD, SHARDS, `c${i}-`));
    const refs = entities.map((id) => a.sharding.entityRefFor('Counter', id));
    for (const ref of refs) await settle(ref.ask({ op: 'get' }));
    const fromHost = recordSends(b, a);
    const sends = Array.from({ length: 40 }, (_, i) => refs[i % refs.length]!.send({ op: 'inc' }));
    await settle(Promise.all(sends));
    const frames = ofType(fromHost, 'EntityReplies');
    expect(frames).toHaveLength(1);
    expect(new Set(askIdsOf(frames[0])).size).toBe(40);
    expect(ofType(fromHost, 'EntityReply')).toEqual([]);
    // Each send was processed once: the ten on each entity.
    for (const ref of refs)
      expect(await settle(ref.ask<{ count: number }>({ op: 'get' }))).toMatchObject({ count: 10 });
  });

  it('answers an ask with a value or a failure alone, and an ask answered null within the frame', async () => {
    const [a, b] = cluster.addNodes(7001, 7002);
    const behavior: EntityBehavior = () => ({
      receive: (message) => {
        if (message === 'fail') throw new Error('refused');
        return message === 'null' ? null : { echo: message };
      },
    });
    cluster.initAll({ typeName: 'T', behavior, numberOfShards: SHARDS, allocationStrategy: pinTo(() => b.address) });
    const ref = a.sharding.entityRefFor('T', entityInShard(SHARD, SHARDS));
    await settle(ref.ask('warm'));
    const fromHost = recordSends(b, a);
    const answers = Promise.allSettled([ref.ask('x'), ref.ask('null'), ref.send('y'), ref.ask('fail')]);
    const [value, nothing, sent, failed] = await settle(answers);
    expect(value).toEqual({ status: 'fulfilled', value: { echo: 'x' } });
    expect(nothing).toEqual({ status: 'fulfilled', value: null });
    expect(sent).toEqual({ status: 'fulfilled', value: undefined });
    expect(failed).toMatchObject({ status: 'rejected', reason: { code: 'entity_failed' } });
    expect(ofType(fromHost, 'EntityReply')).toHaveLength(2);
    expect(ofType(fromHost, 'EntityReplies')).toEqual([
      { type: 'EntityReplies', askIds: [expect.any(Number), expect.any(Number)] },
    ]);
  });

  it('drops a malformed or oversized EntityReplies and settles nothing with an unsolicited one', async () => {
    const [a, b] = cluster.addNodes(7001, 7002);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let processed = 0;
    const behavior: EntityBehavior = () => ({
      receive: async (message) => {
        if (message === 'wait') await gate;
        processed++;
      },
    });
    cluster.initAll({ typeName: 'T', behavior, numberOfShards: SHARDS, allocationStrategy: pinTo(() => b.address) });
    const ref = a.sharding.entityRefFor('T', entityInShard(SHARD, SHARDS));
    await settle(ref.send('warm'));
    let resolved = false;
    const pending = ref.send('wait', { timeoutMs: 20_000 }).then(() => (resolved = true));
    await run(200);
    // A forger whose family lets anything named EntityReplies through, so the asking node's gate judges it.
    const rogue = cluster.net.transport(NodeAddress.parse('rogue@127.0.0.1:6666'));
    rogue.register({ name: 'forged', types: new Set(['EntityReplies']), parse: (raw) => raw });
    const allIds = Array.from({ length: 100 }, (_, i) => i + 1);
    const forged = [
      { type: 'EntityReplies', askIds: [] },
      { type: 'EntityReplies', askIds: [...allIds, 0] },
      { type: 'EntityReplies', askIds: [...allIds, 1.5] },
      { type: 'EntityReplies', askIds: [...allIds, '7'] },
      { type: 'EntityReplies', askIds: { 0: 2 } },
      { type: 'EntityReplies' },
      { type: 'EntityReplies', askIds: Array.from({ length: MAX_REPLIES_PER_MESSAGE + 1 }, (_, i) => i + 1) },
    ];
    const unparsed = cluster.net.stats().unparsed;
    for (const message of forged) rogue.send(a.address, message);
    // Well formed but for asks `a` never made: nothing to settle.
    rogue.send(a.address, { type: 'EntityReplies', askIds: [424_242, 424_243] });
    await run(200);
    expect(cluster.net.stats().unparsed - unparsed).toBe(forged.length);
    expect(resolved).toBe(false);
    expect(a.sharding.stats().unroutableMessages).toBe(0);
    release();
    await settle(pending);
    expect(processed).toBe(2);
    await rogue.close();
  });
});

describe('ReplyCoalescer', () => {
  it('sends one frame per node when deferred work runs, and a full frame at once', () => {
    const sent: Array<[string, WireMessage]> = [];
    const deferred: Array<() => void> = [];
    const replies = new ReplyCoalescer(
      (to, message) => sent.push([to, message]) > 0,
      (flush) => void deferred.push(flush),
    );
    replies.add('n1', 1);
    replies.add('n2', 2);
    replies.add('n1', 3);
    expect(sent).toEqual([]);
    expect(deferred).toHaveLength(1);
    deferred.shift()?.();
    expect(sent).toEqual([
      ['n1', { type: 'EntityReplies', askIds: [1, 3] }],
      ['n2', { type: 'EntityReplies', askIds: [2] }],
    ]);
    sent.length = 0;
    for (let id = 1; id <= MAX_REPLIES_PER_MESSAGE + 1; id++) replies.add('n1', id);
    expect(sent).toHaveLength(1);
    expect(askIdsOf(sent[0]?.[1])).toHaveLength(MAX_REPLIES_PER_MESSAGE);
    deferred.shift()?.();
    expect(sent[1]).toEqual(['n1', { type: 'EntityReplies', askIds: [MAX_REPLIES_PER_MESSAGE + 1] }]);
    expect(SHARDING_MESSAGES.parse(sent[0]![1] as never)).toBeDefined();
  });
});
