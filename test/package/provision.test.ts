// scripts/provision-test-deps.mjs, which `npm test` runs first: on a machine without the tests' programs where it
// cannot install them (here: a PATH with a shell and nothing else, so no apt-get), it installs nothing, fails, and
// prints the one command that fixes it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

describe('provision-test-deps', () => {
  const bin = mkdtempSync(join(tmpdir(), 'provision-'));
  symlinkSync('/bin/sh', join(bin, 'sh'));
  afterAll(() => rmSync(bin, { recursive: true, force: true }));

  it('fails without apt-get and names the one command that installs every missing package', () => {
    const result = spawnSync(process.execPath, ['scripts/provision-test-deps.mjs'], {
      env: { PATH: bin },
      encoding: 'utf8',
    });
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/'chromium' is missing/);
    expect(result.stderr).toContain(
      'run as root: apt-get update && apt-get install -y chromium nftables iproute2 faketime prometheus tcpdump openssl',
    );
  });
});
