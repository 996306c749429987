// Builds the console: compiles the page for the browser (src/management/console/tsconfig.json) and lays out the one
// flat directory the node serves, the static files beside the page's own modules. The page's program also holds
// the API's shapes it imports for their types (src/management/api-shapes.ts); their emitted JavaScript is not copied,
// so the browser never loads a server module. Plain JavaScript: it runs as part of the build.
//
// usage: node scripts/build-console.mjs [SERVED_DIR]   (default dist/src/management/console/static; the browser
// test builds into a directory of its own)
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const served = resolve(process.argv[2] ?? join(root, 'dist', 'src', 'management', 'console', 'static'));
const compiled = mkdtempSync(join(tmpdir(), 'console-page-'));
try {
  const tsc = spawnSync(
    process.execPath,
    [
      join(root, 'node_modules', 'typescript', 'bin', 'tsc'),
      '-p',
      join(root, 'src/management/console/tsconfig.json'),
      '--outDir',
      compiled,
    ],
    { stdio: 'inherit' },
  );
  if (tsc.status !== 0) process.exit(tsc.status ?? 1);
  const page = join(compiled, 'src', 'management', 'console', 'page');
  if (!existsSync(page)) {
    console.error(`build-console: ${page} was not produced; check rootDir in src/management/console/tsconfig.json`);
    process.exit(1);
  }
  cpSync(join(root, 'src', 'management', 'console', 'static'), served, { recursive: true });
  for (const name of readdirSync(page)) if (name.endsWith('.js')) cpSync(join(page, name), join(served, name));
} finally {
  rmSync(compiled, { recursive: true, force: true });
}
