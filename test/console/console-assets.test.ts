// The console's static routes: GET / and /console/<file> with their content types and caching headers, 304 on
// a matching ETag, 404 for unknown assets and for every path-traversal form, and a clear error without assets.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActorTsError } from '../../src/errors.js';
import { consolePlugin, defaultConsoleAssetsDir } from '../../src/management/console/plugin.js';

let dir: string;
let app: FastifyInstance;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'console-assets-'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>console</title>');
  writeFileSync(join(dir, 'console.css'), 'body { margin: 0 }');
  writeFileSync(join(dir, 'main.js'), 'export {};');
  writeFileSync(join(dir, 'main.js.map'), '{}');
  writeFileSync(join(dir, '.hidden.js'), 'secret');
  mkdirSync(join(dir, 'sub'));
  writeFileSync(join(dir, 'sub', 'inner.js'), 'inner');
  // A file beside the assets directory that traversal would reach.
  writeFileSync(join(dir, '..', `${dir.split('/').pop() ?? 'x'}-outside.js`), 'OUTSIDE-CONTENT');
  app = Fastify();
  await app.register(consolePlugin, { assetsDir: dir });
  await app.ready();
});

afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(`${dir}-outside.js`, { force: true });
});

describe('console assets', () => {
  it('serves the page at / as HTML that revalidates, with a CSP', async () => {
    const response = await app.inject({ method: 'GET', url: '/' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['cache-control']).toBe('no-cache');
    expect(response.headers['etag']).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['content-security-policy']).toContain("script-src 'self'");
    expect(response.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(response.body).toContain('<title>console</title>');
  });

  it('serves CSS and scripts with their content types', async () => {
    const css = await app.inject({ method: 'GET', url: '/console/console.css' });
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.body).toBe('body { margin: 0 }');
    const js = await app.inject({ method: 'GET', url: '/console/main.js' });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toBe('no-cache');
  });

  it('answers 304 without a body when the ETag matches, 200 when it does not', async () => {
    const first = await app.inject({ method: 'GET', url: '/console/main.js' });
    const etag = String(first.headers['etag']);
    const again = await app.inject({ method: 'GET', url: '/console/main.js', headers: { 'if-none-match': etag } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    const stale = await app.inject({ method: 'GET', url: '/console/main.js', headers: { 'if-none-match': '"other"' } });
    expect(stale.statusCode).toBe(200);
    expect(stale.body).toBe('export {};');
  });

  it('gives 404 for unknown assets and for files it does not serve', async () => {
    for (const url of [
      '/console/nope.js',
      '/console/main.js.map',
      '/console/.hidden.js',
      '/console/sub',
      '/console/sub/inner.js',
      '/console/',
    ]) {
      const response = await app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(404);
    }
  });

  it('gives 404 for every path-traversal form', async () => {
    const outside = `${dir.split('/').pop() ?? 'x'}-outside.js`;
    for (const url of [
      '/..%2f..%2fpackage.json',
      '/console/..%2f..%2fpackage.json',
      '/console/..%2fplugin.ts',
      `/console/..%2f${outside}`,
      `/console/%2e%2e%2f${outside}`,
      `/console/..%5c${outside}`,
      '/console/../../package.json',
      '/console/%2fetc%2fpasswd',
    ]) {
      const response = await app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(404);
      expect(response.body, url).not.toContain('OUTSIDE-CONTENT');
      expect(response.body, url).not.toContain('"name"');
    }
  });

  it('refuses to start without an index.html, saying to build', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'console-empty-'));
    try {
      const bare = Fastify();
      await expect(bare.register(consolePlugin, { assetsDir: empty }).ready()).rejects.toThrow(
        /has no index\.html: run npm run build/,
      );
      await bare.close();
      const missing = Fastify();
      await expect(missing.register(consolePlugin, { assetsDir: join(empty, 'gone') }).ready()).rejects.toBeInstanceOf(
        ActorTsError,
      );
      await missing.close();
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('defaults to the static/ directory next to the plugin, which holds the page and its styles', async () => {
    const real = Fastify();
    await real.register(consolePlugin);
    const page = await real.inject({ method: 'GET', url: '/' });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('/console/main.js');
    expect(page.body).toContain('/console/console.css');
    expect((await real.inject({ method: 'GET', url: '/console/console.css' })).statusCode).toBe(200);
    expect(defaultConsoleAssetsDir()).toMatch(/management[\\/]console[\\/]static[\\/]?$/);
    await real.close();
  });
});
