// Scenario 7, durability cost: durable appends per second through the lmdb persistence (every append
// acknowledged only once fsync'd, concurrent ones sharing a commit) against the in-memory persistence,
// for one sequential writer and for 100 concurrent writers. Wall-clock; the memory figure is the baseline.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLmdbPersistence } from '../../crdt/lmdb-persistence.js';
import { memoryPersistence } from '../../crdt/memory-persistence.js';
import type { PlacementPersistence } from '../../crdt/persistence.js';
import type { BenchOptions, ScenarioResult } from '../lib/scenario.js';
import { fmt, fmtRatio, ratio } from '../lib/stats.js';

/** About the size of one placement write's wire update. */
const UPDATE_BYTES = 120;
const WRITERS = [1, 100] as const;

interface Figure {
  readonly backend: 'lmdb' | 'memory';
  readonly writers: number;
  readonly appends: number;
  readonly seconds: number;
  readonly perSecond: number;
  /** Appends per commit: what group commit achieved. */
  readonly perCommit: number;
}

export async function durability(options: BenchOptions): Promise<ScenarioResult> {
  const total = options.quick ? 2_000 : 10_000;
  const dir = mkdtempSync(join(tmpdir(), 'placement-bench-s7-'));
  const figures: Figure[] = [];
  try {
    for (const writers of WRITERS) {
      const lmdb = await openLmdbPersistence(join(dir, `w${writers}`));
      figures.push(await measure('lmdb', lmdb, writers, total));
      figures.push(await measure('memory', memoryPersistence(), writers, total));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return report(figures);
}

/** `writers` loops, each appending and awaiting its own durable append before the next, `total` in all. */
async function measure(backend: Figure['backend'], p: PlacementPersistence, writers: number, total: number): Promise<Figure> {
  const update = new Uint8Array(UPDATE_BYTES).fill(7);
  for (let i = 0; i < 50; i++) await p.append(update);
  const before = p.stats().commits;
  let remaining = total;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: writers }, async () => {
      while (remaining > 0) {
        remaining--;
        await p.append(update);
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const commits = p.stats().commits - before;
  await p.close();
  return { backend, writers, appends: total, seconds, perSecond: total / seconds, perCommit: total / commits };
}

function report(figures: readonly Figure[]): ScenarioResult {
  const find = (backend: Figure['backend'], writers: number): Figure | undefined => figures.find((f) => f.backend === backend && f.writers === writers);
  const rows = WRITERS.map((writers) => {
    const disk = find('lmdb', writers);
    const memory = find('memory', writers);
    return [
      String(writers),
      fmt(disk?.perSecond ?? Number.NaN),
      fmt(disk?.perCommit ?? Number.NaN),
      fmt(memory?.perSecond ?? Number.NaN),
      fmtRatio(ratio(disk?.perSecond ?? Number.NaN, memory?.perSecond ?? Number.NaN)),
      String(disk?.appends ?? 0),
    ];
  });
  const headlines = WRITERS.map((writers) => {
    const disk = find('lmdb', writers);
    const memory = find('memory', writers);
    return (
      `S7 ${writers} writer${writers === 1 ? '' : 's'}: ${fmt(disk?.perSecond ?? Number.NaN)} durable appends/s on lmdb ` +
      `(${fmt(disk?.perCommit ?? Number.NaN)} per commit), ${fmtRatio(ratio(disk?.perSecond ?? Number.NaN, memory?.perSecond ?? Number.NaN))} of in-memory`
    );
  });
  return {
    id: 's7',
    title: 'Durability cost',
    tables: [
      {
        title: `Scenario 7: durable appends (${UPDATE_BYTES}-byte updates, lmdb fsync per commit vs in memory)`,
        headers: ['writers', 'lmdb appends/s', 'appends per commit', 'memory appends/s', 'ratio', 'appends'],
        rows,
        note:
          'wall-clock. Each writer awaits its append before the next; an lmdb append resolves only after its ' +
          'commit is fsync\'d, and appends waiting meanwhile share the next commit (group commit).',
      },
    ],
    data: { updateBytes: UPDATE_BYTES, figures },
    headlines,
    panels: [
      {
        title: 'S7 durable appends per second',
        unit: 'appends/s',
        log: true,
        groups: WRITERS.map((w) => `${w} writer${w === 1 ? '' : 's'}`),
        series: (['lmdb', 'memory'] as const).map((backend) => ({
          label: backend === 'lmdb' ? 'lmdb (durable)' : 'in memory',
          values: WRITERS.map((w) => find(backend, w)?.perSecond ?? Number.NaN),
        })),
      },
    ],
  };
}
