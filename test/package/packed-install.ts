// Packs this package (`npm pack`) and installs the tarball into a fresh project in a temporary directory, the
// way a user would, without the network: the project starts with a lockfile holding exactly our runtime
// dependencies as our own lockfile resolved them, so `npm install --offline` takes every tarball from the npm
// cache that installing this repository filled. Needs dist/ (npm test builds it first).
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');

export interface PackedInstall {
  /** The consumer project. */
  readonly dir: string;
  /** Where the package landed: `<dir>/node_modules/@actor-ts/placement`. */
  readonly packageDir: string;
  /** Paths inside the tarball, as `npm pack` listed them. */
  readonly files: readonly string[];
  /** How the install went: 'offline', or 'prefer-offline' when the cache lacked a tarball. */
  readonly mode: 'offline' | 'prefer-offline';
}

interface LockEntry {
  readonly dev?: boolean;
  readonly [key: string]: unknown;
}

/**
 * Development packages the README's snippets import besides the package (its first example validates messages
 * with zod, as an application would): installed into the consumer too, at the version our lockfile holds.
 */
const SNIPPET_PACKAGES = ['zod'];

/** Our lockfile's runtime part (every installed package that is not a dev dependency only), and the snippets'. */
function runtimeLock(): Record<string, LockEntry> {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const out: Record<string, LockEntry> = {};
  for (const [path, entry] of Object.entries(lock.packages)) {
    const forSnippets = SNIPPET_PACKAGES.some((name) => path === `node_modules/${name}`);
    if (path.startsWith('node_modules/') && (entry.dev !== true || forSnippets)) out[path] = entry;
  }
  return out;
}

export async function installPackedPackage(): Promise<PackedInstall> {
  for (const built of ['dist/src/index.js', 'dist/src/index.d.ts', 'dist/crdt/index.d.ts']) {
    if (!existsSync(join(ROOT, built))) throw new Error(`${built} is missing: run \`npm run build\` first`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'actor-ts-placement-consumer-'));
  // --ignore-scripts: `prepare` would rebuild dist/, which npm test has just built.
  const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], {
    cwd: ROOT,
    maxBuffer: 16 << 20,
  });
  const [packed] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  if (packed === undefined) throw new Error('npm pack printed no package');
  const tarball = join(dir, packed.filename);
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }, null, 2),
  );
  const lock = runtimeLock();
  writeFileSync(
    join(dir, 'package-lock.json'),
    JSON.stringify(
      {
        name: 'consumer',
        version: '1.0.0',
        lockfileVersion: 3,
        requires: true,
        packages: { '': { name: 'consumer', version: '1.0.0' }, ...lock },
      },
      null,
      2,
    ),
  );
  const snippets = SNIPPET_PACKAGES.map((name) => `${name}@${String(lock[`node_modules/${name}`]?.['version'])}`);
  const install = (mode: string) =>
    run('npm', ['install', mode, '--no-audit', '--no-fund', '--loglevel=error', tarball, ...snippets], {
      cwd: dir,
      maxBuffer: 16 << 20,
    });
  let mode: PackedInstall['mode'] = 'offline';
  try {
    await install('--offline');
  } catch (error) {
    // ENOTCACHED: this machine's npm cache lacks a tarball; the registry (and only it) may fill the gap.
    if (!String((error as { stderr?: unknown }).stderr).includes('ENOTCACHED')) throw error;
    mode = 'prefer-offline';
    await install('--prefer-offline');
  }
  return {
    dir,
    packageDir: join(dir, 'node_modules', '@actor-ts', 'placement'),
    files: packed.files.map((f) => f.path),
    mode,
  };
}
