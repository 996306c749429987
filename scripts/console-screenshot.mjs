// Retakes docs/console.png from a real local cluster (not part of npm test): `node scripts/console-screenshot.mjs`
// after `npm run build`. It starts `local-cluster --nodes 3 --attribute 3:zone=eu-west` on a fresh temporary data
// directory, sends a few increments so that shards have homes, writes three pins through the CLI (one to an
// address that expires, one `prefer` and one `require` selector), opens node 1's console in Debian's Chromium
// through playwright-core and saves a 1440x900 screenshot of the whole page. The cluster is stopped with SIGINT
// (Ctrl-C) at the end, whatever happened. Ports: ACTOR_TS_BASE_PORT (7701) and ACTOR_TS_BASE_HTTP_PORT (8551);
// CHROMIUM_PATH overrides /usr/bin/chromium; OUT overrides docs/console.png. Plain JavaScript, like the other .mjs.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'bin', 'actor-ts-placement.js');
const basePort = Number(process.env['ACTOR_TS_BASE_PORT'] ?? 7701);
const baseHttpPort = Number(process.env['ACTOR_TS_BASE_HTTP_PORT'] ?? 8551);
const url = `http://127.0.0.1:${baseHttpPort}`;
const node = (i) => `app@127.0.0.1:${basePort + i - 1}`;
const out = process.env['OUT'] ?? join(root, 'docs', 'console.png');
const chromiumPath =
  process.env['CHROMIUM_PATH'] ?? ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path));

if (!existsSync(join(root, 'dist', '.built'))) throw new Error('no build: run `npm run build` first');
if (chromiumPath === undefined) throw new Error('no Chromium: apt-get install -y chromium, or set CHROMIUM_PATH');
// After the check above: the build is what it imports.
const { shardIdFor } = await import('../dist/src/index.js');

/** The first id `user-N` in `shard` of the demo Counter (1000 shards, the default shard-id function). */
const entityIn = (shard) => {
  for (let n = 0; ; n += 1) if (shardIdFor(`user-${n}`, 1000) === shard) return `user-${n}`;
};
/** A node other than the one hosting `shard` now, so that a pin there with --move hands it off. */
const elsewhere = async (shard) => {
  const { regions } = await (await fetch(`${url}/actor-ts/cluster/shards/Counter`)).json();
  const home = regions.find((region) => region.shards.includes(shard))?.address;
  return [node(1), node(2), node(3)].find((address) => address !== home);
};
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
const run = (...args) => execFileSync(process.execPath, [cli, ...args, '--url', url], { encoding: 'utf8' });

const dataDir = mkdtempSync(join(tmpdir(), 'console-screenshot-'));
const cluster = spawn(
  process.execPath,
  [
    cli,
    'local-cluster',
    '--nodes',
    '3',
    '--attribute',
    '3:zone=eu-west',
    '--data-dir',
    dataDir,
    '--base-port',
    String(basePort),
    '--base-http-port',
    String(baseHttpPort),
  ],
  { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
);
const exited = new Promise((done) => cluster.once('exit', done));

try {
  // local-cluster prints "Ctrl-C stops every node." once every node it started answers ok.
  await new Promise((ready, fail) => {
    let seen = '';
    const timer = setTimeout(() => fail(new Error(`local-cluster not ready after 60 s:\n${seen}`)), 60_000);
    cluster.stdout.on('data', (chunk) => {
      seen += String(chunk);
      process.stdout.write(chunk);
      if (seen.includes('Ctrl-C stops every node.')) {
        clearTimeout(timer);
        ready();
      }
    });
    cluster.once('exit', (code) => fail(new Error(`local-cluster exited with ${code}:\n${seen}`)));
  });
  // Entities on every node give the shard map colours; each increment allocates its shard.
  for (const id of ['bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'heidi', 'ivan', 'judy']) {
    for (let i = 1; i <= 3; i += 1) {
      await fetch(`http://127.0.0.1:${baseHttpPort + i - 1}/counters/${id}-${i}/increment`, { method: 'POST' });
    }
  }
  await fetch(`${url}/counters/alice/increment`, { method: 'POST' });

  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(`${url}/`);
    await sleep(3_000);
    // Written while the page watches, so that its "Recent hand-offs" lists the move.
    run(
      'placements',
      'set',
      '479',
      await elsewhere(479),
      '--ttl',
      '2h',
      '--move',
      '--reason',
      'canary of build 418',
      '--by',
      'alex',
    );
    run('placements', 'set', '42', 'zone=eu-west', '--prefer', '--reason', 'cache warm in eu-west', '--by', 'alex');
    run('placements', 'set', '17', 'zone=eu-west', '--require', '--reason', 'GDPR tenant 17', '--by', 'sam');
    // The pinned shards get homes with their first message: an entity id in each.
    for (const shard of [17, 42, 479]) {
      await fetch(`${url}/counters/${entityIn(shard)}/increment`, { method: 'POST' });
    }
    // Let the moves finish and the page poll (every 2 s) a few times.
    await sleep(6_000);
    await page.screenshot({ path: out, fullPage: true });
    console.log(`wrote ${out}`);
  } finally {
    await browser.close();
  }
} finally {
  cluster.kill('SIGINT');
  await Promise.race([exited, sleep(30_000)]);
  rmSync(dataDir, { recursive: true, force: true });
}
