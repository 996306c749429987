// local-cluster's checks in one process: --attribute N:KEY=VALUE usage errors (before anything starts), the
// refusal to wipe or reuse a directory a live process holds, and the reason read from a failed node's log.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openLmdbPersistence } from '../../crdt/index.js';
import { LocalClusterError, reasonIn, refuseHeldDirectories } from '../../src/cli/local-cluster-checks.js';
import { run } from './cli-runner.js';

const root = mkdtempSync(join(tmpdir(), 'local-cluster-checks-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('local-cluster --attribute', () => {
  it('is a usage error (exit 2) without a node number, for a node that does not exist, or with a bad attribute', async () => {
    const bare = await run('local-cluster', '--attribute', 'zone=eu-west');
    expect(bare.code).toBe(2);
    expect(bare.err.join('\n')).toContain('is not N:KEY=VALUE');
    const missing = await run(
      'local-cluster',
      '--nodes',
      '3',
      '--attribute',
      '4:zone=eu-west',
      '--data-dir',
      join(root, 'unused'),
    );
    expect(missing.code).toBe(2);
    expect(missing.err.join('\n')).toContain('there is no node 4 (nodes are 1..3)');
    expect(missing.out).not.toContain('starting 3 nodes...');
    expect((await run('local-cluster', '--attribute', '1:=x')).code).toBe(2);
  });
});

describe('a data directory a running process holds', () => {
  it('is never wiped nor reused: the refusal names the directory and this process', async () => {
    const dataDir = join(root, 'held');
    const held = await openLmdbPersistence(join(dataDir, 'node-2'), { fileCheckIntervalMs: 0 });
    mkdirSync(join(dataDir, 'node-1'), { recursive: true });
    try {
      expect(() => refuseHeldDirectories(dataDir, 3, true)).toThrow(LocalClusterError);
      expect(() => refuseHeldDirectories(dataDir, 3, true)).toThrow(
        new RegExp(
          `--fresh would delete ${dataDir}, but the data directory ${join(dataDir, 'node-2')} is in use by process ${process.pid}`,
        ),
      );
      expect(() => refuseHeldDirectories(dataDir, 3, false)).toThrow(/cannot start: .*node-2 is in use/);
      // A one-node cluster does not use node-2; without --fresh it is not touched, so it does not matter.
      expect(() => refuseHeldDirectories(dataDir, 1, false)).not.toThrow();
    } finally {
      await held.close();
    }
    expect(() => refuseHeldDirectories(dataDir, 3, true)).not.toThrow();
  });

  it('a lock left by a process that is gone does not hold the directory', () => {
    const dir = join(root, 'stale', 'node-1');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'LOCK'), JSON.stringify({ pid: 4_194_305, host: 'x', started: '1' }));
    // Another host's lock cannot be checked from here: it holds.
    expect(() => refuseHeldDirectories(join(root, 'stale'), 1, true)).toThrow(/process 4194305 on x/);
    // pid 2^22 + 1 is above Linux's pid_max: on this host no process has it.
    writeFileSync(join(dir, 'LOCK'), JSON.stringify({ pid: 4_194_305, host: hostname(), started: '1' }));
    expect(() => refuseHeldDirectories(join(root, 'stale'), 1, true)).not.toThrow();
  });
});

describe('the reason a node failed to start', () => {
  it("is the CLI's error line, else the last error-level log record", () => {
    const pino = (level: number, msg: string): string => JSON.stringify({ level, msg });
    expect(reasonIn([pino(30, 'starting'), 'error: data directory /d is in use by process 7', ''].join('\n'))).toBe(
      'data directory /d is in use by process 7',
    );
    expect(reasonIn([pino(50, 'listen EADDRINUSE'), pino(30, 'closing')].join('\n'))).toBe('listen EADDRINUSE');
    expect(reasonIn(pino(30, 'all fine'))).toBeUndefined();
  });
});

describe('npm start and the README', () => {
  it("gives node 3 the attribute the README's selector example pins to, so the example works as written", async () => {
    const { readFileSync } = await import('node:fs');
    const root = join(import.meta.dirname, '..', '..');
    const start = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } })
      .scripts.start;
    const given = [...start.matchAll(/--attribute (\d+):(\S+)/g)].map((match) => match[2]);
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const example = /placements set \d+ (\S+=\S+) --require/.exec(readme)?.[1];
    expect(example).toBe('zone=eu-west');
    expect(given).toContain(example);
  });
});
