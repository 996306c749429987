// Durable placements across a full-cluster restart, with real CLI nodes (`node --data-dir`): pins written
// through different nodes (REST and the CLI) and one removed, then every node SIGKILLed at the same instant
// right after the last acknowledgement. Restarted on the same directories and ports, every node lists exactly
// the acknowledged pins and the pinned shards' entities answer from their targets. Then a full restart where
// only one node keeps its directory: the other two get everything back from it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { shardIdFor } from '../../src/sharding/core/shard-id.js';
import {
  NodeProc,
  SHARDS_PATH,
  exitWithin,
  freeLocalClusterPorts,
  freePorts,
  http,
  localClusterArgs,
  useProcessSet,
  waitFor,
  waitForBanner,
  waitForCluster,
  type PlacementRow,
} from './harness.js';

const procs = useProcessSet();
const root = mkdtempSync(join(tmpdir(), 'actor-ts-durability-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Slot {
  readonly port: number;
  readonly httpPort: number;
  readonly dir: string;
}

function start(name: string, slot: Slot, seeds: readonly string[]): NodeProc {
  const { port, httpPort, dir } = slot;
  return procs.startNode({ name, port, httpPort, seed: seeds, dataDir: dir, rebalanceIntervalMs: 600_000 });
}

/** shard -> target, as a node lists its pins. */
async function pinsOf(node: NodeProc): Promise<Map<number, string>> {
  const rows = (
    await http<{ placements: PlacementRow[] }>('GET', `${node.url}${SHARDS_PATH}/placements`, undefined, 3000)
  ).body.placements;
  return new Map(rows.map((row) => [row.shardId, row.target]));
}

const same = (a: ReadonlyMap<number, string>, b: ReadonlyMap<number, string>): boolean =>
  JSON.stringify([...a].sort((x, y) => x[0] - y[0])) === JSON.stringify([...b].sort((x, y) => x[0] - y[0]));

/** Every node lists exactly `expected`, and each pinned entity answers from its target. */
async function expectRestored(
  nodes: readonly NodeProc[],
  expected: ReadonlyMap<number, string>,
  entityOf: ReadonlyMap<number, string>,
): Promise<void> {
  await waitFor(
    'every node to list exactly the acknowledged pins',
    async () => {
      for (const node of nodes) if (!same(await pinsOf(node), expected)) return false;
      return true;
    },
    30_000,
  );
  for (const [shard, target] of expected) {
    const entity = entityOf.get(shard) as string;
    await waitFor(
      `${entity} (shard ${shard}) to answer from ${target}`,
      async () => {
        const answer = await nodes[0]!.counter(entity, 8000);
        return answer.status === 200 && answer.body.node === target;
      },
      30_000,
    );
  }
}

describe('durable placements across full-cluster restarts', () => {
  it('keeps every acknowledged pin through kill -9 of all nodes, and re-syncs nodes that lost their directory', async () => {
    const ports = await freePorts(6);
    const slots: Slot[] = [0, 1, 2].map((i) => ({
      port: ports[2 * i]!,
      httpPort: ports[2 * i + 1]!,
      dir: join(root, `node-${i + 1}`),
    }));
    const seeds = slots.map((slot) => `app@127.0.0.1:${slot.port}`);
    const startAll = (round: string): NodeProc[] => slots.map((slot, i) => start(`${round}-node${i + 1}`, slot, seeds));

    let nodes = startAll('first');
    await waitForCluster(nodes, 45_000);
    const [n1, n2, n3] = nodes as [NodeProc, NodeProc, NodeProc];
    // Four entities on four distinct shards, each pinned to a node, written through different nodes.
    const entities = ['dur-a', 'dur-b', 'dur-c', 'dur-d', 'dur-e'];
    const shardOf = new Map(entities.map((e) => [e, shardIdFor(e, 1000)]));
    expect(new Set(shardOf.values()).size).toBe(entities.length);
    const entityOf = new Map([...shardOf].map(([e, s]) => [s, e]));
    const s = (e: string): number => shardOf.get(e) as number;
    const acknowledged = new Map<number, string>();

    const ack = async (via: NodeProc, entries: Array<[string, NodeProc]>): Promise<void> => {
      const body = { placements: entries.map(([e, target]) => ({ shardId: s(e), target: target.address })) };
      const answer = await via.post(`${SHARDS_PATH}/placements`, body);
      expect(answer.status, JSON.stringify(answer.body)).toBe(202);
      for (const [e, target] of entries) acknowledged.set(s(e), target.address);
    };
    await ack(n1, [['dur-a', n3]]);
    await ack(n2, [
      ['dur-b', n1],
      ['dur-c', n2],
    ]);
    await ack(n3, [['dur-d', n2]]);
    const cli = procs.spawnCli('cli-set', ['placements', 'set', String(s('dur-e')), n1.address, '--url', n3.url]);
    expect((await exitWithin(cli, 20_000)).code, cli.log()).toBe(0);
    acknowledged.set(s('dur-e'), n1.address);
    // The removal goes through a node that learnt the pin by replication.
    await waitFor('node 3 to see the pin of dur-c', async () => (await pinsOf(n3)).has(s('dur-c')), 10_000);
    const removed = await http('DELETE', `${n3.url}${SHARDS_PATH}/placements/${s('dur-c')}`);
    expect(removed.status).toBe(204);
    acknowledged.delete(s('dur-c'));
    // Right after the last acknowledgement, all three die at the same instant.
    for (const node of nodes) node.signal('SIGKILL');
    await Promise.all(nodes.map((node) => node.exited));

    const restartStarted = Date.now();
    nodes = startAll('second');
    // Each node's very first answer already holds what was acknowledged through it (loaded before serving).
    const ownWrites: Array<[number, string[]]> = [
      [0, ['dur-a']],
      [1, ['dur-b']],
      [2, ['dur-e']],
    ];
    for (const [i, written] of ownWrites) {
      const first = await waitFor(`node ${i + 1} to answer`, () => pinsOf(nodes[i]!), 30_000, 20);
      for (const e of written) expect(first.get(s(e))).toBe(acknowledged.get(s(e)));
    }
    expect((await pinsOf(nodes[2]!)).has(s('dur-c'))).toBe(false);
    await waitForCluster(nodes, 45_000);
    const clusterMs = Date.now() - restartStarted;
    await expectRestored(nodes, acknowledged, entityOf);
    const restoredMs = Date.now() - restartStarted;
    expect(acknowledged.has(s('dur-c'))).toBe(false);

    // Only node 1 keeps its directory: stopped gracefully (its pending commits are flushed on close), the
    // other two are killed and their directories deleted.
    nodes[0]!.signal('SIGTERM');
    expect((await exitWithin(nodes[0]!, 30_000)).code).toBe(0);
    nodes[1]!.signal('SIGKILL');
    nodes[2]!.signal('SIGKILL');
    await Promise.all(nodes.map((node) => node.exited));
    rmSync(slots[1]!.dir, { recursive: true, force: true });
    rmSync(slots[2]!.dir, { recursive: true, force: true });

    const resyncStarted = Date.now();
    nodes = startAll('third');
    await waitForCluster(nodes, 45_000);
    await expectRestored(nodes, acknowledged, entityOf);
    const resyncMs = Date.now() - resyncStarted;
    console.log(
      `[e2e figures] durability: 3 nodes SIGKILLed after ${acknowledged.size} pins + 1 removal; restart -> cluster up in ${clusterMs} ms, ` +
        `every pin listed and served from its target in ${restoredMs} ms; restart with one data directory kept -> all restored in ${resyncMs} ms`,
    );
  }, 240_000);

  it('local-cluster brings the pins back when run again on its data directory, and --fresh starts empty', async () => {
    const ports = await freeLocalClusterPorts(1);
    const { basePort, baseHttpPort } = ports;
    const url = `http://127.0.0.1:${baseHttpPort}`;
    const dataDir = join(root, 'local-cluster');
    const run = async (name: string, extra: string[]): Promise<Map<number, string>> => {
      const args = localClusterArgs({ ports, dataDir, logDir: join(root, `${name}-logs`), nodes: 1, extra });
      const cluster = procs.spawnCli(name, args, { detached: true });
      await waitForBanner(cluster, `${name} to be ready`);
      expect(cluster.log()).toContain(`placements: ${dataDir}`);
      const pins = await pinsOf(
        new NodeProc(name, cluster.child, cluster.logFile, `app@127.0.0.1:${basePort}`, url, basePort, baseHttpPort),
      );
      if (pins.size === 0) {
        const answer = await http('POST', `${url}${SHARDS_PATH}/placements`, {
          shardId: 7,
          target: `app@127.0.0.1:${basePort}`,
        });
        expect(answer.status).toBe(202);
      }
      cluster.signal('SIGINT');
      expect((await exitWithin(cluster, 30_000)).code).toBe(0);
      return pins;
    };
    expect((await run('lc-first', [])).size).toBe(0);
    expect([...(await run('lc-again', []))]).toEqual([[7, `app@127.0.0.1:${basePort}`]]);
    expect((await run('lc-fresh', ['--fresh'])).size).toBe(0);
  }, 180_000);

  it('refuses to start, exiting non-zero with a message naming the directory, on a held or a damaged directory', async () => {
    const ports = await freePorts(4);
    const held: Slot = { port: ports[0]!, httpPort: ports[1]!, dir: join(root, 'held') };
    const holder = start('holder', held, [`app@127.0.0.1:${held.port}`]);
    await waitForCluster([holder], 45_000);
    const second = start('second-on-held', { port: ports[2]!, httpPort: ports[3]!, dir: held.dir }, [
      `app@127.0.0.1:${ports[2]}`,
    ]);
    expect((await exitWithin(second, 20_000)).code).not.toBe(0);
    expect(second.log()).toContain(`data directory ${held.dir} is in use by process ${holder.pid}`);

    const damaged = join(root, 'damaged');
    mkdirSync(damaged, { recursive: true });
    writeFileSync(join(damaged, 'placement.mdb'), Buffer.alloc(64 * 1024, 0x5a));
    const broken = start('on-damaged', { port: ports[2]!, httpPort: ports[3]!, dir: damaged }, [
      `app@127.0.0.1:${ports[2]}`,
    ]);
    expect((await exitWithin(broken, 20_000)).code).not.toBe(0);
    expect(broken.log()).toMatch(/placement data in .*damaged cannot be read: .*To recover: .*empty data directory/s);
  }, 120_000);
});
