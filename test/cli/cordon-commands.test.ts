// `cordon`, `uncordon`, `drain --wait` and `audit` in-process through main() against a real two-node cluster:
// what they print, their exit codes (0 ok, 1 API refusal, 2 usage error), and that every writing command
// sends `by` ($USER@hostname unless given) and `--reason`, as the accepting node's audit trail shows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningNode } from '../../src/node/node.js';
import { useTestCluster } from '../support/test-cluster.js';
import { getLocations, increment } from '../management/node-fixture.js';
import { run, tableRows } from './cli-runner.js';

const savedUrl = process.env['ACTOR_TS_URL'];
beforeAll(() => {
  delete process.env['ACTOR_TS_URL'];
});
afterAll(() => {
  if (savedUrl !== undefined) process.env['ACTOR_TS_URL'] = savedUrl;
});

describe('cordon commands against a two-node cluster', () => {
  let nodes: RunningNode[] = [];
  let url: string;
  let other: string;

  const cluster = useTestCluster(2);
  beforeAll(() => {
    ({ nodes, url } = cluster);
    other = cluster.addresses[1]!;
  });

  it('refuses bad arguments as usage errors (exit 2) and API refusals with exit 1', async () => {
    expect((await run('cordon', 'nope', '--url', url)).code).toBe(2);
    expect((await run('drain', 'app@127.0.0.1', '--url', url)).code).toBe(2);
    expect((await run('uncordon', other, '--reason', 'x'.repeat(501), '--url', url)).code).toBe(2);
    const unknown = await run('cordon', 'app@127.0.0.1:1', '--url', url);
    expect(unknown.code).toBe(1);
    expect(unknown.err[0]).toMatch(/^error: unknown_member: /);
    const notCordoned = await run('uncordon', other, '--url', url);
    expect(notCordoned.code).toBe(1);
    expect(notCordoned.err[0]).toMatch(/^error: not_cordoned: /);
  });

  it('cordons, lists the node as cordoned, uncordons; audit shows both with by and reason', async () => {
    const cordoned = await run('cordon', other, '--reason', 'patching', '--url', url);
    expect(cordoned.code, cordoned.err.join('\n')).toBe(0);
    expect(cordoned.out[0]).toMatch(new RegExp(`^${other.replaceAll('.', '\\.')} cordoned \\(hlc `));
    const members = await run('members', '--url', url);
    const row = tableRows(members.out).find((cells) => cells[0] === other);
    expect(row?.at(-1)).toBe('CORDONED');
    expect((await run('uncordon', other, '--by', 'me@here', '--url', url)).code).toBe(0);
    const audit = await run('audit', '--url', url);
    const rows = tableRows(audit.out);
    expect(rows[0]?.slice(1, 2)).toEqual(['uncordon']);
    expect(rows[0]).toContain('me@here');
    expect(rows[1]?.slice(1, 2)).toEqual(['cordon']);
    expect(rows[1]).toContain('patching');
    expect(rows[1]?.find((cell) => cell.includes('@') && cell !== other)).toBeDefined();
  });

  it('drain --wait empties the node, printing each shard as it lands elsewhere', async () => {
    for (let i = 0; i < 20; i++) await increment(nodes[i % 2]!, `cli-drain-${i}`);
    const hosted = (await getLocations(nodes[0]!)).regions.find((region) => region.address === other)?.shards ?? [];
    expect(hosted.length).toBeGreaterThan(0);
    const drained = await run('drain', other, '--wait', '--reason', 'retire', '--url', url);
    expect(drained.code, drained.err.join('\n')).toBe(0);
    const lines = drained.out.filter((line) => /^ {2}Counter shard \d+ -> /.test(line));
    expect(lines.map((line) => Number(/shard (\d+)/.exec(line)?.[1])).sort((a, b) => a - b)).toEqual(
      [...hosted].sort((a, b) => a - b),
    );
    expect(drained.out.at(-1)).toMatch(/drained in [0-9.]+ s$/);
    expect((await getLocations(nodes[0]!)).regions.find((region) => region.address === other)?.shards ?? []).toEqual(
      [],
    );
    // The only other node cannot be drained now: nothing could take its shards.
    const refused = await run('drain', nodes[0]!.address.toString(), '--url', url);
    expect(refused.code).toBe(1);
    expect(refused.err[0]).toMatch(/^error: no_capacity: /);
    expect((await run('uncordon', other, '--url', url)).code).toBe(0);
  }, 60_000);

  it('sends by and reason with rebalance and placements rm', async () => {
    expect((await run('placements', 'set', '7', other, '--url', url)).code).toBe(0);
    expect((await run('placements', 'rm', '7', '--reason', 'not needed', '--url', url)).code).toBe(0);
    await increment(nodes[0]!, 'cli-rebalance');
    const shard = (await increment(nodes[0]!, 'cli-rebalance')).shardId;
    expect((await run('rebalance', String(shard), '--reason', 'even out', '--by', 'ops', '--url', url)).code).toBe(0);
    const rows = tableRows((await run('audit', '--url', url)).out);
    expect(rows[0]?.slice(1, 3)).toEqual(['rebalance', 'Counter']);
    expect(rows[0]).toContain('ops');
    expect(rows[0]).toContain('even out');
    expect(rows[1]?.slice(1, 4)).toEqual(['unpin', 'Counter', '7']);
    expect(rows[1]).toContain('not needed');
  }, 60_000);
});
