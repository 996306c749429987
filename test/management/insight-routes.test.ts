// Explain and dry runs through the management API of a real two-node cluster: explain's bad input, the same
// answer from either node, a dry run refused exactly as the real call with nothing written, and a dry run's
// moves equal to the moves the real call then makes.
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningNode } from '../../src/node/node.js';
import type { ShardExplanation } from '../../src/sharding/index.js';
import type { ExplainAnswer, ShardLocationsAnswer } from '../../src/management/api-shapes.js';
import { waitForHome } from '../support/shard-homes.js';
import { useTestCluster } from '../support/test-cluster.js';
import { COUNTER, expectError, getLocations, getPlacements, increment } from './node-fixture.js';

interface DryRunReply {
  dryRun: true;
  placements?: Array<{
    shardId: number;
    target: string;
    mode: string;
    expiresAt: string | null;
    reason: string | null;
    by: string | null;
  }>;
  moves: Array<{ shardId: number; from: string; to: string | null }>;
  warnings: Array<{ shardId: number | null; target?: string; message: string }>;
}

describe('explain and dry runs over HTTP', () => {
  let nodes: RunningNode[] = [];
  let addresses: string[] = [];
  const node = (i: number): RunningNode => nodes[i]!;
  const explain = async (n: RunningNode, shardId: number | string, type = 'Counter') =>
    n.http.inject({ method: 'GET', url: `/actor-ts/cluster/shards/${type}/explain/${shardId}` });

  const cluster = useTestCluster(2);
  beforeAll(() => ({ nodes, addresses } = cluster));

  it('explain refuses an unknown type (404) and a shard id out of range or not a number (400)', async () => {
    expectError(await explain(node(0), 1, 'Nope'), 404, 'unknown_type');
    expectError(await explain(node(0), 1000), 400, 'invalid_shard');
    expectError(await explain(node(1), 999_999_999), 400, 'invalid_shard');
    expectError(await explain(node(0), 'abc'), 400, 'invalid_request');
    expectError(await explain(node(0), -1), 400, 'invalid_request');
  });

  it("explains a shard never used as unallocated, and one in use as the fallback's choice, the same from either node", async () => {
    const fresh = (await explain(node(1), 999)).json<ShardExplanation>();
    expect(fresh).toMatchObject({
      shardId: 999,
      home: null,
      handingOff: false,
      placement: null,
      decision: 'unallocated',
    });
    const used = await increment(node(0), 'explain-me');
    const answers = await Promise.all(nodes.map(async (n) => (await explain(n, used.shardId)).json<ExplainAnswer>()));
    // The coordinator's part is the same from either node; each node adds what it runs of the type.
    const coordinatorPart = ({ activeEntities: _ignored, ...rest }: ExplainAnswer) => rest;
    expect(coordinatorPart(answers[1]!)).toEqual(coordinatorPart(answers[0]!));
    answers.forEach((a, i) => expect(a.activeEntities?.node).toBe(addresses[i]));
    const fromHome = answers.find((a) => a.activeEntities?.node === used.node);
    expect(fromHome?.activeEntities?.count).toBeGreaterThanOrEqual(1);
    const answer = answers[0]!;
    expect(answer).toMatchObject({ shardId: used.shardId, home: used.node, decision: 'fallback', placement: null });
    expect(answer.message).toContain(used.node);
    expect(answer.nodes.map((n) => n.address).sort()).toEqual([...addresses].sort());
    for (const row of answer.nodes)
      expect(row).toMatchObject({ reachable: true, status: 'up', cordoned: false, matches: null });
    expect(answer.nodes.reduce((sum, n) => sum + n.shards, 0)).toBeGreaterThanOrEqual(1);
  });

  it('refuses an invalid placements dry run with the very answer of the real call, and writes nothing', async () => {
    const bodies: Array<Record<string, unknown>> = [
      { shardId: 5, target: 'not a target!' },
      { shardId: 5, target: addresses[0], mode: 'maybe' },
      { shardId: 1000, target: addresses[0] },
      { shardId: 5, target: addresses[0], ttlMs: 1000, expiresAt: '2030-01-01T00:00:00Z' },
      { shardId: 5, target: addresses[0], colour: 'red' },
      { placements: [] },
      {
        placements: [
          { shardId: 5, target: addresses[0] },
          { shardId: 6, target: 'zone=' },
        ],
      },
    ];
    for (const payload of bodies) {
      const real = await node(0).http.inject({ method: 'POST', url: `${COUNTER}/placements`, payload });
      const dry = await node(0).http.inject({ method: 'POST', url: `${COUNTER}/placements?dryRun=true`, payload });
      expect(real.statusCode, real.body).toBe(400);
      expect(dry.statusCode).toBe(real.statusCode);
      expect(dry.json()).toEqual(real.json());
    }
    expect((await getPlacements(node(0))).placements).toEqual([]);
  });

  it('refuses an invalid rebalance dry run like the real call, and a misspelt dryRun flag rather than writing', async () => {
    for (const payload of [{ shardIds: [] }, { shardIds: [1000] }, { shardIds: ['1'] }, {}]) {
      const real = await node(1).http.inject({ method: 'POST', url: `${COUNTER}/rebalance`, payload });
      const dry = await node(1).http.inject({ method: 'POST', url: `${COUNTER}/rebalance?dryRun=true`, payload });
      expect(real.statusCode, real.body).toBe(400);
      expect(dry.json()).toEqual(real.json());
    }
    const typo = await node(0).http.inject({
      method: 'POST',
      url: `${COUNTER}/placements?dryrun=true`,
      payload: { shardId: 5, target: addresses[1] },
    });
    expectError(typo, 400, 'invalid_request');
    expectError(
      await node(0).http.inject({
        method: 'POST',
        url: `${COUNTER}/placements?dryRun=yes`,
        payload: { shardId: 5, target: addresses[1] },
      }),
      400,
      'invalid_request',
    );
    expect((await getPlacements(node(0))).placements).toEqual([]);
  });

  it('a placements dry run names the shards a require pin to an unknown target would leave without a home', async () => {
    const used = await increment(node(0), 'dry-run-homeless');
    const payload = { shardId: used.shardId, target: 'app@127.0.0.1:7720', mode: 'require', allowUnknownTarget: true };
    const dry = await node(1).http.inject({ method: 'POST', url: `${COUNTER}/placements?dryRun=true`, payload });
    expect(dry.statusCode, dry.body).toBe(200);
    const reply = dry.json<DryRunReply & { waiting: number[]; withoutHome: number[] }>();
    expect(reply.moves).toEqual([{ shardId: used.shardId, from: used.node, to: null }]);
    expect(reply.waiting).toEqual([used.shardId]);
    // The old name answers the same list for one more release.
    expect(reply.withoutHome).toEqual([used.shardId]);
    expect((await getPlacements(node(0))).placements).toEqual([]);
  });

  it('a placements dry run lists the moves the real call then makes, and changes nothing itself', async () => {
    const used = await increment(node(0), 'dry-run-pin');
    const other = addresses.find((address) => address !== used.node)!;
    const before = await getLocations(node(0));
    const payload = { shardId: used.shardId, target: other, reason: 'dry run test', by: 'tester' };
    const dry = await node(1).http.inject({ method: 'POST', url: `${COUNTER}/placements?dryRun=true`, payload });
    expect(dry.statusCode, dry.body).toBe(200);
    const reply = dry.json<DryRunReply>();
    expect(reply).toEqual({
      dryRun: true,
      placements: [
        { shardId: used.shardId, target: other, mode: 'prefer', expiresAt: null, reason: 'dry run test', by: 'tester' },
      ],
      moves: [{ shardId: used.shardId, from: used.node, to: other }],
      waiting: [],
      withoutHome: [],
      warnings: [],
    });
    expect((await getPlacements(node(0))).placements).toEqual([]);
    expect(await getLocations(node(0))).toEqual(before);

    const real = await node(1).http.inject({ method: 'POST', url: `${COUNTER}/placements`, payload });
    expect(real.statusCode).toBe(202);
    await waitForHome(node(0), used.shardId, other, `shard ${used.shardId} on ${other}`);
    const after = await getLocations(node(0));
    expect(movesBetween(before, after)).toEqual(reply.moves);
    const explained = (await explain(node(0), used.shardId)).json<ShardExplanation>();
    expect(explained).toMatchObject({
      home: other,
      decision: 'placement',
      placement: { target: other, reason: 'dry run test', by: 'tester' },
    });
    expect(explained.nodes.find((n) => n.address === other)?.matches).toBe(true);
    expect(explained.nodes.find((n) => n.address === used.node)?.matches).toBe(false);
  });

  it('a rebalance dry run lists where each shard would land, warns of the ones with no home, and hands nothing off', async () => {
    const used = await increment(node(1), 'dry-run-rebalance');
    const before = await getLocations(node(0));
    const dry = await node(0).http.inject({
      method: 'POST',
      url: `${COUNTER}/rebalance?dryRun=true`,
      payload: { shardIds: [used.shardId, 998] },
    });
    expect(dry.statusCode, dry.body).toBe(200);
    const reply = dry.json<DryRunReply>();
    expect(reply.dryRun).toBe(true);
    expect(reply.placements).toBeUndefined();
    expect(reply.moves).toHaveLength(1);
    expect(reply.moves[0]).toMatchObject({ shardId: used.shardId, from: used.node });
    expect(addresses).toContain(reply.moves[0]!.to);
    expect(reply.warnings).toEqual([{ shardId: 998, message: expect.stringContaining('no home yet') }]);
    expect(await getLocations(node(0))).toEqual(before);
  });
});

/** The shards whose home differs between two location answers, as moves. */
function movesBetween(
  before: ShardLocationsAnswer,
  after: ShardLocationsAnswer,
): Array<{ shardId: number; from: string; to: string }> {
  const homes = (view: typeof before) =>
    new Map(view.regions.flatMap((region) => region.shards.map((shardId) => [shardId, region.address] as const)));
  const was = homes(before);
  const now = homes(after);
  const moves: Array<{ shardId: number; from: string; to: string }> = [];
  for (const [shardId, from] of was) {
    const to = now.get(shardId);
    if (to !== undefined && to !== from) moves.push({ shardId, from, to });
  }
  return moves.sort((a, b) => a.shardId - b.shardId);
}
