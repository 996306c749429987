// Issue 25, multi-process: operator mistakes with `local-cluster`. A second start with --fresh used to
// delete the running cluster's data (its nodes then committed into deleted files); a second start on the
// same ports used to print its success banner after reaching the other cluster's APIs. Now both refuse,
// naming the process or the node's own reason, and per-node --attribute makes the README's selector work.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  exitWithin,
  http,
  localClusterArgs,
  LOCAL_CLUSTER_BANNER as BANNER,
  startLocalCluster,
  useProcessSet,
  waitFor,
  SHARDS_PATH,
} from './harness.js';

const procs = useProcessSet();

describe('local-cluster refuses what would lose pins or report a start that failed (issue 25)', () => {
  it('a second start (--fresh, same data, same ports) fails with the reason and leaves the running cluster and its data alone', async () => {
    const dataDir = join(procs.logDir, 'data');
    const started = await startLocalCluster(procs, 'first', { dataDir, extra: ['--attribute', '3:zone=eu-west'] });
    const { ports, basePort, baseHttpPort, cluster: first } = started;
    /** Another local-cluster on the first one's ports, logging under `name`. */
    const second = (name: string, options: { dataDir: string; extra?: string[] }) =>
      procs.spawnCli(name, localClusterArgs({ ports, logDir: join(procs.logDir, name), ...options }));
    const url = `http://127.0.0.1:${baseHttpPort}`;
    // Its hint pins as the README does: to the selector node 3 carries, not to an address.
    expect(started.output).toMatch(/placements set 42 zone=eu-west --url/);
    // Node 3 was given zone=eu-west and only node 3.
    const members = await waitFor(
      'node 3 to be seen with its attribute',
      async () => {
        const answer = await http<{
          members: Array<{ address: string; status: string; attributes: Record<string, string> }>;
        }>('GET', `${url}/actor-ts/cluster/members`);
        const up = answer.body.members?.filter((m) => m.status === 'up') ?? [];
        return up.length === 3 ? up : undefined;
      },
      30_000,
    );
    expect(members.map((m) => [m.address, m.attributes])).toEqual([
      [`app@127.0.0.1:${basePort}`, {}],
      [`app@127.0.0.1:${basePort + 1}`, {}],
      [`app@127.0.0.1:${basePort + 2}`, { zone: 'eu-west' }],
    ]);
    const pin = await http('POST', `${url}${SHARDS_PATH}/placements`, {
      shardId: 7,
      target: 'zone=eu-west',
      mode: 'require',
    });
    expect(pin.status).toBe(202);
    const file = join(dataDir, 'node-1', 'placement.mdb');
    const inode = statSync(file).ino;

    // --fresh while it runs: refused before anything is deleted, naming a node process.
    const fresh = second('fresh', { dataDir, extra: ['--fresh'] });
    expect((await exitWithin(fresh, 30_000)).code).toBe(1);
    expect(fresh.log()).toMatch(/error: --fresh would delete .* the data directory .*node-\d is in use by process \d+/);
    expect(fresh.log()).not.toContain(BANNER);
    expect(readdirSync(dataDir).sort()).toEqual(['entities', 'node-1', 'node-2', 'node-3']);
    expect(statSync(file).ino).toBe(inode);

    // The same command again, without --fresh: the directories are held, so nothing starts.
    const again = second('again', { dataDir });
    expect((await exitWithin(again, 30_000)).code).toBe(1);
    expect(again.log()).toMatch(/error: cannot start: the data directory .*node-1 is in use by process \d+/);

    // Its own data but the same ports: the other cluster's APIs answer, yet they are not its nodes; its
    // first node exits (port in use) and the command fails with that node's reason, no banner.
    const ports2 = second('same-ports', { dataDir: join(procs.logDir, 'data2') });
    expect((await exitWithin(ports2, 60_000)).code).toBe(1);
    expect(ports2.log()).toMatch(
      /error: node 1 \(app@127\.0\.0\.1:\d+\) exited while starting \(code 1\): .*(EADDRINUSE|in use)/,
    );
    expect(ports2.log()).not.toContain(BANNER);

    // The running cluster kept its pin and its files.
    const pins = await http<{ placements: Array<{ shardId: number }> }>('GET', `${url}${SHARDS_PATH}/placements`);
    expect(pins.body.placements.map((p) => p.shardId)).toEqual([7]);
    const health = await http<{ status: string }>('GET', `${url}/actor-ts/health`);
    expect(health.body.status).toBe('ok');
    expect(first.hasExited).toBe(false);
  }, 180_000);
});
