// The states a shard holds for entities never woken on its host go to its likely next home as the hand-off begins
// (protocol 12: BeginHandOff names the coming HandOff and the home), ahead of the stop, across in-process nodes:
// they are the first parts of the HandOff's transfer, the stop's parts follow them, and every entity reads the
// value it had. Wherever the transfer goes after all, its parts are the same: a shard allocated elsewhere gets the
// old host's copy, and a HandOff naming another home (the one told is gone) gets the chunks sent ahead again first.
import { describe, expect, it } from 'vitest';
import type { CounterValue } from '../../src/node/counter.js';
import type { ShardingMessage } from '../../src/sharding/protocol/messages.js';
import { TestCluster, counterNodes, entityInShard, eventually, settle, useTestClusters } from './harness.js';
import { runFor } from '../support/fake-time.js';
import type { TestNode } from './harness.js';

const SHARDS = 10;
const SHARD = 6;

type Sent = {
  readonly to: string;
  readonly type: ShardingMessage['type'];
  readonly part?: number;
  readonly last?: true;
};

describe('held states sent ahead of the stop', () => {
  let cluster: TestCluster;
  let target: () => string = () => '';
  useTestClusters(() => (cluster = new TestCluster()));

  /**
   * a (the coordinator), b and c; shard SHARD's Counters (`ids`, the i-th at i + 1) counted on b, then moved to c,
   * which holds their states without waking them.
   */
  async function heldOnC(): Promise<{ a: TestNode; b: TestNode; c: TestNode; ids: string[] }> {
    const started = counterNodes(SHARDS, () => target());
    cluster = started.cluster;
    const [a, b, c] = started.nodes;
    target = () => b.key;
    const ids = ['d', 'e', 'f', 'g'].map((prefix) => entityInShard(SHARD, SHARDS, prefix));
    for (const [i, id] of ids.entries()) for (let n = 0; n <= i; n++) await counter(a, id, 'increment');
    await move(a, c);
    expect(c.sharding.localShards('Counter')).toEqual([SHARD]);
    expect(c.sharding.stats().types['Counter']?.region).toMatchObject({ snapshotsRestored: ids.length });
    return { a, b, c, ids };
  }

  const counter = (via: TestNode, id: string, op: 'get' | 'increment' = 'get'): Promise<CounterValue> =>
    settle(via.sharding.entityRefFor('Counter', id).ask<CounterValue>({ op }));

  async function move(coordinator: TestNode, to: TestNode): Promise<void> {
    target = () => to.key;
    await settle(coordinator.sharding.rebalanceNow('Counter', [SHARD]));
    await eventually(() => to.sharding.localShards('Counter').includes(SHARD), `shard ${SHARD} started on ${to.key}`);
  }

  /**
   * What `node` sends of a hand-off's messages, in order, and `HandOff` where the coordinator `coordinator` sent it
   * the HandOff (after the owner's BeginHandOffAck: whatever the owner sent before is ahead of its stop).
   */
  function record(node: TestNode, coordinator: TestNode, peers: ReadonlyArray<TestNode>): Array<Sent | 'HandOff'> {
    const log: Array<Sent | 'HandOff'> = [];
    const name = (address: TestNode['address']): string =>
      peers.find((peer) => address.equals(peer.address))?.key ?? '?';
    const send = node.transport.send.bind(node.transport);
    node.transport.send = (address, message) => {
      const { type, part, last } = message as { type: ShardingMessage['type']; part?: number; last?: true };
      if (type === 'RestoreShardState' || type === 'ShardStopped')
        log.push({ to: name(address), type, ...(part !== undefined && { part }), ...(last && { last }) });
      send(address, message);
    };
    const sendFromCoordinator = coordinator.transport.send.bind(coordinator.transport);
    coordinator.transport.send = (address, message) => {
      if ((message as { type: string }).type === 'HandOff' && address.equals(node.address)) log.push('HandOff');
      sendFromCoordinator(address, message);
    };
    return log;
  }

  it('sends the held states to the next home as the hand-off begins; the stop ends the transfer', async () => {
    const { a, b, c, ids } = await heldOnC();
    const sent = record(c, a, [a, b]);
    await move(a, b);
    for (const [i, id] of ids.entries()) expect(await counter(a, id)).toMatchObject({ value: i + 1, node: b.key });
    const chunks = sent.filter((entry) => entry !== 'HandOff' && entry.type === 'RestoreShardState');
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.every((chunk) => chunk !== 'HandOff' && chunk.to === b.key)).toBe(true);
    // The held chunk before the HandOff was sent, the report and the transfer's last part after it.
    const handOff = sent.indexOf('HandOff');
    expect(sent.slice(0, handOff)).toContainEqual({ to: b.key, type: 'RestoreShardState', part: 0 });
    expect(sent.slice(handOff)).toContainEqual(expect.objectContaining({ type: 'RestoreShardState', last: true }));
    expect(b.sharding.stats().types['Counter']?.region).toMatchObject({ snapshotsRestored: ids.length });
  });

  /**
   * c's held chunks sent to b as the hand-off of SHARD from c begins, c's acknowledgement held back meanwhile;
   * `between` runs before it is released. What c sent of the transfer, by destination.
   */
  async function toldB(between: (nodes: { a: TestNode; b: TestNode }) => Promise<void> | void) {
    const { a, b, c, ids } = await heldOnC();
    const sent = record(c, a, [a, b]);
    const acks = holdBack(c, a, 'BeginHandOffAck');
    target = () => b.key;
    const rebalanced = a.sharding.rebalanceNow('Counter', [SHARD]);
    await eventually(() => acks.count > 0, 'c acknowledged BeginHandOff');
    await between({ a, b });
    acks.release();
    await settle(rebalanced);
    await eventually(() => a.sharding.localShards('Counter').includes(SHARD), 'shard started on a');
    for (const [i, id] of ids.entries()) expect(await counter(a, id)).toMatchObject({ value: i + 1, node: a.key });
    const chunksTo = (node: TestNode): Sent[] =>
      sent.flatMap((entry) =>
        entry !== 'HandOff' && entry.type === 'RestoreShardState' && entry.to === node.key ? [entry] : [],
      );
    return { toA: chunksTo(a), toB: chunksTo(b) };
  }

  it("the shard goes elsewhere after all: its new home gets the old host's copy, the same first parts", async () => {
    // The strategy's answer changes before the HandOff phase: the HandOff still names b (told first), the
    // coordinator then asks c to send its copy to a.
    const { toA, toB } = await toldB(({ a }) => {
      target = () => a.key;
    });
    expect(toB.length).toBeGreaterThan(1);
    expect(toA.map((entry) => ({ ...entry, to: 'b' }))).toEqual(toB.map((entry) => ({ ...entry, to: 'b' })));
  });

  it('the home told is gone by the HandOff: the one it names gets the chunks sent ahead again first, then the rest', async () => {
    const { toA, toB } = await toldB(async ({ a, b }) => {
      target = () => a.key;
      await cluster.crashAndRemove(b);
    });
    expect(toB.length).toBeGreaterThan(0);
    expect(toA.slice(0, toB.length)).toEqual(toB.map((entry) => ({ ...entry, to: toA[0]?.to })));
    expect(toA.length).toBeGreaterThan(toB.length);
    expect(toA.at(-1)).toMatchObject({ last: true });
  });

  it('the home told is cordoned by the HandOff: it names another, and the one told drops what it got ahead in time', async () => {
    let told: TestNode | undefined;
    const { toA, toB } = await toldB(({ a, b }) => {
      told = b;
      a.sharding.cordons.write(b.key);
    });
    expect(toB.length).toBeGreaterThan(0);
    expect(toA.slice(0, toB.length)).toEqual(toB.map((entry) => ({ ...entry, to: toA[0]?.to })));
    // b holds the chunks sent ahead for a start that is not coming, until the hand-off timeout (5 s here).
    const waiting = (): number | undefined => told?.sharding.stats().types['Counter']?.region.stateBytesWaiting;
    expect(waiting()).toBeGreaterThan(0);
    await runFor(2_500);
    expect(waiting()).toBeGreaterThan(0);
    await runFor(3_000);
    expect(waiting()).toBe(0);
  });

  /** Holds back what `from` sends `to` of `type` until `release`. */
  function holdBack(from: TestNode, to: TestNode, type: ShardingMessage['type']) {
    const held: Array<() => void> = [];
    const send = from.transport.send.bind(from.transport);
    from.transport.send = (address, message) => {
      if (held !== undefined && address.equals(to.address) && (message as { type: string }).type === type)
        held.push(() => send(address, message));
      else send(address, message);
    };
    return {
      get count(): number {
        return held.length;
      },
      release(): void {
        from.transport.send = send;
        for (const deliver of held.splice(0)) deliver();
      },
    };
  }
});
