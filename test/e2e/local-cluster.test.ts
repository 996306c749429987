// Issue 5, multi-process: `local-cluster --nodes 3` run as a child process prints every node's API URL, every
// node answers health ok in one cluster, and SIGINT stops every node process it started (pids gone, ports free).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  childPids,
  exitWithin,
  freeConsecutivePorts,
  http,
  pidGone,
  portIsFree,
  useProcessSet,
  waitFor,
} from './harness.js';

const procs = useProcessSet();

describe('local-cluster (issue 5)', () => {
  it('starts three nodes, prints their API URLs, all healthy; SIGINT stops every node process', async () => {
    const basePort = await freeConsecutivePorts(3);
    const used = new Set([basePort, basePort + 1, basePort + 2]);
    const baseHttpPort = await freeConsecutivePorts(3, used);
    const ports = [0, 1, 2].flatMap((i) => [basePort + i, baseHttpPort + i]);
    const cluster = procs.spawnCli(
      'local-cluster',
      [
        'local-cluster',
        '--nodes', '3',
        '--base-port', String(basePort),
        '--base-http-port', String(baseHttpPort),
        '--log-dir', join(procs.logDir, 'local-cluster-nodes'),
      ],
      { detached: true },
    );

    // It prints the URLs once every node answers; the last line says how to stop it.
    const output = await waitFor(
      'local-cluster to print its node table',
      () => {
        if (cluster.hasExited) throw new Error(`local-cluster exited early:\n${cluster.log()}`);
        const text = cluster.log();
        return text.includes('Ctrl-C stops every node.') ? text : undefined;
      },
      60_000,
      100,
    );
    const urls = [...new Set([...output.matchAll(/http:\/\/127\.0\.0\.1:(\d+)(?=\s|$)/g)].map((m) => m[0]))];
    const expectedUrls = [0, 1, 2].map((i) => `http://127.0.0.1:${baseHttpPort + i}`);
    expect(urls.filter((url) => expectedUrls.includes(url)).sort()).toEqual(expectedUrls);
    for (let i = 0; i < 3; i++) expect(output).toContain(`app@127.0.0.1:${basePort + i}`);

    for (const [i, url] of expectedUrls.entries()) {
      const health = await http<{ status: string; self: string }>('GET', `${url}/actor-ts/health`);
      expect(health.status).toBe(200);
      expect(health.body).toMatchObject({ status: 'ok', self: `app@127.0.0.1:${basePort + i}` });
    }
    // One cluster, not three: every node sees all three members up.
    for (const url of expectedUrls) {
      await waitFor(`${url} to see three members up`, async () => {
        const members = await http<{ members: Array<{ status: string }> }>('GET', `${url}/actor-ts/cluster/members`);
        return members.status === 200 && members.body.members.filter((m) => m.status === 'up').length === 3;
      }, 20_000);
    }

    const nodePids = childPids(cluster.pid);
    expect(nodePids).toHaveLength(3);

    const sigintAt = Date.now();
    cluster.signal('SIGINT');
    const exit = await exitWithin(cluster, 45_000);
    const stoppedMs = Date.now() - sigintAt;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(cluster.log()).toContain('all nodes stopped');
    // local-cluster waits for its children before it exits, so they are gone by now, not merely going.
    for (const pid of nodePids) expect(pidGone(pid), `node process ${pid} still running`).toBe(true);
    for (const port of ports) {
      await waitFor(`port ${port} to be free`, () => portIsFree(port), 5_000);
    }
    console.log(`[e2e figures] local-cluster --nodes 3: SIGINT -> every node stopped and local-cluster exited 0 in ${stoppedMs} ms`);
  }, 120_000);
});
