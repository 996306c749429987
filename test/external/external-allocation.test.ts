// External allocation on an in-process cluster (MemoryNetwork + FakeCluster): the feature request's test plan
// 1-5 (pins honoured, least-shard fallback, unpinning, dead targets, manual rebalance) and 6-8 (the controller
// paths the REST routes call).
import { describe, expect, it, vi } from 'vitest';
import { ActorTsError } from '../../src/errors.js';
import { RebalanceError } from '../../src/sharding/api/external-allocation-controller.js';
import { parsePins } from '../../src/sharding/placements/pin-request.js';
import { eventually, run, settle } from '../sharding/harness.js';
import { addressOf, ExternalCluster, type ExtNode, pinsOf, recordsOf, TYPE, useExternalClusters } from './harness.js';

let cluster: ExternalCluster;

useExternalClusters();

/** Three Up nodes a (oldest, coordinator), b, c, warmed up. */
async function threeNodes(
  options: ConstructorParameters<typeof ExternalCluster>[0] = {},
): Promise<[ExtNode, ExtNode, ExtNode]> {
  cluster = new ExternalCluster(options);
  const a = cluster.addNode(7001);
  const b = cluster.addNode(7002);
  const c = cluster.addNode(7003);
  await run(600);
  expect(cluster.coordinatorKey()).toBe(a.key);
  return [a, b, c];
}

describe('1. explicit placement honoured', () => {
  it('allocates a pinned shard on its target, whichever node sends the first message', async () => {
    const [a, b, c] = await threeNodes();
    await b.controller.setPlacement(42, c.address);
    await c.controller.setPlacement(43, b.key);
    await eventually(() => pinsOf(a).length === 2, 'pins reached the coordinator');
    await cluster.allocated([42, 43], a);
    expect(cluster.hostOf(42)).toBe(c.key);
    expect(cluster.hostOf(43)).toBe(b.key);
    expect(a.warnings).toEqual([]);
  });

  it('moves an already allocated shard to a new pin without waiting for the rebalance tick', async () => {
    const [a, b] = await threeNodes();
    await cluster.allocated([5], a);
    const before = cluster.hostOf(5);
    const target = before === b.key ? a : b;
    const started = Date.now();
    await b.controller.setPlacement(5, target.address);
    await eventually(() => cluster.hostOf(5) === target.key, 'shard 5 moved to its pin');
    // TEST_CONFIG's tick is 1e6 ms: only the prompt re-evaluation can have moved it.
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(a.sharding.stats().types[TYPE]?.coordinator?.handOffsCompleted).toBe(1);
  });
});

describe('2. fallback for shards without a pin', () => {
  it('places unpinned shards by least-shard (fewest shards, then oldest member) while pins take theirs', async () => {
    const [a, b, c] = await threeNodes();
    for (const shardId of [0, 1, 2]) await a.controller.setPlacement(shardId, c.address);
    await cluster.allocated([0, 1, 2, 3, 4, 5, 6], b);
    const hosts = [0, 1, 2, 3, 4, 5, 6].map((s) => cluster.hostOf(s));
    // c holds the 3 pinned shards, so least-shard fills a and b first: a (oldest), b, a, b, then all tie at 3 -> a.
    expect(hosts).toEqual([c.key, c.key, c.key, a.key, b.key, a.key, b.key]);
    cluster.touch(b, 7);
    await eventually(() => cluster.hostOf(7) !== undefined, 'shard 7 allocated');
    expect(cluster.hostOf(7)).toBe(a.key);
    expect(a.warnings).toEqual([]);
  });

  it('keeps pinned shards in place when the fallback would rebalance them, and moves unpinned ones instead', async () => {
    const [a, b, c] = await threeNodes();
    for (const shardId of [0, 1, 2, 3, 4, 5]) await a.controller.setPlacement(shardId, c.address);
    await cluster.allocated([0, 1, 2, 3, 4, 5], a);
    await settle(a.sharding.requestRebalance(TYPE));
    await run(500);
    // 6 shards on c, none on a or b: least-shard would move some, but every one of them is pinned.
    for (const shardId of [0, 1, 2, 3, 4, 5]) expect(cluster.hostOf(shardId)).toBe(c.key);
    expect(a.sharding.stats().types[TYPE]?.coordinator?.handOffsStarted).toBe(0);
    expect(b.sharding.localShards(TYPE)).toEqual([]);
  });
});

