// Explain and dry runs on an in-process cluster under external allocation: each of the five decisions
// reached for real and answered the same from every node (the coordinator's answer), explain after the
// coordinator moved, and dry runs whose moves are the moves the real call then makes, with nothing written,
// handed off or logged by the dry run itself.
import { describe, expect, it } from 'vitest';
import { askDryRunRebalance, askExplain, type DryRunMove, type ShardExplanation } from '../../src/sharding/index.js';
import { eventually, run, settle } from '../sharding/harness.js';
import {
  addressOf,
  ExternalCluster,
  type ExtNode,
  recordsOf,
  TYPE,
  useExternalClusters,
  zonedCluster,
} from './harness.js';

let cluster: ExternalCluster;

useExternalClusters();

/** a (zone=a, the coordinator), b and c (zone=b), warmed up. */
async function zones(options: { numberOfShards?: number } = {}): Promise<[ExtNode, ExtNode, ExtNode]> {
  const [started, nodes] = await zonedCluster(options);
  cluster = started;
  return nodes;
}

const explain = (node: ExtNode, shardId: number): Promise<ShardExplanation> =>
  settle(askExplain(node.sharding, TYPE, shardId));

/** Every node's answer, checked to be one answer. */
async function explainEverywhere(shardId: number): Promise<ShardExplanation> {
  const answers: ShardExplanation[] = [];
  for (const node of cluster.live()) answers.push(await explain(node, shardId));
  for (const answer of answers) expect(answer).toEqual(answers[0]);
  return answers[0]!;
}

/** Where every shard runs now (regions' own view), for before/after comparisons. */
function homes(): Map<number, string> {
  const out = new Map<number, string>();
  for (const [shardId, hosts] of cluster.hosted()) if (hosts.length === 1) out.set(shardId, hosts[0]!);
  return out;
}

/** The moves between two snapshots of homes, for the shards in `shardIds`: a shard gone is `to: null`. */
function movesBetween(before: Map<number, string>, after: Map<number, string>): DryRunMove[] {
  const moves: DryRunMove[] = [];
  for (const [shardId, from] of before) {
    const to = after.get(shardId) ?? null;
    if (to !== from) moves.push({ shardId, from, to });
  }
  return moves;
}

const byShard = (moves: ReadonlyArray<DryRunMove>): DryRunMove[] => [...moves].sort((x, y) => x.shardId - y.shardId);

describe('explain', () => {
  it("reaches each of the five decisions, and every node answers with the coordinator's explanation", async () => {
    const [a, b, c] = await zones();
    const absent = addressOf(7099).toString();
    await b.controller.setPlacements([
      { shardId: 2, target: 'zone=b' },
      { shardId: 3, target: absent, reason: 'not yet there', by: 'ops' },
      { shardId: 4, target: 'zone=z', mode: 'require' },
    ]);
    await eventually(() => recordsOf(a).length === 3, 'the pins reached the coordinator');
    await cluster.allocated([1, 2, 3], c);
    cluster.touch(c, 4);
    await run(500);

    const never = await explainEverywhere(0);
    expect(never).toMatchObject({
      shardId: 0,
      home: null,
      handingOff: false,
      placement: null,
      decision: 'unallocated',
    });
    expect(never.nodes.map((n) => n.address)).toEqual([a.key, b.key, c.key]);
    expect(never.nodes.every((n) => n.matches === null && n.status === 'up' && n.reachable && !n.cordoned)).toBe(true);

    const unpinned = await explainEverywhere(1);
    expect(unpinned).toMatchObject({ home: cluster.hostOf(1), decision: 'fallback', placement: null });
    expect(unpinned.message).toMatch(/has no pin: the fallback strategy placed it on /);

    const pinned = await explainEverywhere(2);
    expect(pinned).toMatchObject({
      home: cluster.hostOf(2),
      decision: 'placement',
      placement: { shardId: 2, target: 'zone=b', mode: 'prefer' },
    });
    expect([b.key, c.key]).toContain(pinned.home);
    expect(pinned.nodes.map((n) => n.matches)).toEqual([false, true, true]);

    const unavailable = await explainEverywhere(3);
    expect(unavailable).toMatchObject({
      decision: 'placement-unavailable',
      placement: { target: absent, reason: 'not yet there', by: 'ops' },
    });
    expect(unavailable.home).toBe(cluster.hostOf(3));
    expect(unavailable.message).toBe(
      `shard 3 prefers ${absent}, which is not a member of the cluster, so the fallback strategy placed it on ${unavailable.home}.`,
    );
    expect(unavailable.nodes.map((n) => n.matches)).toEqual([false, false, false]);

    const waiting = await explainEverywhere(4);
    expect(waiting).toMatchObject({
      home: null,
      decision: 'waiting',
      placement: { target: 'zone=z', mode: 'require' },
    });
    expect(waiting.message).toBe(
      'shard 4 requires zone=z, which no member matches: it has no home and waits until a matching node can take it.',
    );
    expect(cluster.hostOf(4)).toBeUndefined();

    // The shard counts are the coordinator's map.
    const counts = new Map(never.nodes.map((n) => [n.address, n.shards]));
    for (const node of [a, b, c])
      expect(counts.get(node.key)).toBe([...homes().values()].filter((home) => home === node.key).length);
  });

  it('answers from the new coordinator after the old one left, and a pin that becomes satisfiable turns waiting into placement', async () => {
    const [a, b, c] = await zones();
    await a.controller.setPlacements([
      { shardId: 5, target: c.key },
      { shardId: 6, target: 'zone=y', mode: 'require' },
    ]);
    await cluster.allocated([5], b);
    cluster.touch(b, 6);
    await run(500);
    expect((await explain(c, 5)).decision).toBe('placement');
    expect((await explain(c, 6)).decision).toBe('waiting');

    await settle(cluster.members.leave(a.address));
    await cluster.stopNode(a);
    await eventually(() => b.sharding.stats().types[TYPE]?.coordinator?.warm === true, 'b took over the coordinator');
    const moved = await explainEverywhere(5);
    expect(moved).toMatchObject({ home: c.key, decision: 'placement', placement: { target: c.key } });
    expect(moved.nodes.map((n) => n.address)).toEqual([b.key, c.key]);
    expect((await explainEverywhere(6)).decision).toBe('waiting');

    cluster.attributes.set(b.key, { zone: 'y' });
    cluster.members.setReachable(b.address, true);
    await eventually(() => cluster.hostOf(6) === b.key, 'shard 6 on the zone=y node');
    const placed = await explainEverywhere(6);
    expect(placed).toMatchObject({ home: b.key, decision: 'placement' });
    expect(placed.nodes.map((n) => n.matches)).toEqual([true, false]);
  });
});

