// Scenario 16, durable entities (issue 36; the issue calls it S13, a number S13 already had): reliable sends to a
// durable type (1 KiB of state committed per message, group commit) against sends to an in-memory type on the
// same two node processes, for lmdb and for a throwaway PostgreSQL server; the first answer with restored state
// after a kill -9 of the host on 3 CLI processes against the same failover without a store; and the restore of
// one entity with 1 MiB of state from lmdb. Wall-clock; every goal is a ratio or a difference against a baseline
// of the same run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NodeAddress } from '../../src/cluster/address.js';
import { GroupCommit } from '../../src/entity-store/group-commit.js';
import type { EntityStoreConfig } from '../../src/entity-store/entity-store.js';
import { openLmdbEntityStore } from '../../src/entity-store/lmdb-entity-store.js';
import { silentLogger } from '../../src/logging.js';
import type { EntityBehavior, EntityRef, HostOutcome } from '../../src/sharding/core/entity-api.js';
import { Shard } from '../../src/sharding/region/shard.js';
import { startPostgres } from '../../test/support/postgres-server.js';
import { startDeliveryNodes, type DeliveryNode } from '../lib/delivery-cluster.js';
import { failoverRuns, type FailoverTimes } from '../lib/real-failover.js';
import { killCluster, startCluster } from '../lib/real-cluster.js';
import type { BenchOptions, ScenarioResult } from '../lib/scenario.js';
import { fmt, fmtRatio, ratio, summarize } from '../lib/stats.js';
import { IDS } from './s10-delivery.js';

const WINDOW = 64;

interface Throughput {
  readonly store: string;
  readonly inMemoryPerSecond: number;
  readonly durablePerSecond: number;
  /** Asks that leave the state as it was (reads): answered after an epoch check, nothing written. */
  readonly inMemoryReadsPerSecond: number;
  readonly durableReadsPerSecond: number;
}

export async function durableEntities(options: BenchOptions): Promise<ScenarioResult> {
  const root = mkdtempSync(join(tmpdir(), 'actor-ts-s16-'));
  const postgres = await startPostgres();
  try {
    const messages = options.quick ? 2_000 : 10_000;
    const throughput = [
      await sendThroughput({ kind: 'lmdb', dir: join(root, 'lmdb') }, 'lmdb', messages),
      await sendThroughput({ kind: 'postgres', url: postgres.url }, 'PostgreSQL', messages),
    ];
    const runs = options.quick ? 2 : 10;
    const failover = {
      inMemory: await failoverTimes([], runs),
      durable: await failoverTimes(['--entity-store', `lmdb:${join(root, 'failover')}`], runs),
    };
    const restoreMs = await restoreOneMiB(join(root, 'restore'), options.quick ? 5 : 20);
    return report(throughput, messages, failover, restoreMs);
  } finally {
    postgres.destroy();
    rmSync(root, { recursive: true, force: true });
  }
}

/** Sends, then reads (asks), from one node process to entities on the other: the in-memory type, then the durable one. */
async function sendThroughput(store: EntityStoreConfig, name: string, messages: number): Promise<Throughput> {
  const nodes = await startDeliveryNodes(2, undefined, store);
  const [a, b] = nodes as [DeliveryNode, DeliveryNode];
  try {
    await Promise.all(nodes.map((n) => n.call('setHomes', { Remote: b.address, Durable: b.address })));
    const rate = async (op: 'windowedSend' | 'windowedAsk', type: string): Promise<number> => {
      await a.call(op, type, 500, IDS, WINDOW); // warm-up: entities started, connection, JIT
      const started = performance.now();
      await a.call(op, type, messages, IDS, WINDOW);
      return messages / ((performance.now() - started) / 1000);
    };
    return {
      store: name,
      inMemoryPerSecond: await rate('windowedSend', 'Remote'),
      durablePerSecond: await rate('windowedSend', 'Durable'),
      inMemoryReadsPerSecond: await rate('windowedAsk', 'Remote'),
      durableReadsPerSecond: await rate('windowedAsk', 'Durable'),
    };
  } finally {
    for (const node of nodes) node.kill();
  }
}

/** kill -9 failover on 3 CLI processes with the given extra flags (S11's runs: a member, then the oldest). */
async function failoverTimes(extraArgs: readonly string[], runs: number): Promise<FailoverTimes> {
  const cluster = await startCluster({ count: 3, extraArgs });
  try {
    return await failoverRuns(cluster, runs, (line) => process.stderr.write(`S16 ${line}\n`));
  } finally {
    await killCluster(cluster);
  }
}