describe('3. removed placement', () => {
  it('reverts to the fallback at the next rebalance: an unpinned shard leaves the overloaded node', async () => {
    cluster = new ExternalCluster();
    const [a, b] = await cluster.started(7001, 7002);
    for (const shardId of [0, 1, 2, 3]) await a.controller.setPlacement(shardId, b.address);
    await cluster.allocated([0, 1, 2, 3], a);
    expect(b.sharding.localShards(TYPE)).toEqual([0, 1, 2, 3]);

    await b.controller.removePlacement(2);
    // The removal is a placement change: the coordinator runs that rebalance round at once. Least-shard sees
    // b at 4 > optimal 2 and may move one shard per round (limit max(1, 0.1 x 4)); only shard 2 may move.
    await eventually(() => cluster.hostOf(2) === a.key, 'shard 2 moved by the fallback');
    expect(b.sharding.localShards(TYPE)).toEqual([0, 1, 3]);
    expect(pinsOf(a)).toEqual([
      [0, b.key],
      [1, b.key],
      [3, b.key],
    ]);
    await settle(a.sharding.requestRebalance(TYPE));
    await run(500);
    // 3 vs 1 is not a 2-shard deficit and the rest are pinned: nothing else moves.
    expect(b.sharding.localShards(TYPE)).toEqual([0, 1, 3]);
  });
});

describe('4. unreachable or absent target', () => {
  it('allocates through the fallback among reachable nodes and warns naming shard, target and why', async () => {
    const [a, b, c] = await threeNodes();
    await b.controller.setPlacement(9, c.address);
    await eventually(() => pinsOf(a).length === 1, 'pin reached the coordinator');
    cluster.members.setReachable(c.address, false);
    await cluster.allocated([9], b);
    expect(cluster.hostOf(9)).toBe(a.key);
    expect(a.warnings).toHaveLength(1);
    const [warning] = a.warnings;
    expect(warning?.details).toMatchObject({ shardId: 9, target: c.key, reason: 'unreachable', allocatedTo: a.key });
    expect(warning?.message).toContain('shard 9');
    expect(warning?.message).toContain(c.key);
    expect(warning?.message).toContain('unreachable');

    // While c stays unreachable the shard stays put: no hand-off to a node that cannot take it.
    await settle(a.sharding.requestRebalance(TYPE));
    await run(1_000);
    expect(cluster.hostOf(9)).toBe(a.key);
    expect(a.sharding.stats().types[TYPE]?.coordinator?.handOffsStarted).toBe(0);

    // c comes back: the membership change re-evaluates the pins at once.
    cluster.members.setReachable(c.address, true);
    await eventually(() => cluster.hostOf(9) === c.key, 'shard 9 on its pin once c is reachable', 2_000);
  });

  it('warns "not a candidate" for a target that is no member, and keeps the pin', async () => {
    const [a, b] = await threeNodes();
    const stranger = addressOf(7999);
    await a.controller.setPlacement(11, stranger);
    await cluster.allocated([11], b);
    expect([a.key, b.key, cluster.nodes[2]?.key]).toContain(cluster.hostOf(11));
    expect(a.warnings.map((w) => w.details)).toEqual([
      expect.objectContaining({ shardId: 11, target: stranger.toString(), reason: 'not a candidate' }),
    ]);
    expect(pinsOf(b)).toEqual([[11, stranger.toString()]]);
  });

  it('warns once per situation, not on every rebalance round', async () => {
    const [a, , c] = await threeNodes({ config: { rebalanceIntervalMs: 1_000 } });
    await a.controller.setPlacement(3, c.address);
    cluster.members.setReachable(c.address, false);
    await cluster.allocated([3], a);
    await run(5_500);
    expect(a.warnings.filter((w) => w.details.shardId === 3)).toHaveLength(1);
    expect(a.sharding.stats().types[TYPE]?.coordinator?.rebalanceRounds).toBeGreaterThanOrEqual(5);
  });
});

