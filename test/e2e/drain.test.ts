// Issue 12, multi-process: a three-node `local-cluster` (real CLI node processes over TCP), 60 counter entities
// spread over it, then `drain` node 2 through the CLI with --wait: node 2 ends hosting no shard, the entities
// that lived there answer from nodes 1 and 3, new entities never land on node 2 while it is cordoned, and
// after `uncordon` they do again. The drain's duration (CLI start to empty node) is printed for the record.
import { describe, expect, it } from 'vitest';
import { run as cli } from '../cli/cli-runner.js';
import {
  http,
  httpOk,
  homesOf,
  startLocalCluster,
  useProcessSet,
  waitFor,
  type CounterValue,
  type ShardLocations,
} from './harness.js';

const procs = useProcessSet();

const SHARDS = '/actor-ts/cluster/shards/Counter';

async function increment(url: string, entityId: string): Promise<CounterValue> {
  return httpOk<CounterValue>('POST', `${url}/counters/${encodeURIComponent(entityId)}/increment`);
}

describe('drain (issue 12)', () => {
  it('drains node 2 of a three-node cluster while it stays a member, and uncordon lets shards come back', async () => {
    const { urls, addresses } = await startLocalCluster(procs, 'drain');
    const [url1, url2, url3] = urls as [string, string, string];
    const node2 = addresses[1] as string;

    // 60 entities, asked through every node in turn: their shards spread over the three nodes.
    const before = new Map<string, CounterValue>();
    for (let i = 0; i < 60; i++) before.set(`drain-${i}`, await increment(urls[i % 3] as string, `drain-${i}`));
    const onNode2 = [...before.values()].filter((value) => value.node === node2);
    expect(onNode2.length, 'some entities live on node 2').toBeGreaterThan(0);

    const started = Date.now();
    const drained = await cli('drain', node2, '--wait', '--reason', 'e2e drain', '--url', url1);
    const drainMs = Date.now() - started;
    expect(drained.code, [...drained.out, ...drained.err].join('\n')).toBe(0);
    expect(drained.out.join('\n')).toMatch(new RegExp(`${node2.replace(/\./g, '\\.')} drained in [0-9.]+ s`));
    // One progress line per shard that moved, each naming its new home (never node 2).
    const progress = drained.out.filter((line) => /^ {2}Counter shard \d+ -> /.test(line));
    const movedShards = new Set(onNode2.map((value) => value.shardId));
    expect(progress).toHaveLength(movedShards.size);
    for (const line of progress) expect(line).not.toContain(node2);
    console.log(`drain of node 2 (${onNode2.length} of 60 entities, ${movedShards.size} shards): ${drainMs} ms`);

    const locations = await httpOk<ShardLocations>('GET', url3 + SHARDS);
    expect(locations.regions.find((region) => region.address === node2)?.shards ?? []).toEqual([]);
    // Node 2 is still a member (it answers and is listed, cordoned).
    const members = await cli('members', '--url', url2);
    expect(members.out.find((line) => line.startsWith(node2))).toContain('CORDONED');

    // The entities that lived on node 2 answer from nodes 1 and 3 (their state started over with the move).
    for (const value of onNode2) {
      const after = await increment(url2, value.entityId);
      expect(after.node).not.toBe(node2);
      expect(addresses).toContain(after.node);
    }
    // New entities never land on node 2 while it is cordoned.
    for (let i = 0; i < 30; i++) expect((await increment(urls[i % 3] as string, `fresh-${i}`)).node).not.toBe(node2);
    expect(homesOf(await httpOk<ShardLocations>('GET', url1 + SHARDS)).size).toBeGreaterThan(0);

    const uncordoned = await cli('uncordon', node2, '--reason', 'done', '--url', url3);
    expect(uncordoned.code, uncordoned.err.join('\n')).toBe(0);
    // Node 2 hosts nothing, so new shards go there again once every node saw the uncordon.
    await waitFor(
      'a new entity to land on node 2',
      async () => {
        for (let i = 0; i < 10; i++) {
          const id = `later-${Date.now()}-${i}`;
          if ((await increment(url1, id)).node === node2) return true;
        }
        return undefined;
      },
      30_000,
      200,
    );

    // Each write is audited once, on the node that accepted it.
    const audit1 = await http<{
      entries: Array<{ action: string; target: string; reason: string | null; by: string | null }>;
    }>('GET', `${url1}/actor-ts/audit`);
    expect(audit1.body.entries.filter((e) => e.action === 'drain')).toEqual([
      expect.objectContaining({ target: node2, reason: 'e2e drain' }),
    ]);
    expect(audit1.body.entries[0]?.by).toMatch(/@/);
    const audit3 = await http<{ entries: Array<{ action: string; target: string }> }>('GET', `${url3}/actor-ts/audit`);
    expect(audit3.body.entries.map((e) => e.action)).toEqual(['uncordon']);
  }, 180_000);
});