/** ms from a new host's first message to the answer of an entity whose committed state is 1 MiB (lmdb). */
async function restoreOneMiB(dir: string, trials: number): Promise<number[]> {
  const state = 'x'.repeat(1024 * 1024);
  const behavior: EntityBehavior = (ctx) => {
    let held = typeof ctx.restored === 'string' ? ctx.restored : '';
    return { receive: (m) => ((held = m === 'fill' ? state : held), held.length), snapshot: () => held };
  };
  const store = openLmdbEntityStore(dir);
  const noRef = (): EntityRef => {
    throw new Error('not routed');
  };
  const host = (): Shard =>
    new Shard('Big', 1, behavior, NodeAddress.parse('s@127.0.0.1:1'), silentLogger(), {
      entityRef: noRef,
      durable: { commit: new GroupCommit(store), maxSnapshotBytes: 2 * 1024 * 1024 },
    });
  const ask = (shard: Shard, message: unknown): Promise<HostOutcome> =>
    new Promise((resolve) => shard.deliver('big', message, resolve));
  await ask(host(), 'fill');
  const times: number[] = [];
  for (let i = 0; i < trials; i++) {
    const shard = host();
    const started = performance.now();
    const answer = await ask(shard, 'get');
    times.push(performance.now() - started);
    if (!answer.ok || answer.value !== state.length) throw new Error('S16: the 1 MiB state did not come back');
  }
  await store.close();
  return times;
}

function report(
  throughput: readonly Throughput[],
  messages: number,
  failover: { readonly inMemory: FailoverTimes; readonly durable: FailoverTimes },
  restoreMs: readonly number[],
): ScenarioResult {
  const all = (times: FailoverTimes): number[] => [...times.member, ...times.coordinator];
  const inMemory = summarize(all(failover.inMemory));
  const durable = summarize(all(failover.durable));
  const restore = summarize(restoreMs);
  const s = (ms: number): string => fmt(ms / 1000, 2);
  const count = messages.toLocaleString('en');
  return {
    id: 's16',
    title: 'Durable entities',
    tables: [
      rateTable(
        `S16 reliable sends between 2 node processes (${count}, window ${WINDOW}), 1 KiB of state committed per message`,
        'send',
        throughput.map((t) => [t.store, t.inMemoryPerSecond, t.durablePerSecond]),
        'Same processes, same run: the in-memory type first, then the durable one. Goal >= 0.5x.',
      ),
      rateTable(
        `S16 reads: asks that leave the state as it was between the same processes (${count}, window ${WINDOW})`,
        'ask',
        throughput.map((t) => [t.store, t.inMemoryReadsPerSecond, t.durableReadsPerSecond]),
        'After the sends. A durable answer that changed nothing writes nothing: an epoch check (no goal).',
      ),
      {
        title: 'S16 kill -9 of the host on 3 CLI processes: first answer from the new host (member and oldest node)',
        headers: ['entities', 'runs', 'p50 s', 'p99 s', 'max s'],
        rows: [
          [
            'in memory (state lost)',
            String(inMemory.n),
            s(inMemory.median),
            s(inMemory.p99),
            s(Math.max(...all(failover.inMemory))),
          ],
          [
            'durable, lmdb (state restored)',
            String(durable.n),
            s(durable.median),
            s(durable.p99),
            s(Math.max(...all(failover.durable))),
          ],
        ],
        note: 'Goal: durable within 0.5 s of in-memory.',
      },
      {
        title: 'S16 restore of one entity with 1 MiB of state from lmdb (claim, read, decode, first answer)',
        headers: ['trials', 'p50 ms', 'p99 ms'],
        rows: [[String(restore.n), fmt(restore.median, 2), fmt(restore.p99, 2)]],
        note: 'Goal <= 10 ms.',
      },
    ],
    data: { throughput, failover, restoreMs },
    headlines: [
      ...throughput.map(
        (t) =>
          `S16 durable send with ${t.store}: ${fmtRatio(ratio(t.durablePerSecond, t.inMemoryPerSecond))} of in-memory send (goal >= 0.5x)`,
      ),
      `S16 first answer after kill -9, p50: durable ${s(durable.median)} s, in memory ${s(inMemory.median)} s (goal: within 0.5 s)`,
      `S16 restore of a 1 MiB entity from lmdb: p50 ${fmt(restore.median, 2)} ms (goal <= 10 ms)`,
    ],
    panels: [],
  };
}

/** Per store: messages per second of the in-memory type and of the durable one, and their ratio. */
function rateTable(
  title: string,
  verb: string,
  rows: ReadonlyArray<readonly [string, number, number]>,
  note: string,
): ScenarioResult['tables'][number] {
  return {
    title,
    headers: ['store', `in-memory ${verb}/s`, `durable ${verb}/s`, 'durable / in-memory'],
    rows: rows.map(([store, inMemory, durable]) => [
      store,
      fmt(inMemory, 0),
      fmt(durable, 0),
      fmtRatio(ratio(durable, inMemory)),
    ]),
    note,
  };
}
