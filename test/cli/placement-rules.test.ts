// The CLI side of placement rules (issue 11), in-process through main() against real nodes with attributes:
// `placements set` with --require/--prefer, --ttl, --expires-at, --reason and --by (default $USER@hostname),
// `placements ls` showing mode, expiry and reason (--include-expired), `members` showing attributes, and
// strict parsing of --ttl, --attribute and selectors (exit code 2, nothing sent).
import { hostname } from 'node:os';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/cli/duration.js';
import { PROTOCOL_VERSION } from '../../src/cluster/transport/wire-message.js';
import { PLACEMENT_COLUMNS, headerOf } from '../support/cli-headers.js';
import { run, tableRows } from './cli-runner.js';
import type { RunningNode } from '../../src/node/node.js';
import { getPlacements, pollUntil, startTestNode, stopAll } from '../management/node-fixture.js';

const ENV_KEYS = ['ACTOR_TS_URL', 'ACTOR_TS_AUTH_TOKEN', 'USER'] as const;
const savedEnv = new Map<string, string | undefined>();
beforeAll(() => {
  for (const key of ENV_KEYS) savedEnv.set(key, process.env[key]);
  delete process.env['ACTOR_TS_URL'];
  delete process.env['ACTOR_TS_AUTH_TOKEN'];
  process.env['USER'] = 'tester';
});
afterAll(() => {
  for (const [key, value] of savedEnv) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
});

describe('parseDuration', () => {
  it('reads integers with an optional unit', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('10m')).toBe(600_000);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration('1d')).toBe(86_400_000);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('600000')).toBe(600_000);
  });

  it.each(['', '0', '0s', '-5m', '1.5h', '10 m', '10M', '10min', 'm', '1e3', ' 10m', '999999999999999d'])(
    'rejects %j',
    (text) => {
      expect(() => parseDuration(text)).toThrow();
    },
  );
});