describe('dry runs', () => {
  it('a placements dry run lists exactly the moves the write then makes, and writes, hands off and logs nothing', async () => {
    const [a, b, c] = await zones({ numberOfShards: 60 });
    const shards = Array.from({ length: 12 }, (_, i) => i);
    await cluster.allocated(shards, b);
    const before = homes();
    const onA = shards.filter((s) => before.get(s) === a.key);
    const onB = shards.filter((s) => before.get(s) === b.key);
    const onC = shards.filter((s) => before.get(s) === c.key);
    expect(onA.length).toBeGreaterThanOrEqual(2);
    expect(onB.length).toBeGreaterThanOrEqual(1);
    expect(onC.length).toBeGreaterThanOrEqual(1);
    const proposed = [
      // Moves to its target.
      { shardId: onA[0]!, target: c.key },
      // Moves to one of the zone=b nodes.
      { shardId: onA[1]!, target: 'zone=b' },
      // A hard pin nothing satisfies: handed off, then waits (to: null).
      { shardId: onB[0]!, target: 'zone=z', mode: 'require' as const },
      // A target that cannot take it: no move.
      { shardId: onC[0]!, target: addressOf(7099).toString() },
    ];
    const coordinatorStats = () => a.sharding.stats().types[TYPE]?.coordinator;
    const startedBefore = coordinatorStats()?.handOffsStarted;
    const warningsBefore = a.warnings.length;

    const dry = await settle(c.controller.dryRunPlacements(proposed));
    expect(dry.placements.map((p) => [p.shardId, p.target, p.mode])).toEqual(
      proposed.map((p) => [p.shardId, p.target, p.mode ?? 'prefer']),
    );
    expect(byShard(dry.moves)).toContainEqual({ shardId: onA[0], from: a.key, to: c.key });
    expect(byShard(dry.moves)).toContainEqual({ shardId: onB[0], from: b.key, to: null });
    expect(dry.moves.map((m) => m.shardId)).not.toContain(onC[0]);
    expect(dry.warnings).toContainEqual(expect.objectContaining({ shardId: onB[0], target: 'zone=z' }));
    expect(dry.warnings).toContainEqual(
      expect.objectContaining({ shardId: onC[0], target: addressOf(7099).toString() }),
    );
    await run(500);
    expect(recordsOf(a)).toEqual([]);
    expect(recordsOf(c)).toEqual([]);
    expect(homes()).toEqual(before);
    expect(coordinatorStats()?.handOffsStarted).toBe(startedBefore);
    expect(a.warnings).toHaveLength(warningsBefore);

    await c.controller.setPlacements(proposed);
    await eventually(
      () => coordinatorStats()?.rebalanceInProgress === 0 && coordinatorStats()?.handOffsStarted !== startedBefore,
      'the hand-offs the pins started ended',
    );
    await run(500);
    expect(byShard(movesBetween(before, homes()))).toEqual(byShard(dry.moves));
  });

  it('a rebalance dry run lists where each shard would land, and the real rebalance then moves them there', async () => {
    const [a, b] = await zones({ numberOfShards: 60 });
    const shards = Array.from({ length: 9 }, (_, i) => i);
    await cluster.allocated(shards, b);
    await a.controller.setPlacements([
      { shardId: 0, target: b.key },
      { shardId: 1, target: 'zone=b', mode: 'require' },
    ]);
    await run(500);
    const before = homes();
    const asked = [0, 1, 2, 3, 50];
    const dry = await settle(askDryRunRebalance(b.sharding, TYPE, asked));
    expect(dry.warnings).toEqual([
      expect.objectContaining({ shardId: 50, message: expect.stringContaining('no home yet') }),
    ]);
    expect(homes()).toEqual(before);

    const result = await settle(b.controller.rebalanceNow(asked.filter((s) => s !== 50)));
    expect(result.accepted).toEqual(dry.moves.map((m) => m.shardId));
    await eventually(
      () => a.sharding.stats().types[TYPE]?.coordinator?.rebalanceInProgress === 0,
      'the hand-offs ended',
    );
    await run(500);
    const after = homes();
    // A shard re-allocated to the node it left did move (hand-off and restart), so compare every asked shard.
    expect(dry.moves.map((m) => ({ shardId: m.shardId, from: m.from, to: after.get(m.shardId) ?? null }))).toEqual(
      dry.moves,
    );
  });
});
