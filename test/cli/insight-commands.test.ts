// `explain` and the `--dry-run` of `placements set` and `rebalance`, run in-process through main() against
// a real two-node cluster: what they print, their exit codes, and that a dry run changes nothing while the
// real command then makes the very move it printed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningNode } from '../../src/node/node.js';
import { getLocations, getPlacements, increment, startTestCluster, stopAll } from '../management/node-fixture.js';
import { homeOn, waitForHome } from '../support/shard-homes.js';
import { run, tableRows } from './cli-runner.js';

describe('explain and dry runs on the command line', () => {
  let nodes: RunningNode[] = [];
  let url: string;
  let addresses: string[] = [];

  // The commands read these from the environment; a developer's shell must not change what the tests see.
  const saved = new Map<string, string | undefined>();
  beforeAll(async () => {
    for (const key of ['ACTOR_TS_URL', 'ACTOR_TS_AUTH_TOKEN']) {
      saved.set(key, process.env[key]);
      delete process.env[key];
    }
    nodes = await startTestCluster(2);
    url = nodes[1]!.httpUrl;
    addresses = nodes.map((n) => n.address.toString());
  }, 40_000);
  afterAll(async () => {
    await stopAll(nodes);
    for (const [key, value] of saved) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }, 40_000);

  it('explain prints the decision, the reason and every node; bad input exits 2 or 1', async () => {
    const used = await increment(nodes[0]!, 'cli-explain');
    const result = await run('explain', String(used.shardId), '--url', url);
    expect(result).toMatchObject({ code: 0, err: [] });
    expect(result.out[0]).toBe(`shard ${used.shardId}: on ${used.node} (fallback)`);
    expect(result.out[1]).toBe(`shard ${used.shardId} has no pin: the fallback strategy placed it on ${used.node}.`);
    // The shard's history follows the node table: the coordinator allocated it to its home, which started it.
    const history = result.out.indexOf('history:');
    expect(history).toBeGreaterThan(2);
    const events = result.out.slice(history + 1).map((line) => line.trim().split(/\s{2,}/)[1]);
    expect(events).toEqual(expect.arrayContaining([`allocated to ${used.node}`, `started on ${used.node}`]));
    // The node the CLI asked adds what it runs of the type: at least the entity just asked, if it is the home.
    const active = result.out.find((line) => line.startsWith('entities of the type active on '));
    const [, activeNode, count] = /^entities of the type active on (\S+): (\d+)$/.exec(active ?? '') ?? [];
    expect(addresses).toContain(activeNode);
    if (activeNode === used.node) expect(Number(count)).toBeGreaterThanOrEqual(1);
    const rows = tableRows(result.out.slice(0, result.out.indexOf(active ?? 'history:')));
    expect(rows.map((row) => row[0]).sort()).toEqual(
      addresses.map((a) => (a === used.node ? `${a} (home)` : a)).sort(),
    );
    for (const row of rows) expect(row.slice(2)).toEqual(['yes', 'up', 'no', '-']);

    expect((await run('explain', 'x', '--url', url)).code).toBe(2);
    const unknown = await run('explain', '1', '--type', 'Nope', '--url', url);
    expect(unknown.code).toBe(1);
    expect(unknown.err[0]).toMatch(/^error: unknown_type: /);
    const outOfRange = await run('explain', '1000', '--url', url);
    expect(outOfRange.code).toBe(1);
    expect(outOfRange.err[0]).toMatch(/^error: invalid_shard: /);
  });

  it('placements set --dry-run prints the move and writes nothing; the real set then makes that move', async () => {
    const used = await increment(nodes[0]!, 'cli-dry-run');
    const other = addresses.find((a) => a !== used.node)!;
    const dry = await run('placements', 'set', String(used.shardId), other, '--dry-run', '--url', url);
    expect(dry).toMatchObject({ code: 0, err: [] });
    expect(dry.out[0]).toBe('dry run: nothing was written and nothing moved');
    expect(dry.out[1]).toBe(`would pin shard ${used.shardId} -> ${other} (prefer)`);
    expect(tableRows(dry.out)).toEqual([[String(used.shardId), used.node, other]]);
    expect((await getPlacements(nodes[0]!)).placements).toEqual([]);
    expect(await homeOn(nodes[0]!, used.shardId)).toBe(used.node);

    expect(
      (await run('placements', 'set', String(used.shardId), other, '--dry-run', '--move', '--url', url)).code,
    ).toBe(2);
    // A shard nobody has asked for: nothing moves, and the dry run says why.
    const fresh = (used.shardId + 500) % 1000;
    const idle = await run('placements', 'set', String(fresh), other, '--dry-run', '--url', url);
    expect(idle.out.at(-1)).toMatch(/^no shard would move: .*not allocated yet/);
    expect((await run('placements', 'set', String(used.shardId), other, '--url', url)).code).toBe(0);
    await waitForHome(nodes[0]!, used.shardId, other, `shard ${used.shardId} moved`);
    const explained = await run('explain', String(used.shardId), '--url', url);
    expect(explained.out[0]).toBe(`shard ${used.shardId}: on ${other} (placement)`);
    expect(explained.out[2]).toMatch(
      new RegExp(`^pin: ${other.replaceAll('.', '\\.')} \\(prefer, never expires, by .+\\)$`),
    );
  });

  it('rebalance --dry-run prints where each shard would land and warns of shards with no home', async () => {
    const used = await increment(nodes[1]!, 'cli-rebalance-dry-run');
    const before = await getLocations(nodes[0]!);
    const dry = await run('rebalance', String(used.shardId), '997', '--dry-run', '--url', url);
    expect(dry.code).toBe(0);
    const rows = tableRows(dry.out);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.slice(0, 2)).toEqual([String(used.shardId), used.node]);
    expect(addresses).toContain(rows[0]![2]);
    expect(dry.err).toEqual(['warning: shard 997 has no home yet: nothing to move; its first message allocates it']);
    expect(await getLocations(nodes[0]!)).toEqual(before);
  });
});
