// Management routes on a real three-node cluster: members from every node, placements written through one
// node and read back from the others, shard locations answered from any node, and a pinned shard moved by
// a rebalance request sent to yet another node.
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningNode } from '../../src/node/node.js';
import { waitForHome } from '../support/shard-homes.js';
import { useTestCluster } from '../support/test-cluster.js';
import { API, COUNTER, getLocations, getPlacements, homeOf, increment, pollUntil } from './node-fixture.js';
import { postPlacements } from '../support/post-placements.js';
import type { MembersAnswer, PinsWritten } from '../../src/management/api-shapes.js';

describe('management routes on a three-node cluster', () => {
  let nodes: RunningNode[] = [];
  let addresses: string[] = [];
  const node = (i: number): RunningNode => nodes[i]!;

  const cluster = useTestCluster(3);
  beforeAll(() => ({ nodes, addresses } = cluster));

  it('GET members on every node lists all three up, with that node as self', async () => {
    for (const [i, n] of nodes.entries()) {
      const body = (await n.http.inject({ method: 'GET', url: `${API}/cluster/members` })).json<MembersAnswer>();
      expect(body.self).toBe(addresses[i]);
      expect(body.members.map((m) => m.address).sort()).toEqual([...addresses].sort());
      expect(body.members.every((m) => m.status === 'up' && m.reachable)).toBe(true);
    }
  });

  it('a placement written through one node reads back the same from every node', async () => {
    const response = await postPlacements(node(0), {
      placements: [
        { shardId: 21, target: addresses[2] },
        { shardId: 20, target: `actor-ts://${addresses[1]}` },
      ],
    });
    expect(response.statusCode).toBe(202);
    // Both targets are members: no warning.
    expect(response.json<PinsWritten>().warnings).toEqual([]);
    const written = await getPlacements(node(0));
    expect(written.placements.map((p) => [p.shardId, p.target])).toEqual([
      [20, addresses[1]],
      [21, addresses[2]],
    ]);
    await pollUntil(async () => {
      const views = await Promise.all(nodes.map((n) => getPlacements(n)));
      return views.every((view) => JSON.stringify(view) === JSON.stringify(written));
    }, 'the placements to replicate to every node');
  });

  it("GET shards gives the same answer (the coordinator's) from any node", async () => {
    const answers = await Promise.all(
      ['p', 'q', 'r', 's', 't', 'u'].map((id, i) => increment(node(i % 3), `loc-${id}`)),
    );
    const views = await Promise.all(nodes.map((n) => getLocations(n)));
    expect(views[1]).toEqual(views[0]);
    expect(views[2]).toEqual(views[0]);
    for (const answer of answers) expect(homeOf(views[0]!, answer.shardId)).toBe(answer.node);
    for (const region of views[0]!.regions) expect(addresses).toContain(region.address);
  });

  it('a shard pinned through node 1 and rebalanced through node 2 moves to the pinned node', async () => {
    const first = await increment(node(0), 'move-me');
    const target = addresses.find((address) => address !== first.node)!;
    const pin = await node(0).http.inject({
      method: 'POST',
      url: `${COUNTER}/placements`,
      payload: { shardId: first.shardId, target },
    });
    expect(pin.statusCode).toBe(202);
    // The pin must have reached the coordinator's node before the hand-off asks the strategy for a new home.
    await pollUntil(async () => {
      const views = await Promise.all(nodes.map((n) => getPlacements(n)));
      return views.every((view) => view.placements.some((p) => p.shardId === first.shardId && p.target === target));
    }, 'the pin to replicate');
    const rebalance = await node(1).http.inject({
      method: 'POST',
      url: `${COUNTER}/rebalance`,
      payload: { shardIds: [first.shardId] },
    });
    expect(rebalance.statusCode).toBe(202);
    // The coordinator's periodic rebalance may already have started moving it; either way it is not unallocated.
    expect(rebalance.json()).toEqual({ accepted: [first.shardId], unallocated: [], homeless: [] });
    await waitForHome(node(2), first.shardId, target, `shard ${first.shardId} to move to ${target}`);
    const after = await increment(node(2), 'move-me');
    expect(after.node).toBe(target);
    expect(after.shardId).toBe(first.shardId);
  });

  it('warns for a target that is not a member while writing to a member without warning', async () => {
    const response = await postPlacements(node(2), {
      placements: [
        { shardId: 30, target: addresses[0] },
        { shardId: 31, target: 'app@127.0.0.1:1' },
      ],
      allowUnknownTarget: true,
    });
    expect(response.statusCode).toBe(202);
    const body = response.json<PinsWritten>();
    expect(body.warnings.map((w) => [w.shardId, w.target])).toEqual([[31, 'app@127.0.0.1:1']]);
  });
  it('GET /metrics on every node follows the pins, the hand-off and the members (Prometheus text format)', async () => {
    const scrape = async (n: RunningNode): Promise<string> => {
      const response = await n.http.inject({ method: 'GET', url: '/metrics' });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
      return response.body;
    };
    const value = (text: string, series: string): number => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return line === undefined ? Number.NaN : Number(line.slice(series.length + 1));
    };
    let handOffs = 0;
    for (const n of nodes) {
      // Replication may still be bringing the previous test's pins: wait until this node's listing settles.
      await pollUntil(async () => {
        const before = (await getPlacements(n)).placements.length;
        const gauge = value(await scrape(n), 'actor_ts_placements{type="Counter",mode="prefer"}');
        return before > 0 && gauge === before && (await getPlacements(n)).placements.length === before;
      }, 'the placements gauge to match the listing');
      const text = await scrape(n);
      expect(value(text, 'actor_ts_cluster_members{status="up"}')).toBe(3);
      expect(value(text, 'actor_ts_unreachable_members')).toBe(0);
      expect(value(text, 'actor_ts_placements{type="Counter",mode="prefer"}')).toBe(
        (await getPlacements(n)).placements.length,
      );
      expect(text).toContain('# TYPE actor_ts_handoff_duration_seconds histogram');
      expect(text).toContain('# TYPE actor_ts_placement_propagation_seconds histogram');
      expect(value(text, 'actor_ts_placement_store_generation')).toBe(0);
      handOffs += value(text, 'actor_ts_handoffs_total{type="Counter"}') || 0;
    }
    // The rebalance test above moved a pinned shard: its coordinator counted the hand-off.
    expect(handOffs).toBeGreaterThanOrEqual(1);
  });
});
