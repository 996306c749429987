// scripts/build-if-stale.mjs, which `npm start` runs first (issue 39: a full build took about 20 s on every start):
// it builds only when a source, config or lock file is newer than the last complete build's stamp. Run here in a
// tree of its own whose `build` script only leaves a mark, so the test sees whether a build ran, not how long.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const script = resolve('scripts/build-if-stale.mjs');

describe('build-if-stale', () => {
  const tree = mkdtempSync(join(tmpdir(), 'stale-'));
  afterAll(() => rmSync(tree, { recursive: true, force: true }));
  const marker = join(tree, 'built');
  writeFileSync(
    join(tree, 'package.json'),
    JSON.stringify({
      name: 'stale-check',
      private: true,
      scripts: { build: "node -e \"require('fs').writeFileSync('built', '')\"" },
    }),
  );
  mkdirSync(join(tree, 'src'));
  mkdirSync(join(tree, 'dist'));
  const source = join(tree, 'src', 'a.ts');
  const stamp = join(tree, 'dist', '.built');
  const at = (path: string, seconds: number) => utimesSync(path, seconds, seconds);
  const start = () => spawnSync(process.execPath, [script], { cwd: tree, encoding: 'utf8' });

  it('skips the build when the stamp is newer than every input, and builds when a source is newer', () => {
    writeFileSync(source, 'export {};');
    writeFileSync(stamp, '');
    for (const path of [source, join(tree, 'package.json'), join(tree, 'src'), join(tree, 'dist')]) at(path, 1_000);
    at(stamp, 2_000);
    expect(start().status).toBe(0);
    expect(existsSync(marker)).toBe(false);

    at(source, 3_000);
    const rebuilt = start();
    expect(rebuilt.status, rebuilt.stderr).toBe(0);
    expect(existsSync(marker)).toBe(true);
  });

  it('builds when there is no stamp at all', () => {
    rmSync(marker, { force: true });
    rmSync(stamp, { force: true });
    expect(start().status).toBe(0);
    expect(existsSync(marker)).toBe(true);
  });
});
