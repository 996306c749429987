// HTTPS on the management port (issue 38) with real certificates made by openssl: a node given a certificate and key
// speaks HTTPS only (a plain HTTP request gets no answer), the CLI reaches it with --ca, a client that does not
// trust the authority is refused, a certificate replaced on disk is used for new connections without a restart
// (a half-done replacement is kept out and said in health), and bad files refuse the start naming the file.
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, ManagementClient } from '../../src/cli/client.js';
import { startNode, type RunningNode } from '../../src/node/node.js';
import { TlsFileError, loadTlsMaterial } from '../../src/tls/tls-files.js';
import { run } from '../cli/cli-runner.js';
import {
  makeAuthority,
  makeCertificate,
  type TestAuthority,
  type TestCertificate,
} from '../support/tls-certificates.js';
import { pollUntil, stopAll } from './node-fixture.js';

let authority: TestAuthority;
let other: TestAuthority;
let served: TestCertificate;
beforeAll(() => {
  authority = makeAuthority('ca-one');
  other = makeAuthority('ca-two');
  const original = makeCertificate(authority, 'api');
  // The node reads these two paths; the test replaces their contents later.
  served = { cert: join(authority.dir, 'served.pem'), key: join(authority.dir, 'served.key') };
  copyFileSync(original.cert, served.cert);
  copyFileSync(original.key, served.key);
});

const quiet = { port: 0, http: { port: 0 }, logLevel: 'silent' } as const;

describe('TLS files are checked before use', () => {
  it('refuses a certificate that does not parse, a key of another certificate, a CA file without one, a missing file', () => {
    const leaf = makeCertificate(authority, 'checked');
    const stranger = makeCertificate(other, 'stranger');
    const garbage = join(authority.dir, 'garbage.pem');
    writeFileSync(garbage, 'not a certificate');
    const refusal = (files: Parameters<typeof loadTlsMaterial>[0], nowMs?: number) => {
      try {
        loadTlsMaterial(files, nowMs);
      } catch (error) {
        expect(error).toBeInstanceOf(TlsFileError);
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refusal({ cert: garbage, key: leaf.key })).toMatch(/garbage\.pem: does not parse as a PEM certificate/);
    expect(refusal({ cert: leaf.cert, key: stranger.key })).toMatch(
      /stranger\.key: the key does not belong to the certificate/,
    );
    expect(refusal({ cert: leaf.cert, key: leaf.key, ca: leaf.key })).toMatch(/checked\.key: holds no PEM certificate/);
    expect(refusal({ cert: join(authority.dir, 'absent.pem'), key: leaf.key })).toMatch(/absent\.pem: cannot be read/);
    const inAYear = Date.now() + 365 * 86_400_000;
    expect(refusal({ cert: leaf.cert, key: leaf.key }, inAYear)).toMatch(/checked\.pem: the certificate expired on/);
    expect(refusal({ cert: leaf.cert, key: leaf.key }, Date.now() - 86_400_000)).toMatch(/is not valid before/);
    expect(loadTlsMaterial({ cert: leaf.cert, key: leaf.key, ca: authority.cert }).subject).toContain('CN=checked');
  });

  it('a node refuses to start with a bad file, or with a certificate and no key', async () => {
    const stranger = makeCertificate(other, 'stranger-start');
    await expect(startNode({ ...quiet, httpTlsCert: served.cert, httpTlsKey: stranger.key })).rejects.toThrow(
      /stranger-start\.key: the key does not belong/,
    );
    await expect(startNode({ ...quiet, httpTlsCert: served.cert })).rejects.toThrow(/go together/);
    // The cluster port's mutual TLS likewise: all three files or none, each checked before any port is bound.
    await expect(startNode({ ...quiet, tlsCert: served.cert, tlsKey: served.key })).rejects.toThrow(
      /tlsCa .* go together/,
    );
    await expect(
      startNode({ ...quiet, tlsCert: served.cert, tlsKey: stranger.key, tlsCa: authority.cert }),
    ).rejects.toThrow(/stranger-start\.key: the key does not belong/);
  });
});

describe('a node serving its management API over HTTPS', () => {
  let node: RunningNode;
  beforeAll(async () => {
    node = await startNode({ ...quiet, httpTlsCert: served.cert, httpTlsKey: served.key });
  });
  afterAll(() => stopAll([node]));
  const trusting = (ca: TestAuthority) =>
    new ManagementClient(node.httpUrl, { ca: readFileSync(ca.cert, 'utf8'), timeoutMs: 2_000 });

  it('answers over HTTPS a client that trusts its authority, and nobody over plain HTTP', async () => {
    expect(node.httpUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect((await trusting(authority).health()).status).toBe('ok');
    const plain = node.httpUrl.replace('https://', 'http://');
    await expect(new ManagementClient(plain, { timeoutMs: 2_000 }).health()).rejects.toBeInstanceOf(ApiError);
    await expect(trusting(other).health()).rejects.toThrow(/cannot reach .*certificate/);
  });

  it('the CLI reaches it with --ca, and says so without', async () => {
    const withCa = await run('members', '--url', node.httpUrl, '--ca', authority.cert);
    expect(withCa.code, withCa.err.join('\n')).toBe(0);
    expect(withCa.out.join('\n')).toContain(node.address.toString());
    const missing = await run('members', '--url', node.httpUrl, '--ca', join(authority.dir, 'nope.pem'));
    expect(missing.code).toBe(2);
    expect(missing.err.join('\n')).toMatch(/--ca .*nope\.pem cannot be read/);
  });

  it('takes a certificate replaced on disk for new connections, keeping a half-done replacement out', async () => {
    const next = makeCertificate(other, 'api-next');
    // The certificate first: it does not match the old key, so nothing changes yet and health says why.
    copyFileSync(next.cert, served.cert);
    await pollUntil(async () => (await trusting(authority).health()).status === 'degraded', 'health to say so');
    expect((await trusting(authority).health()).reasons.join('\n')).toMatch(
      /management HTTPS: .*not in force.*does not belong/,
    );
    copyFileSync(next.key, served.key);
    await pollUntil(
      async () =>
        (
          await trusting(other)
            .health()
            .catch(() => undefined)
        )?.status === 'ok',
      'the new certificate on new connections',
    );
    await expect(trusting(authority).health()).rejects.toThrow(/cannot reach .*certificate/);
  });
});
