// In-process: when the cluster removes a node (here through the membership's own leave, not node.stop()),
// the node shuts down the same way as when downed: `stopped` says 'removed' and its servers close; with
// restartOnRemoval, runNode starts a new incarnation that is up again. The status table
// of writeAccess decides which own member statuses may write.
import { describe, expect, it } from 'vitest';
import type { Cluster } from '../../src/cluster/membership/cluster.js';
import type { MemberStatus } from '../../src/cluster/member.js';
import type { ClusterSharding } from '../../src/sharding/cluster-sharding.js';
import { NodeManagementBackend } from '../../src/node/management-backend.js';
import { runNode } from '../../src/node/run.js';
import { silentLogger } from '../../src/logging.js';
import type { RunningNode } from '../../src/node/node.js';
import { API, startTestNode } from './node-fixture.js';
import { NodeAddress } from '../../src/cluster/address.js';

const FAST = {
  logLevel: 'silent',
  antiEntropyIntervalMs: 200,
  cluster: { gossipIntervalMs: 100, heartbeatIntervalMs: 200, retryJoinIntervalMs: 200, seedNodeTimeoutMs: 500 },
};

describe('self-removal', () => {
  it('a node removed from the cluster stops like a downed one and closes its servers', async () => {
    const node = await startTestNode();
    await node.cluster.leave();
    expect(await node.stopped).toBe('removed');
    await expect(fetch(`${node.httpUrl}${API}/health`)).rejects.toThrow();
    await node.stop(); // idempotent after the cluster put it out
  });

  it('with restartOnRemoval a removed node comes back as a new incarnation (fresh transport, cluster, sharding)', async () => {
    const started: RunningNode[] = [];
    const stop = new AbortController();
    let removedOnce = false;
    const run = runNode(
      { ...FAST, port: 0, http: { port: 0 }, restartOnRemoval: true },
      {
        signal: stop.signal,
        logger: silentLogger(),
        onStarted: (node) => {
          started.push(node);
          // The first incarnation is removed as soon as it is up; the second is left running.
          if (!removedOnce) {
            removedOnce = true;
            void node.cluster.whenUp().then(() => node.cluster.leave());
          }
        },
      },
    );
    // Port 0 here: the same-ports restart of a real process is covered by test/cli/node-removal.test.ts.
    const deadline = Date.now() + 20_000;
    while (started.length < 2) {
      if (Date.now() > deadline) throw new Error('no second incarnation started');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const [first, second] = started as [RunningNode, RunningNode];
    expect(await first.stopped).toBe('removed');
    expect(second.cluster).not.toBe(first.cluster);
    expect(second.transport.incarnation).not.toBe(first.transport.incarnation);
    await second.cluster.whenUp();
    const health = await fetch(`${second.httpUrl}${API}/health`);
    expect(await health.json()).toMatchObject({ status: 'ok' });
    stop.abort();
    expect(await run).toBe('left');
    expect(started).toHaveLength(2);
  });
});

describe('writeAccess: which own member statuses may write', () => {
  const self = NodeAddress.parse('app@127.0.0.1:1');
  const member = (port: number, reachable: boolean, status: MemberStatus = 'up') => ({
    address: NodeAddress.parse(`app@127.0.0.1:${port}`),
    status,
    reachable,
  });
  const backendFor = (status: MemberStatus | undefined, others: ReturnType<typeof member>[] = []) => {
    const cluster = {
      self,
      selfMember: () => (status === undefined ? undefined : { status }),
      members: () => [{ address: self, status: status ?? 'joining', reachable: true }, ...others],
    };
    return new NodeManagementBackend(cluster as unknown as Cluster, {} as ClusterSharding, {
      stats: () => {
        throw new Error('not read');
      },
    });
  };
  const table: Array<[MemberStatus | undefined, boolean]> = [
    [undefined, false],
    ['joining', true],
    ['weakly-up', true],
    ['up', true],
    ['leaving', false],
    ['exiting', false],
    ['down', false],
    ['removed', false],
  ];
  it.each(table)('%s -> writable %s', (status, writable) => {
    const access = backendFor(status).writeAccess();
    expect(access.writable).toBe(writable);
    if (!access.writable)
      expect(access).toMatchObject({
        code: 'not_a_member',
        reason: expect.stringContaining(status === undefined ? 'not joined' : status),
      });
  });

  it('an up member that reaches no majority of the live members may not write (no_majority); gone members do not count', () => {
    expect(backendFor('up', [member(2, true), member(3, false)]).writeAccess().writable).toBe(true);
    expect(backendFor('up', [member(2, false), member(3, false)]).writeAccess()).toMatchObject({
      writable: false,
      code: 'no_majority',
      reason: expect.stringContaining('reaches 1 of 3 members'),
    });
    expect(backendFor('up', [member(2, false, 'down'), member(3, false, 'removed')]).writeAccess().writable).toBe(true);
  });

  it('a tied half writes exactly when the downing decision keeps it: the half holding the lowest address', () => {
    // self is app@127.0.0.1:1, the lowest: its half of a 1|1 and of a 2|2 split stays, as in decideSplitBrain.
    expect(backendFor('up', [member(2, false)]).writeAccess().writable).toBe(true);
    expect(backendFor('up', [member(2, true), member(3, false), member(4, false)]).writeAccess().writable).toBe(true);
    // the half without the lowest address downs itself: it may not write.
    const lower = (reachable: boolean, status: MemberStatus = 'up') => ({
      ...member(9, reachable, status),
      address: NodeAddress.parse('app@127.0.0.0:9'),
    });
    expect(backendFor('up', [lower(false)]).writeAccess()).toMatchObject({ writable: false, code: 'no_majority' });
    expect(backendFor('up', [lower(false), member(2, false), member(3, true)]).writeAccess()).toMatchObject({
      writable: false,
      code: 'no_majority',
    });
    // joining and exiting members do not count towards a majority, as in the downing decision.
    expect(backendFor('up', [lower(false, 'joining'), member(2, false, 'exiting')]).writeAccess().writable).toBe(true);
  });
});
