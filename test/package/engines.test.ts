// `npm ci` warns about nothing on a supported Node: every locked package's engine range admits the Node running
// the tests (EBADENGINE before: cookie@2, pulled in by light-my-request 6.8, wanted Node 22; light-my-request ~6.6 is
// now a direct dependency, which a consumer's npm also resolves fastify's to, since overrides never reach
// consumers), and every runtime dependency admits the lowest Node package.json's engines promise users. Likewise
// every locked package with an install script is reviewed in package.json's `allowScripts` (npm 11.16 warns about
// the others on every install; npm 12 skips their scripts).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { engines?: { node?: string }; dev?: boolean; hasInstallScript?: boolean }>;
};
const own = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
  allowScripts?: Record<string, boolean>;
};

describe('the locked dependencies and the supported Node versions', () => {
  const lowest = semver.minVersion(own.engines.node)?.version ?? '';

  it.each([
    ['runtime dependencies admit the lowest supported', lowest, false],
    ['all dependencies admit the running', process.versions.node, true],
  ])('%s Node (%s)', (_which, version, withDev) => {
    expect(semver.valid(version)).not.toBeNull();
    const refusing = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && (withDev || entry.dev !== true))
      .filter(
        ([, entry]) =>
          typeof entry.engines?.node === 'string' &&
          !semver.satisfies(version, entry.engines.node, { includePrerelease: true }),
      )
      .map(([path, entry]) => `${path} wants node ${entry.engines?.node}`);
    expect(refusing).toEqual([]);
  });

  it('every package with an install script is reviewed in allowScripts', () => {
    const withScripts = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && entry.hasInstallScript === true)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(withScripts.length).toBeGreaterThan(0);
    const reviewed = Object.keys(own.allowScripts ?? {}).map((key) => key.replace(/(?<=.)@[^@/]*$/, ''));
    expect(withScripts.filter((name) => !reviewed.includes(name))).toEqual([]);
  });
});