describe('5. rebalanceNow', () => {
  it('hands a shard off and re-allocates it through the strategy well within one rebalance interval', async () => {
    // Default 10 s tick: the move must come from rebalanceNow, not the tick.
    cluster = new ExternalCluster({ delayMs: 1, config: { rebalanceIntervalMs: 10_000 } });
    const [a, b] = await cluster.started(7001, 7002);
    await cluster.allocated([0, 1, 2, 3], a);
    const onA = a.sharding.localShards(TYPE);
    expect(onA.length).toBeGreaterThan(0);
    const shard = onA[0] as number;
    // A rolling update: c runs a newer version. Least-shard does not rebalance while versions differ, but
    // allocates to the newest version, so a manual rebalance is how an operator moves a shard there now.
    const c = cluster.addNode(7003, { appVersion: '2.0.0' });
    await run(300);
    const handOffsBefore = a.sharding.stats().types[TYPE]?.coordinator?.handOffsStarted ?? 0;
    const started = Date.now();
    let accepted: number | undefined;
    const request = b.controller.rebalanceNow([shard]).then(() => (accepted = Date.now() - started));
    while (accepted === undefined && Date.now() - started < 10_000) await vi.advanceTimersByTimeAsync(1);
    await request;
    while (cluster.hostOf(shard) !== c.key && Date.now() - started < 10_000) await vi.advanceTimersByTimeAsync(1);
    const elapsed = Date.now() - started;
    expect(cluster.hostOf(shard)).toBe(c.key);
    expect(elapsed).toBeLessThan(10_000);
    expect(a.sharding.stats().types[TYPE]?.coordinator?.handOffsStarted).toBe(handOffsBefore + 1);
    const stops = cluster.events.filter((e) => e.kind === 'stop' && e.node === a.key);
    expect(stops.length).toBeGreaterThan(0);
    // Only that shard moved.
    for (const other of onA.slice(1)) expect(cluster.hostOf(other)).toBe(a.key);
    console.log(
      `[figure] rebalanceNow from a non-coordinator: accepted after ${accepted} ms, shard running on its new node after ${elapsed} ms of fake time (MemoryNetwork, 1 ms links)`,
    );
  });

  it('lets a pin decide where rebalanceNow sends a shard', async () => {
    const [a, b, c] = await threeNodes({ config: { rebalanceIntervalMs: 10_000 } });
    await cluster.allocated([20], b);
    const home = cluster.hostOf(20);
    const target = [a, b, c].find((n) => n.key !== home) as ExtNode;
    await c.controller.setPlacement(20, target.address);
    await settle(c.controller.rebalanceNow([20]));
    await eventually(() => cluster.hostOf(20) === target.key, 'shard 20 on its pin', 2_000);
  });

  it('rejects out-of-range ids with invalid_shard and moves nothing', async () => {
    const [a, b] = await threeNodes();
    await cluster.allocated([1, 2], a);
    const before = cluster.hosted();
    for (const ids of [[1, 100], [-1], [1.5], [Number.NaN]]) {
      await expect(settle(b.controller.rebalanceNow(ids))).rejects.toMatchObject({ code: 'invalid_shard' });
    }
    await run(1_000);
    expect(cluster.hosted()).toEqual(before);
    expect(a.sharding.stats().types[TYPE]?.coordinator?.handOffsStarted).toBe(0);
  });

  it('rejects shards without a home with RebalanceError, still moving the ones that have a home', async () => {
    const [a, b] = await threeNodes();
    await cluster.allocated([1], a);
    const error = await settle(b.controller.rebalanceNow([7])).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RebalanceError);
    expect((error as RebalanceError).code).toBe('not_allocated');
    expect((error as RebalanceError).result).toEqual({ accepted: [], unknown: [], unallocated: [7], homeless: [7] });
    expect(cluster.hostOf(7)).toBeUndefined();

    const mixed = await settle(b.controller.rebalanceNow([1, 8])).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((mixed as RebalanceError).result).toEqual({ accepted: [1], unknown: [], unallocated: [8], homeless: [8] });
    await eventually(
      () => (a.sharding.stats().types[TYPE]?.coordinator?.handOffsCompleted ?? 0) === 1,
      'shard 1 handed off',
    );
    expect(cluster.hostOf(1)).toBeDefined();
  });
});

