// Moving shards: manual rebalance, prompt and periodic rebalance rounds, hand-off under traffic, the
// hand-off timeout, strategy results that are not candidates, and graceful leave.
import { describe, expect, it } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import { isFamilyMessage } from '../../src/cluster/transport/wire-message.js';
import { SHARDING_MESSAGES } from '../../src/sharding/protocol/messages.js';
import type { ShardAllocations } from '../../src/sharding/strategies/allocation-strategy.js';
import {
  LeastShardAllocationStrategy,
  externalAllocationStrategy,
  type AllocationStrategy,
} from '../../src/sharding/strategies/index.js';
import {
  TestCluster,
  captureLogger,
  counter,
  entityInShard,
  eventually,
  hostedShards,
  run,
  settle,
  useTestClusters,
} from './harness.js';
import type { CounterReply, EntityEvent, TestNode } from './harness.js';

const SHARDS = 10;

/** A strategy whose choices the test sets: `homes` per shard (else the first candidate), `moves` for rebalance. */
class ScriptedStrategy implements AllocationStrategy {
  readonly homes = new Map<number, string>();
  moves = new Set<number>();
  readonly rebalanceCalls: Array<{ inProgress: number[]; regions: string[] }> = [];

  allocate(shardId: number, candidates: ReadonlyArray<NodeAddress>): NodeAddress {
    const wanted = this.homes.get(shardId);
    const first = candidates[0];
    if (first === undefined) throw new Error('no candidates');
    return candidates.find((c) => c.toString() === wanted) ?? first;
  }

  rebalance(
    currentShards: ShardAllocations,
    _candidates: ReadonlyArray<NodeAddress>,
    inProgress: ReadonlySet<number>,
  ): ReadonlySet<number> {
    this.rebalanceCalls.push({ inProgress: [...inProgress], regions: [...currentShards.keys()].sort() });
    const moves = this.moves;
    this.moves = new Set();
    return moves;
  }
}

/** The `seq` of every message the entities received, in ascending order. */
function deliveredSeqs(events: ReadonlyArray<EntityEvent>): number[] {
  return events
    .filter((e) => e.kind === 'message')
    .map((e) => (e.message as { seq: number }).seq)
    .sort((x, y) => x - y);
}

