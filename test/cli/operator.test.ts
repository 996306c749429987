// The operator commands of `actor-ts-placement` run in-process through main() against real nodes' HTTP URLs:
// what they print, their exit codes (0 ok, 1 API error, 2 usage error) and what they change in the cluster.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MEMBER_COLUMNS, PLACEMENT_COLUMNS, headerOf } from '../support/cli-headers.js';
import { run, tableRows } from './cli-runner.js';
import { homeOn } from '../support/shard-homes.js';
import { useTestCluster } from '../support/test-cluster.js';
import type { RunningNode } from '../../src/node/node.js';
import {
  getLocations,
  getPlacements,
  increment,
  pollUntil,
  startTestNode,
  stopAll,
} from '../management/node-fixture.js';

// The commands read these from the environment; a developer's shell must not change what the tests see.
const ENV_KEYS = ['ACTOR_TS_URL', 'ACTOR_TS_AUTH_TOKEN'] as const;
const savedEnv = new Map<string, string | undefined>();
beforeAll(() => {
  for (const key of ENV_KEYS) {
    savedEnv.set(key, process.env[key]);
    delete process.env[key];
  }
});
afterAll(() => {
  for (const [key, value] of savedEnv) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
});

describe('operator commands against a two-node cluster', () => {
  let nodes: RunningNode[] = [];
  let url: string;
  let self: string;
  let other: string;

  const cluster = useTestCluster(2);
  beforeAll(() => {
    ({ nodes, url } = cluster);
    [self, other] = cluster.addresses as [string, string];
  });

  beforeEach(async () => {
    for (const { shardId } of (await getPlacements(nodes[0]!)).placements) {
      expect((await run('placements', 'rm', String(shardId), '--url', url)).code).toBe(0);
    }
  });

  it('placements set pins a shard and prints what was written', async () => {
    const result = await run('placements', 'set', '42', other, '--url', url);
    expect(result).toMatchObject({ code: 0, err: [] });
    expect(result.out).toHaveLength(1);
    expect(result.out[0]).toMatch(
      new RegExp(
        `^shard 42 -> ${other.replaceAll('.', '\\.')} \\(hlc \\d{4}-\\d\\d-\\d\\dT.*#\\d+@${self.replaceAll('.', '\\.')}\\)$`,
      ),
    );
    expect((await getPlacements(nodes[0]!)).placements.map((p) => [p.shardId, p.target])).toEqual([[42, other]]);
  });

  it('placements set refuses a port typo (exit 1, unknown_target, nothing written), naming --allow-unknown', async () => {
    const typo = await run('placements', 'set', '234', 'app@127.0.0.1:7720', '--require', '--url', url);
    expect(typo.code).toBe(1);
    expect(typo.err.join('\n')).toMatch(
      /^error: unknown_target: no current member matches target app@127\.0\.0\.1:7720, so shard 234 would lose its home; nothing was written\..*--allow-unknown/,
    );
    const system = await run('placements', 'set', '234', `ap@${self.slice(self.indexOf('@') + 1)}`, '--url', url);
    expect(system.code).toBe(1);
    expect((await getPlacements(nodes[0]!)).placements).toEqual([]);
  });

  it('placements set accepts an actor-ts:// target, and with --allow-unknown writes a non-member with a warning', async () => {
    expect((await run('placements', 'set', '1', `actor-ts://${self}`, '--url', url)).code).toBe(0);
    const warned = await run('placements', 'set', '2', 'app@10.9.9.9:7777', '--allow-unknown', '--url', url);
    expect(warned.code).toBe(0);
    expect(warned.out[0]).toContain('shard 2 -> app@10.9.9.9:7777');
    expect(warned.err).toHaveLength(1);
    expect(warned.err[0]).toMatch(/^warning: target app@10\.9\.9\.9:7777 is not a current member/);
    expect((await getPlacements(nodes[0]!)).placements.map((p) => [p.shardId, p.target])).toEqual([
      [1, self],
      [2, 'app@10.9.9.9:7777'],
    ]);
  });

  it('placements ls prints a table sorted by shard id, or says there are none', async () => {
    const none = await run('placements', 'ls', '--url', url);
    expect(none).toEqual({ code: 0, out: ['no explicit placements for Counter'], err: [] });
    for (const [shard, target] of [
      ['300', other],
      ['7', self],
      ['45', other],
    ] as const) {
      expect((await run('placements', 'set', shard, target, '--url', url)).code).toBe(0);
    }
    const listed = await run('placements', 'ls', '--url', nodes[1]!.httpUrl);
    expect(listed.code).toBe(0);
    expect(headerOf(listed.out)).toEqual(PLACEMENT_COLUMNS);
    // Written through node 1, listed through node 2: replication is asynchronous, so poll the other node.
    let rows = tableRows(listed.out);
    await pollUntil(async () => {
      if (rows.length < 3) rows = tableRows((await run('placements', 'ls', '--url', nodes[1]!.httpUrl)).out);
      return rows.length >= 3;
    }, 'node 2 to list the three pins');
    expect(rows.map((row) => [row[0], row[1], row[2], row[3], row[4], row[6]])).toEqual([
      ['7', self, 'prefer', 'never', '-', self],
      ['45', other, 'prefer', 'never', '-', self],
      ['300', other, 'prefer', 'never', '-', self],
    ]);
  });

  it('placements rm removes a pin, and fails with exit code 1 when there is none', async () => {
    expect((await run('placements', 'set', '9', other, '--url', url)).code).toBe(0);
    expect(await run('placements', 'rm', '9', '--url', url)).toEqual({
      code: 0,
      out: ['shard 9: pin removed'],
      err: [],
    });
    expect((await getPlacements(nodes[0]!)).placements).toEqual([]);
    const again = await run('placements', 'rm', '9', '--url', url);
    expect(again.code).toBe(1);
    expect(again.err).toEqual([
      expect.stringMatching(/^error: not_found: shard 9 of Counter has no explicit placement/),
    ]);
  });

  it('rebalance hands allocated shards off, waits for their new home, and names the unallocated ones', async () => {
    const { shardId } = await increment(nodes[0]!, 'cli-rebalance');
    const homeless = shardId === 998 ? 997 : 998;
    expect(await homeOn(nodes[0]!, homeless)).toBeUndefined();
    const result = await run('rebalance', String(shardId), String(homeless), '--url', url);
    expect(result.code).toBe(0);
    expect(result.out[0]).toBe(`hand-off started for ${shardId}; waiting for the new homes...`);
    expect(result.out).toContainEqual(expect.stringMatching(new RegExp(`^  shard ${shardId} now on app@`)));
    expect(result.err).toEqual([`not allocated yet (nothing to move): ${homeless}`]);
    expect(await homeOn(nodes[0]!, shardId)).toBeDefined();
  });

  it('placements set --move pins a shard and waits until it lives on the target', async () => {
    const before = await increment(nodes[0]!, 'cli-move');
    const target = before.node === self ? other : self;
    const result = await run('placements', 'set', String(before.shardId), target, '--move', '--url', url);
    expect(result.code).toBe(0);
    expect(result.out).toContain(`  shard ${before.shardId} now on ${target}`);
    expect(await homeOn(nodes[1]!, before.shardId)).toBe(target);
    expect((await increment(nodes[1]!, 'cli-move')).node).toBe(target);
  });

  it('shards prints every node with its shards, pinned ones marked *', async () => {
    const answers = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((id) => increment(nodes[0]!, `cli-shards-${id}`)));
    const pinned = answers[0]!;
    expect((await run('placements', 'set', String(pinned.shardId), pinned.node, '--url', url)).code).toBe(0);
    const result = await run('shards', '--url', url);
    expect(result.code).toBe(0);
    expect(result.out[0]?.split(/\s+/)).toEqual(['node', 'count', 'shards']);
    expect(result.out.at(-1)).toBe('* pinned by an explicit placement');
    const rows = tableRows(result.out);
    const locations = await getLocations(nodes[0]!);
    expect(rows.map((row) => row[0])).toEqual(locations.regions.map((region) => region.address));
    for (const answer of answers) {
      const row = rows.find((r) => r[0] === answer.node);
      expect(row, answer.node).toBeDefined();
      const marked = answer.shardId === pinned.shardId;
      const cells = (row![2] ?? '').split(',');
      if (marked) expect(cells).toContain(`${answer.shardId}*`);
      else expect(cells.some((cell) => cell === String(answer.shardId) || inRange(cell, answer.shardId))).toBe(true);
    }
    for (const row of rows) {
      const region = locations.regions.find((r) => r.address === row[0]);
      expect(row[1]).toBe(String(region?.shards.length));
    }
  });

  it('members lists both nodes and marks the one asked', async () => {
    const result = await run('members', '--url', nodes[1]!.httpUrl);
    expect(result.code).toBe(0);
    expect(headerOf(result.out)).toEqual(MEMBER_COLUMNS);
    const rows = tableRows(result.out);
    expect(rows.map((row) => row[0]).sort()).toEqual([self, `${other} (this)`].sort());
    for (const row of rows) expect(row.slice(1, 3)).toEqual(['up', 'yes']);
  });

  it('rejects bad arguments with exit code 2 and a clear message, sending nothing', async () => {
    expect((await run('placements', 'set', '5', other, '--url', url)).code).toBe(0);
    const before = await getPlacements(nodes[0]!);
    const cases: Array<{ args: string[]; message: RegExp }> = [
      { args: ['placements', 'set', 'abc', other], message: /^error: "abc" is not a shard id/ },
      { args: ['placements', 'set', '1.5', other], message: /^error: "1\.5" is not a shard id/ },
      {
        args: ['placements', 'set', '5', 'nope'],
        message: /^error: target "nope" is neither an address nor a selector: expected an address \(system@host:port\)/,
      },
      {
        args: ['placements', 'set', '5', 'app@host:99999'],
        message: /"app@host:99999": port must be an integer in 1\.\.65535/,
      },
      { args: ['placements', 'rm', 'five'], message: /^error: "five" is not a shard id/ },
      { args: ['rebalance', '5', 'x'], message: /^error: "x" is not a shard id/ },
      { args: ['placements', 'set', '5'], message: /^error: missing required argument 'target'/ },
      { args: ['placements', 'frobnicate'], message: /^error: unknown command 'frobnicate'/ },
      { args: ['shards', '--bogus'], message: /^error: unknown option '--bogus'/ },
    ];
    for (const { args, message } of cases) {
      const result = await run(...args, '--url', url);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.err[0], args.join(' ')).toMatch(message);
      expect(result.out).toEqual([]);
    }
    expect(await getPlacements(nodes[0]!)).toEqual(before);
  });

  it('reports an API error with exit code 1 as "error: <code>: <message>"', async () => {
    const unknown = await run('placements', 'ls', '--type', 'NoSuchType', '--url', url);
    expect(unknown).toEqual({
      code: 1,
      out: [],
      err: ['error: unknown_type: entity type "NoSuchType" is not initialised on this node (it runs: Counter)'],
    });
    const shards = await run('shards', '--type', 'NoSuchType', '--url', url);
    expect(shards.code).toBe(1);
    expect(shards.err[0]).toMatch(/^error: unknown_type: /);
    const range = await run('placements', 'set', '1000', other, '--url', url);
    expect(range.code).toBe(1);
    expect(range.err[0]).toMatch(
      /^error: invalid_shard: shard id 1000 is out of range for Counter: expected an integer in 0\.\.999/,
    );
    expect((await getPlacements(nodes[0]!)).placements).toEqual([]);
  });

  it('a --url without a scheme is a usage error (exit 2) that says what to write, not "unreachable"', async () => {
    for (const command of [['members'], ['placements', 'set', '1', other]]) {
      const result = await run(...command, '--url', '127.0.0.1:8551');
      expect(result.code, command.join(' ')).toBe(2);
      expect(result.err[0]).toBe(
        'error: --url "127.0.0.1:8551" is not an http:// or https:// URL of a node\'s management API; did you mean http://127.0.0.1:8551?',
      );
    }
    expect((await run('members', '--url', 'ftp://x')).code).toBe(2);
  });

  it('reports an unreachable URL with exit code 1', async () => {
    const result = await run('members', '--url', 'http://127.0.0.1:1');
    expect(result.code).toBe(1);
    expect(result.err[0]).toMatch(/^error: unreachable: cannot reach http:\/\/127\.0\.0\.1:1/);
  });

  it('--help prints usage and exits 0', async () => {
    const result = await run('placements', 'set', '--help');
    expect(result.code).toBe(0);
    expect(result.out.join('\n')).toContain('Usage: actor-ts-placement placements set [options] <shardId> <target>');
    expect(result.out.join('\n')).toContain('--token <token>');
  });
});