describe('6-8. controller paths behind the REST routes', () => {
  it('setPlacements validates every entry before writing any (POST)', async () => {
    const [a, b] = await threeNodes();
    const bad: Array<ReadonlyArray<{ shardId: number; target: string }>> = [
      [
        { shardId: 1, target: b.key },
        { shardId: 100, target: b.key },
      ],
      [
        { shardId: 1, target: b.key },
        { shardId: 2, target: 'not an address' },
      ],
      [
        { shardId: 1, target: b.key },
        { shardId: -1, target: b.key },
      ],
    ];
    const codes: string[] = [];
    for (const entries of bad)
      await a.controller.setPlacements(entries).catch((error: { code: string }) => codes.push(error.code));
    // A target that is neither an address nor a selector is a placement-rule error, not an address error.
    expect(codes).toEqual(['invalid_shard', 'invalid_target', 'invalid_shard']);
    await expect(a.controller.setPlacements([{ shardId: 1, target: 42 as unknown as string }])).rejects.toMatchObject({
      code: 'invalid_target',
    });
    await expect(a.controller.setPlacements([{ shardId: 1, target: 'app@' }])).rejects.toThrow(ActorTsError);
    await run(500);
    for (const node of cluster.nodes) expect(pinsOf(node)).toEqual([]);
    expect(a.sharding.placementStore.stats().slots).toBe(0);

    const written = await a.controller.setPlacements([
      { shardId: 4, target: b.key },
      { shardId: 2, target: `actor-ts://${a.key}` },
    ]);
    expect(written.map((r) => [r.shardId, r.target.toString(), r.writer])).toEqual([
      [4, b.key, a.key],
      [2, a.key, a.key],
    ]);
    await eventually(() => pinsOf(b).length === 2, 'bulk write replicated');
    expect(pinsOf(b)).toEqual([
      [2, a.key],
      [4, b.key],
    ]);
  });

  it('writes parsed pins under their one verb, and the deprecated writePins still writes them', async () => {
    const [a, b] = await threeNodes();
    const scope = a.controller.pinScope();
    await a.controller.setParsedPlacements(parsePins([{ shardId: 5, target: b.key }], scope));
    await a.controller.writePins(parsePins([{ shardId: 6, target: a.key }], scope));
    await eventually(() => pinsOf(b).length === 2, 'both written and replicated');
    expect(pinsOf(b)).toEqual([
      [5, b.key],
      [6, a.key],
    ]);
  });

  it('lists placements with their HLC and writer (GET), sorted by shard', async () => {
    const [a, b] = await threeNodes();
    await b.controller.setPlacements([{ shardId: 30, target: a.key }]);
    await a.controller.setPlacements([{ shardId: 3, target: b.key }]);
    await eventually(() => recordsOf(a).length === 2 && recordsOf(b).length === 2, 'replicated');
    for (const node of [a, b]) {
      const records = recordsOf(node);
      expect(records.map((r) => [r.shardId, r.target.toString(), r.writer])).toEqual([
        [3, b.key, a.key],
        [30, a.key, b.key],
      ]);
      expect(records.every((r) => Number.isSafeInteger(r.hlc.wallMs) && r.hlc.node === r.writer)).toBe(true);
    }
    const map = await b.controller.getPlacements();
    expect([...map].map(([s, t]) => [s, t.toString()])).toEqual([
      [3, b.key],
      [30, a.key],
    ]);
  });

  it('removes a placement everywhere (DELETE) and reports whether there was one', async () => {
    const [a, b, c] = await threeNodes();
    await a.controller.setPlacement(12, c.address);
    await eventually(() => pinsOf(b).length === 1, 'replicated');
    expect(await b.controller.removePlacement(12)).toBe(true);
    expect(await b.controller.removePlacement(12)).toBe(false);
    await c.controller.removePlacement(13);
    await eventually(() => cluster.nodes.every((n) => pinsOf(n).length === 0), 'removal replicated');
    await expect(a.controller.removePlacement(100)).rejects.toMatchObject({ code: 'invalid_shard' });
  });
});
