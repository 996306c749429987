// Issue 26, no false downing with the faster failover: a node that is only slow (its process stopped for 2 s,
// its event loop blocked by CPU work for 3 s, or starved of CPU for 10 s next to a busy process on the same
// core) is never downed, neither by the others nor by itself. Its address keeps accepting connections the
// whole time, so nothing confirms a death, and stable-after (10 s) is longer than each silence. Three CLI
// processes with the default settings; every member view is sampled throughout and after the disturbance,
// until one full stable-after has passed since it ended (an observation window, not a synchronisation).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useProcessSet, waitFor, type NodeProc } from './harness.js';

const procs = useProcessSet();
const BLOCK_HOOK = fileURLToPath(new URL('./hooks/block-on-sigusr2.mjs', import.meta.url));
const STABLE_AFTER_MS = 10_000;

interface View {
  readonly members: ReadonlyArray<{ readonly address: string; readonly status: string; readonly reachable: boolean }>;
}

/** Samples every node's view of `victim` every 100 ms until `stop()`; returns every status seen. */
function watch(
  nodes: readonly NodeProc[],
  victim: NodeProc,
): { statuses: Set<string>; unreachableSeen: () => boolean; stop: () => Promise<void> } {
  const statuses = new Set<string>();
  let unreachable = false;
  let running = true;
  const loop = (async () => {
    while (running) {
      await Promise.all(
        nodes.map(async (node) => {
          const view = await node.get<View>('/actor-ts/cluster/members', 1_000).catch(() => undefined);
          const entry = view?.status === 200 ? view.body.members.find((m) => m.address === victim.address) : undefined;
          if (view?.status === 200) statuses.add(entry?.status ?? 'gone');
          if (entry !== undefined && !entry.reachable) unreachable = true;
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return {
    statuses,
    unreachableSeen: () => unreachable,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

async function allSeeUp(nodes: readonly NodeProc[], victim: NodeProc): Promise<void> {
  await waitFor(
    'every node sees the victim up and reachable',
    async () => {
      const views = await Promise.all(
        nodes.map((node) => node.get<View>('/actor-ts/cluster/members', 1_000).catch(() => undefined)),
      );
      return views.every(
        (view) =>
          view?.status === 200 &&
          view.body.members.some((m) => m.address === victim.address && m.status === 'up' && m.reachable),
      );
    },
    30_000,
  );
}

/** Runs `disturb` on the third node, then watches for one stable-after past its end; nobody may be downed. */
async function expectNotDowned(nodes: NodeProc[], disturb: (victim: NodeProc) => Promise<void>): Promise<void> {
  const victim = nodes[2]!;
  const watcher = watch(nodes, victim);
  await disturb(victim);
  await allSeeUp(nodes, victim);
  // A downing decided late would still show within one stable-after of the last change.
  await new Promise((resolve) => setTimeout(resolve, STABLE_AFTER_MS + 2_000));
  await watcher.stop();
  expect([...watcher.statuses]).toEqual(['up']);
  expect(victim.hasExited).toBe(false);
  expect(victim.logTail(400)).not.toMatch(/downing itself/);
}

describe('no false downing of a slow node', () => {
  it('a node whose process is stopped (SIGSTOP) for 2 s', async () => {
    const nodes = await procs.startCluster(3);
    await expectNotDowned(nodes, async (victim) => {
      victim.signal('SIGSTOP');
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      victim.signal('SIGCONT');
    });
  });

  it('a node whose event loop is blocked by CPU work for 3 s', async () => {
    const nodes = await procs.startCluster(3, { nodeArgs: ['--import', BLOCK_HOOK] });
    await expectNotDowned(nodes, async (victim) => {
      victim.signal('SIGUSR2');
      // The hook blocks for 3 s: the victim answers nothing until then.
      await waitFor(
        'victim answers again',
        async () => (await victim.get('/actor-ts/cluster/members', 500).catch(() => undefined))?.status === 200,
        20_000,
      );
    });
  });

  it('a node starved of CPU (taskset + nice) next to a busy process for 10 s', async () => {
    const nodes = await procs.startCluster(3);
    await expectNotDowned(nodes, async (victim) => {
      const busy = spawn(
        'taskset',
        ['-c', '0', process.execPath, '-e', 'const end = Date.now() + 10000; while (Date.now() < end) {}'],
        { stdio: 'ignore' },
      );
      const pin = spawn('taskset', ['-a', '-p', '-c', '0', String(victim.pid)], { stdio: 'ignore' });
      await new Promise((resolve) => pin.once('exit', resolve));
      const renice = spawn('renice', ['-n', '19', '-p', String(victim.pid)], { stdio: 'ignore' });
      await new Promise((resolve) => renice.once('exit', resolve));
      await new Promise((resolve) => busy.once('exit', resolve));
    });
  });
});