describe('operator commands against a node with a bearer token', () => {
  const token = 'cli-token-123';
  let node: RunningNode;
  let url: string;
  let self: string;

  beforeAll(async () => {
    node = await startTestNode({ authToken: token });
    url = node.httpUrl;
    self = node.address.toString();
  });
  afterAll(() => stopAll([node]));

  it('write commands fail with exit code 1 without the token or with a wrong one, and change nothing', async () => {
    for (const extra of [[], ['--token', 'wrong']]) {
      const result = await run('placements', 'set', '3', self, '--url', url, ...extra);
      expect(result).toEqual({
        code: 1,
        out: [],
        err: [
          'error: unauthorized: missing or wrong bearer token (give the token with --token <token> or the ACTOR_TS_AUTH_TOKEN environment variable)',
        ],
      });
    }
    expect((await run('rebalance', '3', '--url', url)).code).toBe(1);
    expect((await getPlacements(node)).placements).toEqual([]);
  });

  it('--token authorises writes; reads need none', async () => {
    expect((await run('placements', 'set', '3', self, '--url', url, '--token', token)).code).toBe(0);
    const listed = await run('placements', 'ls', '--url', url);
    expect(listed.code).toBe(0);
    expect(tableRows(listed.out).map((row) => row.slice(0, 2))).toEqual([['3', self]]);
    expect((await run('placements', 'rm', '3', '--url', url, '--token', token)).code).toBe(0);
    expect((await getPlacements(node)).placements).toEqual([]);
  });

  it('takes the token and the URL from ACTOR_TS_AUTH_TOKEN and ACTOR_TS_URL', async () => {
    process.env['ACTOR_TS_AUTH_TOKEN'] = token;
    process.env['ACTOR_TS_URL'] = url;
    try {
      const result = await run('placements', 'set', '4', self);
      expect(result.code).toBe(0);
      expect(result.out[0]).toContain(`shard 4 -> ${self}`);
    } finally {
      delete process.env['ACTOR_TS_AUTH_TOKEN'];
      delete process.env['ACTOR_TS_URL'];
    }
    expect((await getPlacements(node)).placements.map((p) => p.shardId)).toEqual([4]);
  });
});

/** Whether a "a-b" range cell covers the shard id. */
function inRange(cell: string, shardId: number): boolean {
  const match = /^(\d+)-(\d+)$/.exec(cell);
  return match !== null && Number(match[1]) <= shardId && shardId <= Number(match[2]);
}
