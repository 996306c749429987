// This package's release (its package.json version), which a node announces in the transport handshake and the
// members view shows: read once from the package.json above this module, wherever it runs from (src/ under
// tests, dist/src/ once built, node_modules/@actor-ts/placement/dist/src/ in an application).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_NAME = '@actor-ts/placement';
let cached: string | undefined;

/** This package's version, e.g. `0.2.0`; `unknown` when no package.json of this package is found above it. */
export function packageRelease(): string {
  cached ??= findRelease(dirname(fileURLToPath(import.meta.url)));
  return cached;
}

function findRelease(start: string): string {
  let dir = start;
  for (let level = 0; level < 5; level++) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: unknown;
        version?: unknown;
      };
      if (manifest.name === PACKAGE_NAME && typeof manifest.version === 'string') return manifest.version;
    } catch {
      // No readable package.json here: look one level up.
    }
    dir = dirname(dir);
  }
  return 'unknown';
}