describe('placement rules from the command line', () => {
  let node: RunningNode;
  let url: string;
  let self: string;

  beforeAll(async () => {
    node = await startTestNode({ attributes: { zone: 'eu-west' } });
    url = node.httpUrl;
    self = node.address.toString();
  });
  afterAll(() => stopAll([node]));
  beforeEach(async () => {
    for (const { shardId } of (await getPlacements(node)).placements)
      expect((await run('placements', 'rm', String(shardId), '--url', url)).code).toBe(0);
  });

  it('placements set pins to a selector with --require --ttl --reason, by $USER@hostname', async () => {
    const before = Date.now();
    const result = await run(
      'placements',
      'set',
      '42',
      'zone=eu-west',
      '--require',
      '--ttl',
      '10m',
      '--reason',
      'GDPR tenant 17',
      '--url',
      url,
    );
    expect(result.err).toEqual([]);
    expect(result.code).toBe(0);
    expect(result.out).toHaveLength(1);
    expect(result.out[0]).toMatch(
      /^shard 42 -> zone=eu-west \(require, expires \d{4}-\d\d-\d\dT[\d:.]+Z, reason "GDPR tenant 17", hlc .*\)$/,
    );
    const [pin] = (await getPlacements(node)).placements;
    expect(pin).toMatchObject({
      shardId: 42,
      target: 'zone=eu-west',
      mode: 'require',
      reason: 'GDPR tenant 17',
      by: `tester@${hostname()}`,
    });
    expect(Date.parse(pin?.expiresAt ?? '')).toBeGreaterThanOrEqual(before + 600_000);
  });

  it('--by overrides the author, --expires-at sets an absolute expiry, --prefer is the default mode', async () => {
    expect(
      (
        await run(
          'placements',
          'set',
          '7',
          'zone=eu-west',
          '--prefer',
          '--by',
          'ops@desk',
          '--expires-at',
          '2199-01-01T00:00:00Z',
          '--url',
          url,
        )
      ).code,
    ).toBe(0);
    expect((await getPlacements(node)).placements).toEqual([
      expect.objectContaining({
        shardId: 7,
        mode: 'prefer',
        by: 'ops@desk',
        expiresAt: '2199-01-01T00:00:00.000Z',
        reason: null,
      }),
    ]);
  });

  it('refuses a selector no member matches (exit 1); with --allow-unknown writes it and warns', async () => {
    const refused = await run('placements', 'set', '8', 'zone=mars', '--require', '--url', url);
    expect(refused.code).toBe(1);
    expect(refused.err[0]).toMatch(/^error: unknown_target: no current member matches target zone=mars/);
    const result = await run('placements', 'set', '8', 'zone=mars', '--require', '--allow-unknown', '--url', url);
    expect(result.code).toBe(0);
    expect(result.err).toEqual([
      expect.stringMatching(/^warning: no current member matches zone=mars; shard 8 has no home/),
    ]);
  });

  it('placements ls shows mode, expiry and reason, and expired pins only with --include-expired', async () => {
    expect(
      (await run('placements', 'set', '1', 'zone=eu-west', '--require', '--reason', 'keep in EU', '--url', url)).code,
    ).toBe(0);
    expect((await run('placements', 'set', '2', self, '--ttl', '200ms', '--reason', 'short', '--url', url)).code).toBe(
      0,
    );
    await pollUntil(async () => (await getPlacements(node)).placements.length === 1, 'the 200 ms pin to expire');
    const listed = await run('placements', 'ls', '--url', url);
    expect(listed.code).toBe(0);
    expect(headerOf(listed.out)).toEqual(PLACEMENT_COLUMNS);
    expect(tableRows(listed.out).map((row) => row.slice(0, 6))).toEqual([
      ['1', 'zone=eu-west', 'require', 'never', 'keep in EU', `tester@${hostname()}`],
    ]);
    const all = tableRows((await run('placements', 'ls', '--include-expired', '--url', url)).out);
    expect(all.map((row) => [row[0], row[2], row[4]])).toEqual([
      ['1', 'require', 'keep in EU'],
      ['2', 'prefer', 'short'],
    ]);
    expect(all[1]?.[3]).toMatch(/^\d{4}-.*Z \(expired\)$/);
  });

  it("members shows each member's attributes", async () => {
    const result = await run('members', '--url', url);
    expect(result.code).toBe(0);
    expect(tableRows(result.out)).toEqual([
      [
        `${self} (this)`,
        'up',
        'yes',
        expect.any(String),
        '1.0.0',
        expect.any(String),
        // The protocol this node speaks at most: this release's.
        String(PROTOCOL_VERSION),
        'zone=eu-west',
        'no',
      ],
    ]);
  });

  it('rejects bad rule arguments with exit code 2 and a clear message, sending nothing', async () => {
    expect((await run('placements', 'set', '5', 'zone=eu-west', '--url', url)).code).toBe(0);
    const before = await getPlacements(node);
    const cases: Array<{ args: string[]; message: RegExp }> = [
      { args: ['5', 'zone='], message: /^error: selector term "zone=" has an empty value/ },
      { args: ['5', '=b'], message: /^error: selector term "=b" has an empty key/ },
      { args: ['5', 'zone=a b'], message: /must match \[A-Za-z0-9_\.-\]\{1,64\}/ },
      { args: ['5', 'zone=a', '--ttl', '10x'], message: /"10x" is not a duration/ },
      { args: ['5', 'zone=a', '--ttl', '-1'], message: /error/ },
      { args: ['5', 'zone=a', '--ttl', '0'], message: /must be longer than zero/ },
      {
        args: ['5', 'zone=a', '--ttl', '1m', '--expires-at', '2199-01-01T00:00:00Z'],
        message: /give --ttl or --expires-at, not both/,
      },
      { args: ['5', 'zone=a', '--require', '--prefer'], message: /give --require or --prefer, not both/ },
      { args: ['5', 'zone=a', '--expires-at', '2001-01-01T00:00:00Z'], message: /not in the future/ },
      { args: ['5', 'zone=a', '--expires-at', 'soon'], message: /expiresAt must be an ISO-8601 date-time/ },
      { args: ['5', 'zone=a', '--reason', 'r'.repeat(501)], message: /reason is 501 characters long, at most 500/ },
      { args: ['5', 'zone=a', '--by', ''], message: /by must not be empty/ },
    ];
    for (const { args, message } of cases) {
      const result = await run('placements', 'set', ...args, '--url', url);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.err[0], args.join(' ')).toMatch(message);
      expect(result.out).toEqual([]);
    }
    expect(await getPlacements(node)).toEqual(before);
  });

  it('node --attribute takes KEY=VALUE strictly (exit code 2 before anything starts)', async () => {
    for (const [value, message] of [
      ['zone', /"zone" is not KEY=VALUE/],
      ['zone=', /attribute value "" of zone must match/],
      ['zo ne=a', /attribute key "zo ne" must match/],
    ] as const) {
      const result = await run('node', '--attribute', value, '--port', '0', '--http-port', '0');
      expect(result.code, value).toBe(2);
      expect(result.err[0], value).toMatch(message);
    }
    const twice = await run(
      'node',
      '--attribute',
      'zone=a',
      '--attribute',
      'zone=b',
      '--port',
      '0',
      '--http-port',
      '0',
    );
    expect(twice.code).toBe(2);
    expect(twice.err[0]).toMatch(/attribute zone is given twice/);
  });
});