describe('hand-off and rebalance', () => {
  let cluster: TestCluster;
  useTestClusters(() => (cluster = new TestCluster()));

  /** The counter type on every node, allocated by a ScriptedStrategy (returned). */
  function initScripted(events: EntityEvent[] = []): ScriptedStrategy {
    const strategy = new ScriptedStrategy();
    cluster.initAll({
      typeName: 'Counter',
      behavior: counter(events),
      numberOfShards: SHARDS,
      allocationStrategy: strategy,
    });
    return strategy;
  }

  /** Starts the entity of `shardId` (its id returned) on `home`, by sending `message` to it via `via`. */
  async function startOn(
    strategy: ScriptedStrategy,
    shardId: number,
    home: TestNode,
    via: TestNode,
    message: unknown,
  ): Promise<string> {
    const entityId = entityInShard(shardId, SHARDS);
    strategy.homes.set(shardId, home.key);
    await settle(via.sharding.entityRefFor('Counter', entityId).ask(message));
    return entityId;
  }

  /**
   * Three nodes with 5 ms per hop (so a hand-off spans many messages of a stream), a scripted strategy, and an
   * entity of `shardId` started on b by a message `{ seq: firstSeq }` from a.
   */
  async function entityOnB(shardId: number, firstSeq: number) {
    cluster = new TestCluster({ delayMs: 5 });
    const [a, b, c] = cluster.addNodes(7001, 7002, 7003);
    const events: EntityEvent[] = [];
    const strategy = initScripted(events);
    const entityId = await startOn(strategy, shardId, b, a, { seq: firstSeq });
    return { a, b, c, strategy, events, entityId };
  }

  it('rebalanceNow hands accepted shards off at once and re-allocates them through the strategy; reports unknown and unallocated', async () => {
    const [a, b, c] = cluster.addNodes(7001, 7002, 7003);
    const pins = new Map<number, NodeAddress>();
    const events: EntityEvent[] = [];
    const strategy = externalAllocationStrategy(new LeastShardAllocationStrategy(), () => ({
      explicitPlacements: pins,
    }));
    cluster.initAll({
      typeName: 'Counter',
      behavior: counter(events),
      numberOfShards: SHARDS,
      allocationStrategy: strategy,
    });
    const entityId = entityInShard(2, SHARDS);
    pins.set(2, a.address);
    const ref = b.sharding.entityRefFor('Counter', entityId);
    expect(await settle(ref.ask<CounterReply>({ op: 'inc' }))).toMatchObject({ count: 1, node: a.key });

    pins.set(2, c.address);
    const result = await settle(b.sharding.rebalanceNow('Counter', [2, 5, SHARDS, -1, 2]));
    expect(result).toEqual({ accepted: [2], unknown: [SHARDS, -1], unallocated: [5], homeless: [5] });
    // No rebalance tick happens in this test (rebalanceIntervalMs is huge): the move is the request's doing.
    await eventually(() => c.sharding.localShards('Counter').includes(2), 'shard 2 on c');
    expect(hostedShards(cluster.nodes, 'Counter')).toEqual(new Map([[2, [c.key]]]));
    expect(events.filter((e) => e.kind === 'stop')).toEqual([{ kind: 'stop', entityId, node: a.key }]);
    // An entity without snapshot() starts fresh on its new host (its state does not travel).
    expect(await settle(ref.ask<CounterReply>({ op: 'inc' }))).toMatchObject({ count: 1, node: c.key });
    const stats = a.sharding.stats().types['Counter']?.coordinator;
    expect(stats).toMatchObject({ handOffsStarted: 1, handOffsCompleted: 1, handOffsTimedOut: 0 });
  });

  it('answers a repeated RebalanceNow (its answer was lost) from memory instead of moving the shards again', async () => {
    const [a, b] = cluster.addNodes(7001, 7002);
    const strategy = initScripted();
    await startOn(strategy, 2, a, b, { op: 'inc' });
    strategy.homes.set(2, b.key);
    const operator = cluster.net.transport(NodeAddress.parse('ops@127.0.0.1:6000'));
    operator.register(SHARDING_MESSAGES);
    const answers: unknown[] = [];
    operator.onMessage((_from, message) => answers.push(message));
    operator.send(a.address, { type: 'RebalanceNow', typeName: 'Counter', requestId: 77, shardIds: [2] });
    await eventually(() => b.sharding.localShards('Counter').includes(2), 'shard 2 moved to b');
    operator.send(a.address, { type: 'RebalanceNow', typeName: 'Counter', requestId: 77, shardIds: [2] });
    await run(100);
    expect(answers).toHaveLength(2);
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[0]).toMatchObject({ type: 'RebalanceNowResult', accepted: [2] });
    expect(a.sharding.stats().types['Counter']?.coordinator?.handOffsStarted).toBe(1);
    expect(b.sharding.localShards('Counter')).toEqual([2]);
    await operator.close();
  });

  it('delivers every message sent during a hand-off exactly once, and no region forwards to the old home after HandOff', async () => {
    const { a, b, c, strategy, events, entityId } = await entityOnB(4, -1);
    // What reaches the old home over the network once it was told to hand the shard off.
    let handOffSeen = false;
    let envelopesAfterHandOff = 0;
    b.transport.onMessage((_from, message) => {
      if (!isFamilyMessage(SHARDING_MESSAGES, message)) return;
      if (message.type === 'HandOff' && message.shardId === 4) handOffSeen = true;
      if (message.type === 'EntityEnvelope' && message.shardId === 4 && handOffSeen) envelopesAfterHandOff++;
    });

    strategy.homes.set(4, c.key);
    const senders = [a, b, c];
    const move = a.sharding.rebalanceNow('Counter', [4]);
    let maxBuffered = 0;
    for (let sent = 0; sent < 60; sent++) {
      senders[sent % 3]?.sharding.entityRefFor('Counter', entityId).tell({ seq: sent });
      maxBuffered = Math.max(
        maxBuffered,
        ...cluster.nodes.map((n) => n.sharding.stats().types['Counter']?.region.bufferedMessages ?? 0),
      );
      await run(1);
    }
    expect(await settle(move)).toMatchObject({ accepted: [4] });
    await eventually(() => events.filter((e) => e.kind === 'message').length === 61, 'all 61 messages delivered');
    await run(1_000);
    expect(deliveredSeqs(events)).toEqual(Array.from({ length: 61 }, (_, i) => i - 1));
    expect(events.filter((e) => e.kind === 'message' && e.node === c.key).length).toBeGreaterThan(0);
    expect(maxBuffered).toBeGreaterThan(0);
    expect(handOffSeen).toBe(true);
    expect(envelopesAfterHandOff).toBe(0);
    // Nothing reached the old home's entity after it stopped.
    const stopOnB = events.findIndex((e) => e.kind === 'stop' && e.node === b.key);
    expect(stopOnB).toBeGreaterThan(0);
    expect(events.slice(stopOnB).some((e) => e.kind === 'message' && e.node === b.key)).toBe(false);
  });

  it('requestRebalance runs a round now; the periodic tick runs rounds on its own', async () => {
    cluster = new TestCluster({ config: { rebalanceIntervalMs: 10_000 } });
    const [a, b] = cluster.addNodes(7001, 7002);
    const strategy = initScripted();
    await startOn(strategy, 1, a, b, { op: 'inc' });
    const callsBefore = strategy.rebalanceCalls.length;

    strategy.homes.set(1, b.key);
    strategy.moves = new Set([1]);
    await settle(b.sharding.requestRebalance('Counter'), 1_000);
    expect(strategy.rebalanceCalls.length).toBe(callsBefore + 1);
    expect(strategy.rebalanceCalls.at(-1)?.regions).toEqual([a.key, b.key]);
    await eventually(() => b.sharding.localShards('Counter').includes(1), 'shard 1 moved to b', 1_000);

    // With nothing requested, the tick still asks the strategy every rebalanceIntervalMs.
    const calls = strategy.rebalanceCalls.length;
    await run(30_000);
    expect(strategy.rebalanceCalls.length).toBeGreaterThanOrEqual(calls + 2);
  });

  it('never leaves a shard homeless when the strategy returns a non-candidate or throws: it logs and uses a candidate', async () => {
    const { logger, lines } = captureLogger();
    cluster = new TestCluster({ logger });
    const [a, b] = cluster.addNodes(7001, 7002);
    let mode: 'stranger' | 'throw' = 'stranger';
    const broken: AllocationStrategy = {
      allocate() {
        if (mode === 'throw') throw new Error('strategy bug');
        return NodeAddress.parse('test@127.0.0.1:9999');
      },
      rebalance: () => new Set(),
    };
    cluster.initAll({ typeName: 'Counter', behavior: counter(), numberOfShards: SHARDS, allocationStrategy: broken });
    const first = await settle(
      b.sharding.entityRefFor('Counter', entityInShard(0, SHARDS)).ask<CounterReply>({ op: 'inc' }),
    );
    mode = 'throw';
    const second = await settle(
      b.sharding.entityRefFor('Counter', entityInShard(1, SHARDS)).ask<CounterReply>({ op: 'inc' }),
    );
    expect([a.key, b.key]).toContain(first.node);
    expect([a.key, b.key]).toContain(second.node);
    expect(a.sharding.stats().types['Counter']?.coordinator?.invalidAllocations).toBe(2);
    const errors = lines.filter((l) => l.level >= 50 && l.msg?.includes('allocation strategy'));
    expect(errors.map((l) => l.msg)).toEqual([
      expect.stringContaining('test@127.0.0.1:9999'),
      expect.stringContaining('strategy bug'),
    ]);
  });

  it('keeps the shard at its owner when the hand-off times out', async () => {
    const [a, b] = cluster.addNodes(7001, 7002);
    const strategy = initScripted();
    const entityId = await startOn(strategy, 3, b, a, { op: 'inc' });
    cluster.net.partition([a.address], [b.address]);
    expect(await settle(a.sharding.rebalanceNow('Counter', [3]))).toMatchObject({ accepted: [3] });
    await run(4_000);
    expect(a.sharding.stats().types['Counter']?.coordinator?.handOffsTimedOut).toBe(0);
    // Still handing off: listed under b, and named as moving.
    const during = await settle(a.sharding.getShardLocations('Counter'));
    expect(during.handingOff).toEqual([3]);
    expect(during.regions.find((r) => r.address === b.key)?.shards).toEqual([3]);
    await run(2_000);
    expect(a.sharding.stats().types['Counter']?.coordinator).toMatchObject({
      handOffsTimedOut: 1,
      rebalanceInProgress: 0,
    });
    cluster.net.heal();
    const locations = await settle(a.sharding.getShardLocations('Counter'));
    expect(locations.regions.find((r) => r.address === b.key)?.shards).toEqual([3]);
    expect(locations.handingOff).toEqual([]);
    const reply = await settle(a.sharding.entityRefFor('Counter', entityId).ask<CounterReply>({ op: 'get' }));
    expect(reply).toMatchObject({ node: b.key, count: 1 });
  });

  it("graceful leave hands the leaving node's shards off before it exits, and nothing is allocated to it meanwhile", async () => {
    const [a, b, c] = cluster.addNodes(7001, 7002, 7003);
    const events: EntityEvent[] = [];
    cluster.initAll({ typeName: 'Counter', behavior: counter(events), numberOfShards: 30 });
    for (let i = 0; i < 30; i++) await settle(a.sharding.entityRefFor('Counter', `e${i}`).ask({ op: 'inc' }));
    const onB = b.sharding.localShards('Counter');
    expect(onB.length).toBeGreaterThan(0);

    await settle(cluster.members.leave(b.address));
    expect(b.sharding.localShards('Counter')).toEqual([]);
    const stoppedOnB = events.filter((e) => e.kind === 'stop' && e.node === b.key).length;
    expect(stoppedOnB).toBe(events.filter((e) => e.kind === 'start' && e.node === b.key).length);
    // The moved shards were re-allocated at once, to the remaining nodes.
    const locations = await settle(a.sharding.getShardLocations('Counter'));
    expect(locations.regions.map((r) => r.address)).toEqual([a.key, c.key]);
    const moved = locations.regions.flatMap((r) => r.shards).filter((s) => onB.includes(s));
    expect(moved.sort((x, y) => x - y)).toEqual(onB);
    for (let i = 0; i < 30; i++) {
      const reply = await settle(c.sharding.entityRefFor('Counter', `e${i}`).ask<CounterReply>({ op: 'get' }));
      expect([a.key, c.key]).toContain(reply.node);
    }
  });

  it('graceful leave under traffic loses nothing: messages that reached the leaving node are flushed before it exits', async () => {
    const { a, b, c, events, entityId } = await entityOnB(6, -2);
    // c learns the home too, so both senders forward straight to b until told to stop.
    await settle(c.sharding.entityRefFor('Counter', entityId).ask({ seq: -1 }));

    let left = false;
    const leaving = cluster.members.leave(b.address).then(async () => {
      // The process exits the moment the cluster lets it go.
      await cluster.crash(b);
      left = true;
    });
    let sent = 0;
    for (; !left && sent < 500; sent++) {
      (sent % 2 === 0 ? a : c).sharding.entityRefFor('Counter', entityId).tell({ seq: sent });
      await run(1);
    }
    await settle(leaving);
    expect(sent).toBeGreaterThan(0);
    await eventually(
      () => events.filter((e) => e.kind === 'message').length === sent + 2,
      `all ${sent + 2} messages delivered`,
    );
    expect(deliveredSeqs(events)).toEqual(Array.from({ length: sent + 2 }, (_, i) => i - 2));
    expect(a.sharding.localShards('Counter')).toEqual([6]);
  });

  it('graceful leave of the coordinator node: the next oldest takes over and the shards still move', async () => {
    const [a, b, c] = cluster.addNodes(7001, 7002, 7003);
    cluster.initAll({ typeName: 'Counter', behavior: counter(), numberOfShards: 30 });
    for (let i = 0; i < 30; i++) await settle(c.sharding.entityRefFor('Counter', `e${i}`).ask({ op: 'inc' }));
    const onA = a.sharding.localShards('Counter');
    expect(onA.length).toBeGreaterThan(0);
    expect(a.sharding.coordinatorFor('Counter')?.toString()).toBe(a.key);

    await settle(cluster.members.leave(a.address));
    expect(a.sharding.localShards('Counter')).toEqual([]);
    expect(c.sharding.coordinatorFor('Counter')?.toString()).toBe(b.key);
    expect(a.sharding.stats().types['Counter']?.coordinator).toBeUndefined();
    expect(b.sharding.stats().types['Counter']?.coordinator?.regions).toBe(2);
    const hosts = hostedShards([b, c], 'Counter');
    for (const shardId of onA) expect(hosts.get(shardId)).toHaveLength(1);
  });
});
