// Scenario 7, durability cost: placement writes per second through the ExternalAllocationController of a real
// in-process node with a data directory (each acknowledged only once fsync'd; concurrent writes share a
// commit) against the same node with the in-memory store, for one sequential writer and 100 concurrent
// writers, with acknowledgement latencies; then restart times and bytes on disk (s7-restart.ts). Wall-clock.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DurablePlacementStore } from '../../crdt/index.js';
import { startNode } from '../../src/node/node.js';
import type { BenchOptions, ScenarioResult } from '../lib/scenario.js';
import { fmt, fmtBytes, fmtRatio, ratio, summarize } from '../lib/stats.js';
import {
  diskAfterOverwrites,
  restartWithLog,
  restartWithPins,
  type DiskFigure,
  type RestartFigure,
} from './s7-restart.js';

const WRITERS = [1, 100] as const;
type Backend = 'lmdb' | 'memory';

interface WriteFigure {
  readonly backend: Backend;
  readonly writers: number;
  readonly writes: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Writes per commit (lmdb): what group commit achieved. */
  readonly perCommit: number;
}

export async function durability(options: BenchOptions): Promise<ScenarioResult> {
  const writes = options.quick ? 1_000 : 5_000;
  const logRecords = options.quick ? 20_000 : 100_000;
  const overwrites = options.quick ? 100_000 : 1_000_000;
  const dir = mkdtempSync(join(tmpdir(), 'placement-bench-s7-'));
  try {
    const figures: WriteFigure[] = [];
    for (const backend of ['memory', 'lmdb'] as const)
      figures.push(...(await controllerWrites(backend, join(dir, 'node'), writes)));
    const restarts = [
      await restartWithPins(join(dir, 'pins'), 10_000),
      await restartWithLog(join(dir, 'log'), 100_000, true),
      await restartWithLog(join(dir, 'raw-log'), logRecords, false),
    ];
    const disk = await diskAfterOverwrites(join(dir, 'overwrites'), overwrites, 10_000);
    return report(figures, restarts, disk);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One node (durable or not); `writes` pins through its controller by 1 and by 100 concurrent writers. */
async function controllerWrites(backend: Backend, dataDir: string, writes: number): Promise<WriteFigure[]> {
  const node = await startNode({
    port: 0,
    http: { port: 0 },
    logLevel: 'silent',
    ...(backend === 'lmdb' ? { dataDir } : {}),
  });
  try {
    const controller = node.counterPlacements;
    const target = node.address.toString();
    const commits = (): number => {
      const store = node.sharding.placementStore;
      return store instanceof DurablePlacementStore ? store.storageHealth().commits : Number.NaN;
    };
    // Warm-up, and the node's first write waits for it to be up.
    for (let i = 0; i < 50; i++) await controller.setPlacement(i, target);
    const figures: WriteFigure[] = [];
    for (const writers of WRITERS) {
      const latencies: number[] = [];
      let next = 0;
      const before = commits();
      const started = process.hrtime.bigint();
      await Promise.all(
        Array.from({ length: writers }, async () => {
          while (next < writes) {
            const shard = next++ % 1000;
            const t0 = process.hrtime.bigint();
            await controller.setPlacement(shard, target);
            latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
          }
        }),
      );
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const { median, p99 } = summarize(latencies);
      figures.push({
        backend,
        writers,
        writes,
        perSecond: writes / seconds,
        p50Ms: median,
        p99Ms: p99,
        perCommit: writes / (commits() - before),
      });
    }
    return figures;
  } finally {
    await node.stop();
  }
}

function report(figures: readonly WriteFigure[], restarts: readonly RestartFigure[], disk: DiskFigure): ScenarioResult {
  const find = (backend: Backend, writers: number): WriteFigure | undefined =>
    figures.find((f) => f.backend === backend && f.writers === writers);
  const per = (backend: Backend, writers: number): number => find(backend, writers)?.perSecond ?? Number.NaN;
  const rows = WRITERS.map((writers) => {
    const durable = find('lmdb', writers);
    const memory = find('memory', writers);
    return [
      String(writers),
      fmt(per('lmdb', writers)),
      `${fmt(durable?.p50Ms ?? Number.NaN)} / ${fmt(durable?.p99Ms ?? Number.NaN)}`,
      fmt(durable?.perCommit ?? Number.NaN),
      fmt(per('memory', writers)),
      `${fmt(memory?.p50Ms ?? Number.NaN)} / ${fmt(memory?.p99Ms ?? Number.NaN)}`,
      fmtRatio(ratio(per('lmdb', writers), per('memory', writers))),
      String(durable?.writes ?? 0),
    ];
  });
  const diskRatio = ratio(disk.bytesOnDisk, disk.compactedStateBytes);
  const headlines = [
    ...WRITERS.map(
      (writers) =>
        `S7 ${writers} writer${writers === 1 ? '' : 's'}: ${fmt(per('lmdb', writers))} durable placement writes/s through the controller ` +
        `(p99 ack ${fmt(find('lmdb', writers)?.p99Ms ?? Number.NaN)} ms), ${fmtRatio(ratio(per('lmdb', writers), per('memory', writers)))} of in-memory`,
    ),
    ...restarts.map((r) => `S7 restart with ${r.case}: store usable after ${fmt(r.openMs)} ms`),
    `S7 ${disk.overwrites.toLocaleString('en-US')} overwrites: ${fmtBytes(disk.bytesOnDisk)} on disk, ${fmtRatio(diskRatio)} the compacted state (${fmtBytes(disk.compactedStateBytes)})`,
  ];
  return {
    id: 's7',
    title: 'Durability cost',
    tables: [
      {
        title: 'Scenario 7: placement writes through the controller, durable (lmdb, fsync per commit) vs in memory',
        headers: [
          'writers',
          'durable writes/s',
          'durable ack ms p50 / p99',
          'writes per commit',
          'memory writes/s',
          'memory ack ms p50 / p99',
          'ratio',
          'writes',
        ],
        rows,
        note:
          'wall-clock, one in-process node. Each writer awaits setPlacement before its next; a durable write resolves only after its ' +
          "commit is fsync'd, and writes waiting meanwhile share the next commit (group commit).",
      },
      {
        title: 'Scenario 7: restart of a node with durable placements',
        headers: ['case', 'log records replayed', 'open to usable store (ms)'],
        rows: restarts.map((r) => [r.case, r.logRecords.toLocaleString('en-US'), fmt(r.openMs)]),
        note: 'from opening the data directory (lock, record checks) to a rebuilt store that answers reads; goal < 200 ms.',
      },
      {
        title: `Scenario 7: bytes on disk after ${disk.overwrites.toLocaleString('en-US')} overwrites of ${disk.shards} shards`,
        headers: [
          'lmdb file',
          'snapshot + log, uncompressed',
          'compacted state',
          'file / compacted',
          'compactions',
          'seconds',
        ],
        rows: [
          [
            fmtBytes(disk.bytesOnDisk),
            fmtBytes(disk.liveBytes),
            fmtBytes(disk.compactedStateBytes),
            fmtRatio(diskRatio),
            String(disk.compactions),
            fmt(disk.seconds),
          ],
        ],
        note:
          'default policies: a log of 10,000 records, or larger than 64 KiB and than half the snapshot, is compacted into a new snapshot ' +
          "(the store compacts at 100,000 items too); on disk the snapshot and each commit's appends are brotli-compressed; a flush every " +
          '10,000 writes, so each commit holds thousands of appends; lmdb keeps the pages of the last two commits; goal < 2x.',
      },
    ],
    data: { figures, restarts, disk },
    headlines,
    panels: [
      {
        title: 'S7 placement writes per second',
        unit: 'writes/s',
        log: true,
        groups: WRITERS.map((w) => `${w} writer${w === 1 ? '' : 's'}`),
        series: (['lmdb', 'memory'] as const).map((backend) => ({
          label: backend === 'lmdb' ? 'durable (lmdb)' : 'in memory',
          values: WRITERS.map((w) => per(backend, w)),
        })),
      },
    ],
  };
}
