// Issue 5, multi-process: `local-cluster --nodes 3` run as a child process prints every node's API URL, every
// node answers health ok in one cluster, and SIGINT stops every node process it started (pids gone, ports free).
// SIGKILL of local-cluster stops its nodes too, and a node restarted alone rejoins the running cluster.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  childPids,
  exitWithin,
  http,
  pidGone,
  portIsFree,
  startLocalCluster,
  useProcessSet,
  waitFor,
} from './harness.js';

const procs = useProcessSet();

/** The command line a process was started with (Linux /proc), without the node executable. */
function argsOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    .split('\0')
    .filter((arg) => arg !== '')
    .slice(1);
}

describe('local-cluster (issue 5)', () => {
  it('starts three nodes, prints their API URLs, all healthy; SIGINT stops every node process', async () => {
    // It prints the URLs once every node answers; the last line says how to stop it.
    const { cluster, basePort, baseHttpPort, output } = await startLocalCluster(procs, 'local-cluster-nodes');
    const ports = [0, 1, 2].flatMap((i) => [basePort + i, baseHttpPort + i]);
    const urls = [...new Set([...output.matchAll(/http:\/\/127\.0\.0\.1:(\d+)(?=\s|$)/g)].map((m) => m[0]))];
    const expectedUrls = [0, 1, 2].map((i) => `http://127.0.0.1:${baseHttpPort + i}`);
    expect(urls.filter((url) => expectedUrls.includes(url)).sort()).toEqual(expectedUrls);
    for (let i = 0; i < 3; i++) expect(output).toContain(`app@127.0.0.1:${basePort + i}`);
    // One cluster, not three (startLocalCluster waited until every node sees all three up), and each healthy.
    for (const [i, url] of expectedUrls.entries()) {
      const health = await http<{ status: string; self: string }>('GET', `${url}/actor-ts/health`);
      expect(health.status).toBe(200);
      expect(health.body).toMatchObject({ status: 'ok', self: `app@127.0.0.1:${basePort + i}` });
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
    console.log(
      `[e2e figures] local-cluster --nodes 3: SIGINT -> every node stopped and local-cluster exited 0 in ${stoppedMs} ms`,
    );
  }, 120_000);

  it('SIGKILL of local-cluster stops its nodes and frees their ports; a node restarted alone rejoins the others', async () => {
    const { cluster, basePort, baseHttpPort, urls } = await startLocalCluster(procs, 'sigkill-nodes');
    const nodePids = childPids(cluster.pid);
    expect(nodePids).toHaveLength(3);
    const byPort = new Map(nodePids.map((pid) => [Number(argsOf(pid)[argsOf(pid).indexOf('--port') + 1]), pid]));
    const node1 = byPort.get(basePort)!;
    const node1Args = argsOf(node1);
    // Every node knows every node as a seed, not only node 1.
    for (const pid of nodePids) {
      const seeds = argsOf(pid).flatMap((arg, i, all) => (arg === '--seed' ? [all[i + 1]] : []));
      expect(seeds).toEqual([0, 1, 2].map((i) => `app@127.0.0.1:${basePort + i}`));
    }

    // Node 1 dies hard and comes back alone with the same command line: it joins nodes 2 and 3, which are
    // still running, instead of forming a cluster of one.
    process.kill(node1, 'SIGKILL');
    await waitFor('node 1 to be gone', () => pidGone(node1), 10_000);
    await waitFor(`port ${baseHttpPort} to be free`, () => portIsFree(baseHttpPort), 10_000);
    procs.spawnCli('node-1-again', node1Args.slice(1));
    const others = [`app@127.0.0.1:${basePort + 1}`, `app@127.0.0.1:${basePort + 2}`];
    await waitFor(
      'restarted node 1 to see nodes 2 and 3 up',
      async () => {
        const members = await http<{ members: Array<{ address: string; status: string }> }>(
          'GET',
          `${urls[0]}/actor-ts/cluster/members`,
        );
        if (members.status !== 200) return false;
        const up = members.body.members.filter((m) => m.status === 'up').map((m) => m.address);
        return others.every((address) => up.includes(address)) && up.includes(`app@127.0.0.1:${basePort}`);
      },
      40_000,
    );

    // Now local-cluster itself is killed: no signal handler runs in it, yet its nodes must go.
    process.kill(cluster.pid, 'SIGKILL');
    await exitWithin(cluster, 10_000);
    for (const pid of [byPort.get(basePort + 1)!, byPort.get(basePort + 2)!]) {
      await waitFor(`node process ${pid} to exit after its parent was killed`, () => pidGone(pid), 45_000);
    }
    for (const port of [basePort + 1, basePort + 2, baseHttpPort + 1, baseHttpPort + 2]) {
      await waitFor(`port ${port} to be free`, () => portIsFree(port), 10_000);
    }
  }, 180_000);
});
