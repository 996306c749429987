// Route tests of placement rules (issue 11) against a real in-process node with attributes: selector
// targets, mode, expiry and provenance written and listed, expired pins listed on request, warnings when no
// member matches, and every bad input answered 400 with a code and nothing written.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningNode } from '../../src/node/node.js';
import {
  API,
  COUNTER,
  clearPlacements,
  expectError,
  getPlacements,
  pollUntil,
  startTestNode,
  stopAll,
} from './node-fixture.js';
import { PLACEMENT_FIELDS } from '../support/placement-json.js';
import type { PinsWritten, PlacementsAnswer } from '../../src/management/api-shapes.js';

describe('placement rules through the management API', () => {
  let node: RunningNode;
  let self: string;

  const setPlacements = (payload: unknown) =>
    node.http.inject({ method: 'POST', url: `${COUNTER}/placements`, payload: payload as Record<string, unknown> });
  async function rejected(payload: unknown, code: string): Promise<string> {
    const before = await getPlacements(node);
    const body = expectError(await setPlacements(payload), 400, code);
    expect(await getPlacements(node)).toEqual(before);
    return body.message;
  }

  beforeAll(async () => {
    node = await startTestNode({ attributes: { zone: 'eu-west', rack: 'r1' } });
    self = node.address.toString();
  });
  afterAll(() => stopAll([node]));
  beforeEach(async () => {
    await clearPlacements(node);
    expect((await setPlacements({ shardId: 500, target: self })).statusCode).toBe(202);
  });

  it('lists this node with its attributes', async () => {
    const response = await node.http.inject({ method: 'GET', url: `${API}/cluster/members` });
    expect(response.json<{ members: unknown[] }>().members).toEqual([
      expect.objectContaining({ address: self, attributes: { rack: 'r1', zone: 'eu-west' } }),
    ]);
  });

  it('writes a selector pin with its whole rule and lists every field', async () => {
    const before = Date.now();
    const response = await setPlacements({
      shardId: 42,
      target: 'zone=eu-west',
      mode: 'require',
      ttlMs: 600_000,
      reason: 'GDPR tenant 17',
      by: 'ops@host',
    });
    expect(response.statusCode, response.body).toBe(202);
    const body = response.json<PinsWritten>();
    expect(body.warnings).toEqual([]);
    const [written] = body.placements;
    expect(written).toMatchObject({
      shardId: 42,
      target: 'zone=eu-west',
      mode: 'require',
      reason: 'GDPR tenant 17',
      by: 'ops@host',
      writer: self,
    });
    const expiresAt = Date.parse(written?.expiresAt ?? '');
    expect(expiresAt).toBeGreaterThanOrEqual(before + 600_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 600_000);
    const listed = (await getPlacements(node)).placements.find((p) => p.shardId === 42);
    expect(listed).toEqual(written);
    expect(Object.keys(listed ?? {}).sort()).toEqual(PLACEMENT_FIELDS);
  });

  it('stores a selector in canonical form and takes an absolute expiresAt', async () => {
    const response = await setPlacements({
      shardId: 3,
      target: 'zone=eu-west,rack=r1',
      expiresAt: '2199-01-01T00:00:00+01:00',
    });
    expect(response.statusCode, response.body).toBe(202);
    expect(response.json<PinsWritten>().placements[0]).toMatchObject({
      target: 'rack=r1,zone=eu-west',
      mode: 'prefer',
      expiresAt: '2198-12-31T23:00:00.000Z',
      reason: null,
      by: null,
    });
  });

  it('writes the bulk form with a rule per entry', async () => {
    const response = await setPlacements({
      placements: [
        { shardId: 10, target: 'zone=eu-west', mode: 'prefer', reason: 'a' },
        { shardId: 11, target: self, mode: 'require', by: 'b@h' },
      ],
    });
    expect(response.statusCode, response.body).toBe(202);
    expect(response.json<PinsWritten>().placements.map((p) => [p.shardId, p.mode, p.reason, p.by])).toEqual([
      [10, 'prefer', 'a', null],
      [11, 'require', null, 'b@h'],
    ]);
  });

  it('warns when no current member matches a selector, saying what each mode does then', async () => {
    const prefer = (
      await setPlacements({ shardId: 20, target: 'zone=us-east', allowUnknownTarget: true })
    ).json<PinsWritten>();
    expect(prefer.warnings).toEqual([
      {
        shardId: 20,
        target: 'zone=us-east',
        message: expect.stringMatching(/^no current member matches zone=us-east; .*fallback/),
      },
    ]);
    const require = (
      await setPlacements({ shardId: 21, target: 'rack=r1,zone=us-east', mode: 'require', allowUnknownTarget: true })
    ).json<PinsWritten>();
    expect(require.warnings).toEqual([
      {
        shardId: 21,
        target: 'rack=r1,zone=us-east',
        message: expect.stringMatching(/no current member matches .*has no home/),
      },
    ]);
    // A selector every term of which holds here matches this node: no warning.
    expect((await setPlacements({ shardId: 22, target: 'rack=r1,zone=eu-west' })).json<PinsWritten>().warnings).toEqual(
      [],
    );
  });

  it('refuses (409 unknown_target, nothing written) a selector or an address no current member matches unless the write allows it', async () => {
    const before = await getPlacements(node);
    const typo = expectError(
      await setPlacements({ shardId: 23, target: 'zone=us-east', mode: 'require' }),
      409,
      'unknown_target',
    );
    expect(typo.message).toContain(
      'no current member matches target zone=us-east, so shard 23 would lose its home; nothing was written',
    );
    expect(typo.message).toContain('allowUnknownTarget: true (CLI --allow-unknown)');
    const bulk = {
      placements: [
        { shardId: 24, target: 'app@127.0.0.1:7720' },
        { shardId: 25, target: 'zone=eu-west' },
      ],
    };
    expectError(await setPlacements(bulk), 409, 'unknown_target');
    // A dry run is judged the same way.
    expectError(
      await node.http.inject({
        method: 'POST',
        url: `${COUNTER}/placements?dryRun=true`,
        payload: { shardId: 23, target: 'zone=us-east' },
      }),
      409,
      'unknown_target',
    );
    expect(await getPlacements(node)).toEqual(before);
    expect((await setPlacements({ ...bulk, allowUnknownTarget: true })).statusCode).toBe(202);
  });

  it('leaves an expired pin out of the listing, and lists it with expired: true on request', async () => {
    expect((await setPlacements({ shardId: 30, target: 'zone=eu-west', ttlMs: 50, reason: 'short' })).statusCode).toBe(
      202,
    );
    const listing = async (query = ''): Promise<PlacementsAnswer['placements']> => {
      const response = await node.http.inject({ method: 'GET', url: `${COUNTER}/placements${query}` });
      expect(response.statusCode).toBe(200);
      return response.json<PlacementsAnswer>().placements;
    };
    await pollUntil(async () => !(await listing()).some((p) => p.shardId === 30), 'the 50 ms pin to expire');
    const all = await listing('?includeExpired=true');
    expect(all.find((p) => p.shardId === 30)).toMatchObject({ target: 'zone=eu-west', reason: 'short', expired: true });
    expect(all.find((p) => p.shardId === 500)).toMatchObject({ expired: false });
    expect((await listing('?includeExpired=false')).some((p) => p.expired !== undefined)).toBe(false);
    expectError(
      await node.http.inject({ method: 'GET', url: `${COUNTER}/placements?includeExpired=yes` }),
      400,
      'invalid_request',
    );
  });

  describe('bad input: 400 with a code, nothing written', () => {
    it('rejects malformed selectors as invalid_target', async () => {
      for (const target of [
        'zone=',
        '=b',
        'zone=a,',
        ',zone=a',
        'zone=a,,rack=1',
        'zo ne=a',
        'zone=a/b',
        'zone=ä',
        `${'k'.repeat(65)}=a`,
        'zone=a,zone=b',
      ]) {
        expect(await rejected({ shardId: 1, target }, 'invalid_target'), target).toBeTruthy();
      }
      expect(
        await rejected(
          {
            placements: [
              { shardId: 1, target: 'zone=a' },
              { shardId: 2, target: 'zone=' },
            ],
          },
          'invalid_target',
        ),
      ).toContain('empty value');
      // The empty string fails the schema's length bound before it is judged as a target.
      await rejected({ shardId: 1, target: '' }, 'invalid_request');
    });

    it('rejects a mode other than prefer or require', async () => {
      expect(await rejected({ shardId: 1, target: 'zone=a', mode: 'force' }, 'invalid_placement')).toContain('mode');
      await rejected({ shardId: 1, target: 'zone=a', mode: 'Require' }, 'invalid_placement');
      await rejected(
        {
          placements: [
            { shardId: 1, target: 'zone=a' },
            { shardId: 2, target: 'zone=a', mode: '' },
          ],
        },
        'invalid_placement',
      );
    });

    it('rejects a ttlMs that is not a positive integer', async () => {
      for (const ttlMs of [-1, 0, 1.5, 1e300])
        expect(await rejected({ shardId: 1, target: 'zone=a', ttlMs }, 'invalid_placement')).toMatch(/ttlMs/);
      await rejected({ shardId: 1, target: 'zone=a', ttlMs: '10m' }, 'invalid_request');
    });

    it('rejects ttlMs with expiresAt, and an expiresAt in the past or unparsable', async () => {
      expect(
        await rejected(
          { shardId: 1, target: 'zone=a', ttlMs: 1000, expiresAt: '2199-01-01T00:00:00Z' },
          'invalid_placement',
        ),
      ).toContain('not both');
      expect(
        await rejected({ shardId: 1, target: 'zone=a', expiresAt: '2001-01-01T00:00:00Z' }, 'invalid_placement'),
      ).toContain('not in the future');
      for (const expiresAt of ['tomorrow', '2199-01-01', '2199-01-01T00:00:00', '2199-13-45T00:00:00Z', '']) {
        expect(await rejected({ shardId: 1, target: 'zone=a', expiresAt }, 'invalid_placement'), expiresAt).toContain(
          'expiresAt',
        );
      }
    });

    it('rejects a reason over 500 characters, and empty or control-character texts', async () => {
      expect(await rejected({ shardId: 1, target: 'zone=a', reason: 'x'.repeat(501) }, 'invalid_placement')).toContain(
        'at most 500',
      );
      await rejected({ shardId: 1, target: 'zone=a', reason: '' }, 'invalid_placement');
      await rejected({ shardId: 1, target: 'zone=a', by: 'a\nb' }, 'invalid_placement');
      await rejected({ shardId: 1, target: 'zone=a', by: 'b'.repeat(129) }, 'invalid_placement');
      expect(
        (await setPlacements({ shardId: 1, target: 'zone=a', reason: 'x'.repeat(500), allowUnknownTarget: true }))
          .statusCode,
      ).toBe(202);
    });
  });
});
