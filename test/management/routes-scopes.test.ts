// Scoped tokens (issue 38) on a real in-process node: a tokens file of named tokens stored as SHA-256, each with its
// scopes. Health stays open; every other route needs a known token (401) whose scopes cover it (403 naming the
// scope); what a token writes names it; the auth token keeps every scope; a changed file is followed, and a bad
// change leaves the earlier tokens in force and says so in health. A bad file refuses the start.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActorTsError } from '../../src/errors.js';
import { HealthAnswer, PinsWritten, AuditAnswer } from '../../src/management/api-shapes.js';
import { TokensFileError, tokenDigest, type TokensFile } from '../../src/management/tokens-file.js';
import { startNode, type RunningNode } from '../../src/node/node.js';
import { checkedAnswer } from '../support/api-answers.js';
import { API, COUNTER, expectError, pollUntil, startTestNode, stopAll } from './node-fixture.js';

const dir = mkdtempSync(join(tmpdir(), 'tokens-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function tokensFile(
  name: string,
  entries: ReadonlyArray<readonly [string, string, TokensFile['tokens'][number]['scopes']]>,
) {
  const file = join(dir, name);
  const tokens = entries.map(([tokenName, token, scopes]) => ({ name: tokenName, sha256: tokenDigest(token), scopes }));
  writeFileSync(file, JSON.stringify({ tokens }));
  return file;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('a node with a tokens file', () => {
  let node: RunningNode;
  let file: string;
  beforeAll(async () => {
    file = tokensFile('tokens.json', [
      ['viewer', 'read-token', ['read']],
      ['ops-ann', 'operate-token', ['read', 'operate']],
      ['pusher', 'operate-only', ['operate']],
      ['root', 'admin-token', ['admin']],
    ]);
    node = await startTestNode({ tokensFile: file, authToken: 'legacy-token' });
  });
  afterAll(() => stopAll([node]));
  const get = (url: string, token?: string) =>
    node.http.inject({ method: 'GET', url, headers: token === undefined ? {} : bearer(token) });
  const pin = (shardId: number, token: string | undefined, extra: object = {}) =>
    node.http.inject({
      method: 'POST',
      url: `${COUNTER}/placements`,
      headers: token === undefined ? {} : bearer(token),
      payload: { shardId, target: node.address.toString(), ...extra },
    });

  it('keeps health open and asks every other route for a known token whose scopes cover it', async () => {
    expect((await get(`${API}/health`)).statusCode).toBe(200);
    expectError(await get(`${API}/cluster/members`), 401, 'unauthorized');
    expectError(await get(`${API}/cluster/members`, 'not-a-token'), 401, 'unauthorized');
    expectError(await get('/metrics'), 401, 'unauthorized');
    for (const token of ['read-token', 'operate-token', 'admin-token', 'legacy-token']) {
      expect((await get(`${API}/cluster/members`, token)).statusCode).toBe(200);
    }
    const writerOnly = expectError(await get(`${API}/cluster/members`, 'operate-only'), 403, 'forbidden');
    expect(writerOnly.message).toMatch(/"pusher".*needs read/);
  });

  it('refuses a pin to a read token (403 naming operate) and writes nothing', async () => {
    const refused = expectError(await pin(3, 'read-token'), 403, 'forbidden');
    expect(refused.message).toMatch(/"viewer" has scopes read; this route needs operate/);
    expectError(await pin(3, undefined), 401, 'unauthorized');
    const placements = await node.http.inject({
      method: 'GET',
      url: `${COUNTER}/placements`,
      headers: bearer('read-token'),
    });
    expect(placements.json<{ placements: unknown[] }>().placements).toEqual([]);
  });

  it('names the token as the author of what it writes when the request names nobody', async () => {
    const written = await pin(4, 'operate-token', { reason: 'canary' });
    expect(written.statusCode).toBe(202);
    expect(checkedAnswer(PinsWritten, written.json()).placements[0]?.by).toBe('ops-ann');
    const named = await pin(5, 'admin-token', { by: 'bob' });
    expect(checkedAnswer(PinsWritten, named.json()).placements[0]?.by).toBe('bob');
    const unpinned = await node.http.inject({
      method: 'DELETE',
      url: `${COUNTER}/placements/4`,
      headers: bearer('operate-token'),
    });
    expect(unpinned.statusCode).toBe(204);
    const audit = checkedAnswer(AuditAnswer, (await get(`${API}/audit`, 'read-token')).json());
    expect(audit.entries.map((entry) => [entry.action, entry.by])).toEqual([
      ['unpin', 'ops-ann'],
      ['pin', 'bob'],
      ['pin', 'ops-ann'],
    ]);
    // The auth token has every scope and no name: its writes name nobody unless the request does.
    const legacy = await pin(6, 'legacy-token');
    expect(checkedAnswer(PinsWritten, legacy.json()).placements[0]?.by).toBeNull();
  });

  it('counts the refusals by the scope the route needed', async () => {
    const metrics = (await get('/metrics', 'read-token')).body;
    expect(metrics).toMatch(/actor_ts_http_requests_refused_total\{scope="operate",reason="forbidden"\} [1-9]/);
    expect(metrics).toMatch(/actor_ts_http_requests_refused_total\{scope="read",reason="unauthorized"\} [1-9]/);
    expect(metrics).toMatch(/actor_ts_http_requests_refused_total\{scope="admin",reason="forbidden"\} 0/);
  });

  it('reads the file again at once on reloadFiles (what SIGHUP does in the CLI)', async () => {
    tokensFile('tokens.json', [
      ['viewer', 'read-token', ['read']],
      ['ops-ann', 'operate-token', ['read', 'operate']],
      ['pusher', 'operate-only', ['operate']],
      ['root', 'admin-token', ['admin']],
      ['hup', 'hup-token', ['read']],
    ]);
    node.reloadFiles();
    expect((await get(`${API}/cluster/members`, 'hup-token')).statusCode).toBe(200);
  });

  it('follows the file: a new token works without a restart; a bad change keeps the earlier tokens and degrades health', async () => {
    tokensFile('tokens.json', [
      ['viewer', 'read-token', ['read']],
      ['newcomer', 'new-token', ['read']],
    ]);
    await pollUntil(async () => (await get(`${API}/cluster/members`, 'new-token')).statusCode === 200, 'the new token');
    expectError(await get(`${API}/cluster/members`, 'operate-token'), 401, 'unauthorized');

    writeFileSync(file, '{ "tokens": [{ "name": "x", "sha256": "00", "scopes": ["read"] }] }');
    await pollUntil(
      async () => checkedAnswer(HealthAnswer, (await get(`${API}/health`)).json()).status === 'degraded',
      'health to say the change is not in force',
    );
    const health = checkedAnswer(HealthAnswer, (await get(`${API}/health`)).json());
    expect(health.reasons.join('\n')).toMatch(/not in force.*sha256/);
    expect((await get(`${API}/cluster/members`, 'new-token')).statusCode).toBe(200);

    tokensFile('tokens.json', [['viewer', 'read-token', ['read']]]);
    await pollUntil(
      async () => checkedAnswer(HealthAnswer, (await get(`${API}/health`)).json()).status === 'ok',
      'health ok once the file is good again',
    );
    expectError(await get(`${API}/cluster/members`, 'new-token'), 401, 'unauthorized');
  });
});

describe('a bad tokens file refuses the start', () => {
  const cases: ReadonlyArray<readonly [string, string, RegExp]> = [
    ['not-json.json', '{ tokens: [', /not valid JSON/],
    [
      'unknown-scope.json',
      JSON.stringify({ tokens: [{ name: 'a', sha256: 'a'.repeat(64), scopes: ['root'] }] }),
      /scopes/,
    ],
    ['short-hash.json', JSON.stringify({ tokens: [{ name: 'a', sha256: 'abc', scopes: ['read'] }] }), /sha256/],
    [
      'twice.json',
      JSON.stringify({
        tokens: [
          { name: 'a', sha256: 'a'.repeat(64), scopes: ['read'] },
          { name: 'a', sha256: 'b'.repeat(64), scopes: ['read'] },
        ],
      }),
      /"a" is given twice/,
    ],
  ];
  it.each(cases)('%s', async (name, text, problem) => {
    const file = join(dir, name);
    writeFileSync(file, text);
    const start = startNode({ port: 0, http: { port: 0 }, logLevel: 'silent', tokensFile: file });
    await expect(start).rejects.toBeInstanceOf(TokensFileError);
    await expect(start).rejects.toBeInstanceOf(ActorTsError);
    await expect(start).rejects.toThrow(new RegExp(`tokens file ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: `));
    await expect(start).rejects.toThrow(problem);
  });

  it('a missing file', async () => {
    const file = join(dir, 'absent.json');
    await expect(startNode({ port: 0, http: { port: 0 }, logLevel: 'silent', tokensFile: file })).rejects.toThrow(
      /absent\.json: cannot be read/,
    );
  });
});
