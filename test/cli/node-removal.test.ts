// Multi-process: a `node` process paused (SIGSTOP) until the other members remove it learns of its removal
// when it resumes. It never acknowledges a write after that, and either exits 1 with one log line saying
// why, or with --restart-on-removal comes back in the same process as a new incarnation that rejoins.
// Which it learns first, 'down' or 'removed', depends on what gossip was queued for it while it was paused
// (the others tell a member directly when they down it), so either is accepted; node.ts treats both alike.
import { describe, expect, it } from 'vitest';
import { exitWithin, freePorts, http, useProcessSet, waitFor, type Proc } from '../e2e/harness.js';

const procs = useProcessSet();

interface Members {
  members: Array<{ address: string; status: string }>;
}

async function threeNodes(extraForThird: readonly string[]) {
  const ports = await freePorts(6);
  const addresses = [0, 1, 2].map((i) => `app@127.0.0.1:${ports[i]}`);
  const urls = [0, 1, 2].map((i) => `http://127.0.0.1:${ports[3 + i]}`);
  const nodes: Proc[] = [0, 1, 2].map((i) =>
    procs.spawnCli(`node-${i + 1}`, [
      'node',
      '--port',
      String(ports[i]),
      '--http-port',
      String(ports[3 + i]),
      ...addresses.flatMap((address) => ['--seed', address]),
      '--down-after-ms',
      '1000',
      ...(i === 2 ? extraForThird : []),
    ]),
  );
  for (const url of urls) {
    await waitFor(
      `${url} to see three members up`,
      async () => {
        const answer = await http<Members>('GET', `${url}/actor-ts/cluster/members`);
        return answer.status === 200 && answer.body.members.filter((m) => m.status === 'up').length === 3;
      },
      40_000,
    );
  }
  return { addresses, urls, nodes };
}

/** Pauses `node` until the first node's view no longer lists `address` (removed), then resumes it. */
async function pauseUntilRemoved(node: Proc, observerUrl: string, address: string): Promise<void> {
  node.signal('SIGSTOP');
  try {
    await waitFor(
      `${address} to be removed by the others`,
      async () => {
        const answer = await http<Members>('GET', `${observerUrl}/actor-ts/cluster/members`);
        return answer.status === 200 && !answer.body.members.some((m) => m.address === address);
      },
      60_000,
      200,
    );
  } finally {
    node.signal('SIGCONT');
  }
}

function whyLines(node: Proc): Array<{ msg: string; stoppedBecause: string }> {
  return node
    .log()
    .split('\n')
    .filter((line) => line.includes('"stoppedBecause"') && line.includes('stopping'))
    .map((line) => JSON.parse(line) as { msg: string; stoppedBecause: string });
}

describe('a node removed by the others while paused', () => {
  it('exits 1 with one line saying why, and never acknowledges a write after resuming', async () => {
    const { addresses, urls, nodes } = await threeNodes([]);
    const third = nodes[2]!;
    await pauseUntilRemoved(third, urls[0]!, addresses[2]!);

    // Until it is gone, a write to it is refused (503: it was frozen, reaches no majority, knows it is out, or its
    // server is closing as it exits) or finds no listener (status 0); it is never acknowledged.
    const statuses = new Set<number>();
    while (!third.hasExited) {
      const answer = await http(
        'POST',
        `${urls[2]}/actor-ts/cluster/shards/Counter/placements`,
        { shardId: 1, target: addresses[0] },
        2_000,
      );
      statuses.add(answer.status);
      if (answer.status === 503)
        expect(['not_a_member', 'no_majority', 'paused', 'shutting_down']).toContain(
          (answer.body as { error?: string }).error,
        );
    }
    expect([...statuses].filter((status) => status !== 503 && status !== 0)).toEqual([]);
    expect(await exitWithin(third, 30_000)).toEqual({ code: 1, signal: null });
    const why = whyLines(third);
    expect(why, third.logTail()).toHaveLength(1);
    expect(['downed', 'removed']).toContain(why[0]!.stoppedBecause);
    expect(why[0]!.msg).toMatch(/removed from the cluster by the other members|downed by the cluster/);
    console.log(`[process figures] paused node learned first that it was ${why[0]!.stoppedBecause}`);
  }, 180_000);

  it('with --restart-on-removal it rejoins as a new incarnation in the same process', async () => {
    const { addresses, urls, nodes } = await threeNodes(['--restart-on-removal']);
    const third = nodes[2]!;
    await pauseUntilRemoved(third, urls[0]!, addresses[2]!);
    await waitFor(
      "the restarted node to be up in everyone's view",
      async () => {
        for (const url of urls) {
          const answer = await http<Members>('GET', `${url}/actor-ts/cluster/members`);
          if (answer.status !== 200 || answer.body.members.filter((m) => m.status === 'up').length !== 3) return false;
        }
        return true;
      },
      60_000,
      200,
    );
    expect(third.hasExited).toBe(false);
    expect(third.log()).toContain('restarting as a new incarnation');
    expect(whyLines(third)).toHaveLength(1);
    // The new incarnation is a member again: it takes writes.
    const write = await http('POST', `${urls[2]}/actor-ts/cluster/shards/Counter/placements`, {
      shardId: 1,
      target: addresses[0],
    });
    expect(write.status).toBe(202);
  }, 180_000);
});
