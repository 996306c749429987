// Scenario 4, growth: 10 writers overwrite random placements of 10,000 shards, syncing every 1,000 writes
// per writer, until 100k and 1M overwrites; then the encoded state size, heap of one replica, time for a
// fresh node to bootstrap from a peer, and time to encode the diff for a peer that is already in sync.
// Wall-clock figures, reported with their ratio to the plain JSON map and to the plain Y.Map run here too.
// The store is measured twice: with its whole history (automatic compaction off, as if it never ran) and
// after `compact()`, which is what a default store holds a little after 100,000 items.
// How the histories are built without ten full replicas, and why that is exact: lib/growth-history.ts.
import * as Y from 'yjs';
import { EMPTY_STATE_VECTOR, PlacementStore } from '../../crdt/index.js';
import {
  BATCH,
  SHARDS,
  StoreHistory,
  WRITERS,
  YMapHistory,
  checkStoreHistory,
  checkYMapHistory,
  workload,
  writerName,
  type Write,
} from '../lib/growth-history.js';
import { heapUsed, timeMs } from '../lib/heap.js';
import type { BenchOptions, ChartPanel, ScenarioResult } from '../lib/scenario.js';
import { EPOCH_MS } from '../lib/sim-cluster.js';
import { fmt, fmtBytes, fmtRatio, fmtSummary, ratio, summarize, type Summary } from '../lib/stats.js';
import type { Table } from '../lib/table.js';
import { LwwMap, parseEntries } from '../protocols/lww-map.js';
import { TYPE_NAME } from '../protocols/types.js';

interface GrowthFigures {
  readonly implementation: 'store' | 'compacted' | 'json' | 'ymap';
  readonly overwrites: number;
  /** Bench-side time to write the history up to this size (not a figure of merit). */
  readonly buildSeconds: number;
  readonly stateBytes: number;
  /** heapUsed growth for one more replica bootstrapped from a peer, after a full GC. */
  readonly replicaHeapBytes: number;
  readonly bootstrapMs: Summary;
  /** Store and Y.Map: diff for an in-sync peer. JSON map: it has no diff, so a full-state message. */
  readonly inSyncDiffMs: Summary;
  readonly inSyncDiffBytes: number;
  readonly liveKeys: number;
  /** Compacted rows: how long `compact()` took on the replica. */
  readonly compactMs?: number;
}

interface HistoryCheck {
  readonly overwrites: number;
  /** Store items compared between the one-writer-at-a-time history and ten replicas; differences must be 0. */
  readonly storeItems: number;
  readonly storeDifferences: number;
  /** One-document Y.Map state size over the ten-replica one. */
  readonly ymapStateRatio: number;
  readonly ymapItems: number;
  readonly ymapReplicatedItems: number;
}

export async function growth(options: BenchOptions): Promise<ScenarioResult> {
  const sizes = options.quick ? [20_000] : [100_000, 1_000_000];
  const check = checkHistories(options.quick ? 20_000 : 30_000, options.seed);
  const trials = (overwrites: number): number => (overwrites >= 1_000_000 ? 3 : options.quick ? 5 : 7);
  const figures = [
    ...measureStore(sizes, trials, options.seed),
    ...measureYMap(sizes, trials, options.seed),
    ...measureJson(sizes, trials, options.seed),
  ];
  return report(figures, sizes, check);
}

function checkHistories(overwrites: number, seed: number): HistoryCheck {
  const store = checkStoreHistory(overwrites, seed);
  if (store.differences > 0) {
    throw new Error(
      `S4: the written store history differs from ten replicas' in ${store.differences} of ${store.items} items`,
    );
  }
  const ymap = checkYMapHistory(overwrites, seed);
  return {
    overwrites,
    storeItems: store.items,
    storeDifferences: store.differences,
    ymapStateRatio: ymap.stateRatio,
    ymapItems: ymap.items,
    ymapReplicatedItems: ymap.replicatedItems,
  };
}

/** Runs the workload up to the largest size and calls `measure` each time it reaches one of `sizes`. */
function atSizes<T>(
  sizes: readonly number[],
  seed: number,
  write: (writes: readonly Write[]) => void,
  measure: (overwrites: number, buildSeconds: number) => T,
): T[] {
  const results: T[] = [];
  let done = 0;
  let buildNs = 0n;
  for (const writes of workload(Math.max(...sizes), seed)) {
    const start = process.hrtime.bigint();
    write(writes);
    buildNs += process.hrtime.bigint() - start;
    done += writes.length;
    if (sizes.includes(done)) results.push(measure(done, Number(buildNs) / 1e9));
  }
  return results;
}

/** What one implementation offers to be measured at one size. */
interface Subject {
  readonly implementation: GrowthFigures['implementation'];
  readonly stateBytes: number;
  readonly liveKeys: number;
  /** Builds one more replica from this one's state. */
  readonly bootstrap: () => unknown;
  /** What a peer that is already in sync receives. */
  readonly inSyncDiff: () => Uint8Array;
}

function measure(subject: Subject, overwrites: number, buildSeconds: number, trials: number): GrowthFigures {
  const bootstrap = bootstrapTrials(trials, subject.bootstrap);
  const inSync = repeat(50, subject.inSyncDiff);
  return {
    implementation: subject.implementation,
    overwrites,
    buildSeconds,
    stateBytes: subject.stateBytes,
    replicaHeapBytes: bootstrap.heap,
    bootstrapMs: bootstrap.ms,
    inSyncDiffMs: inSync.ms,
    inSyncDiffBytes: inSync.bytes,
    liveKeys: subject.liveKeys,
  };
}

/** The store with its whole history, then the same replica after `compact()`. */
function measureStore(sizes: readonly number[], trials: (n: number) => number, seed: number): GrowthFigures[] {
  const history = new StoreHistory();
  const figures = atSizes(
    sizes,
    seed,
    (writes) => history.round(writes),
    (overwrites, buildSeconds) => {
      const now = history.now;
      const replica = history.replica();
      const subject = (implementation: 'store' | 'compacted'): Subject => ({
        implementation,
        stateBytes: replica.encodeDiff(EMPTY_STATE_VECTOR).length,
        liveKeys: replica.stats().slots + replica.stats().baseSlots,
        bootstrap: () => {
          // Automatic compaction off, so that a bootstrap costs what applying the state costs.
          const fresh = new PlacementStore({ node: 'fresh', now: () => now, compactAfterItems: Infinity });
          fresh.applyUpdate(replica.encodeDiff(fresh.encodeStateVector()));
          return fresh;
        },
        // A peer in sync has the same state vector as the replica.
        inSyncDiff: () => replica.encodeDiff(replica.encodeStateVector()),
      });
      const whole = measure(subject('store'), overwrites, buildSeconds, trials(overwrites));
      const compactMs = timeMs(() => replica.compact());
      replica.releasePreviousGeneration();
      const compacted = { ...measure(subject('compacted'), overwrites, buildSeconds, trials(overwrites)), compactMs };
      return [whole, compacted];
    },
  );
  history.destroy();
  return figures.flat();
}

function measureYMap(sizes: readonly number[], trials: (n: number) => number, seed: number): GrowthFigures[] {
  const history = new YMapHistory(seed);
  const hub = history.doc;
  const figures = atSizes(
    sizes,
    seed,
    (writes) => history.round(writes),
    (overwrites, buildSeconds) => {
      const subject: Subject = {
        implementation: 'ymap',
        stateBytes: Y.encodeStateAsUpdateV2(hub).length,
        liveKeys: hub.getMap(TYPE_NAME).size,
        bootstrap: () => {
          const fresh = new Y.Doc();
          Y.applyUpdateV2(fresh, Y.encodeStateAsUpdateV2(hub, Y.encodeStateVector(fresh)));
          return fresh;
        },
        inSyncDiff: () => Y.encodeStateAsUpdateV2(hub, Y.encodeStateVector(hub)),
      };
      return measure(subject, overwrites, buildSeconds, trials(overwrites));
    },
  );
  hub.destroy();
  return figures;
}

function measureJson(sizes: readonly number[], trials: (n: number) => number, seed: number): GrowthFigures[] {
  let tick = 0;
  const map = new LwwMap();
  const write = (writes: readonly Write[]): void => {
    for (const { writer, shardId, target } of writes) map.write(shardId, target, EPOCH_MS + ++tick, writerName(writer));
  };
  return atSizes(sizes, seed, write, (overwrites, buildSeconds) => {
    const subject: Subject = {
      implementation: 'json',
      stateBytes: map.serialize().length,
      liveKeys: map.entries.size,
      bootstrap: () => {
        const fresh = new LwwMap();
        fresh.mergeAll(parseEntries(map.serialize()));
        return fresh;
      },
      // The JSON map has no diff: every gossip round re-sends (and, after a change, re-serialises) the whole map.
      inSyncDiff: () => {
        const copy = new LwwMap();
        for (const [shardId, entry] of map.entries) copy.mergeEntry(shardId, entry);
        return copy.serialize();
      },
    };
    return measure(subject, overwrites, buildSeconds, trials(overwrites));
  });
}

/** Times `bootstrap` per trial; the heap figure is the growth that the last replica leaves after a GC. */
function bootstrapTrials(trials: number, bootstrap: () => unknown): { ms: Summary; heap: number } {
  const samples: number[] = [];
  bootstrap(); // warm-up
  let kept: unknown;
  let heap = 0;
  for (let i = 0; i < trials; i++) {
    kept = undefined;
    const before = heapUsed();
    samples.push(timeMs(() => (kept = bootstrap())));
    heap = heapUsed() - before;
  }
  void kept;
  return { ms: summarize(samples), heap };
}

function repeat(times: number, fn: () => Uint8Array): { ms: Summary; bytes: number } {
  const samples: number[] = [];
  let bytes = 0;
  fn();
  for (let i = 0; i < times; i++) samples.push(timeMs(() => (bytes = fn().length)));
  return { ms: summarize(samples), bytes };
}

function report(figures: readonly GrowthFigures[], sizes: readonly number[], check: HistoryCheck): ScenarioResult {
  const label = {
    store: 'placement store (ours)',
    compacted: 'placement store, compacted',
    ymap: 'plain Y.Map',
    json: 'plain JSON map',
  } as const;
  const find = (impl: GrowthFigures['implementation'], n: number): GrowthFigures | undefined =>
    figures.find((f) => f.implementation === impl && f.overwrites === n);
  const main: Table = {
    title: `Scenario 4: growth (${WRITERS} writers, ${SHARDS.toLocaleString('en-US')} shards, a sync every ${BATCH} writes per writer)`,
    headers: [
      'implementation',
      'overwrites',
      'state bytes',
      'live keys',
      'replica heap',
      'bootstrap ms',
      'in-sync diff ms',
      'in-sync diff bytes',
    ],
    rows: figures.map((f) => [
      label[f.implementation],
      f.overwrites.toLocaleString('en-US'),
      fmtBytes(f.stateBytes),
      f.liveKeys.toLocaleString('en-US'),
      fmtBytes(f.replicaHeapBytes),
      fmtSummary(f.bootstrapMs),
      fmtSummary(f.inSyncDiffMs),
      fmtBytes(f.inSyncDiffBytes),
    ]),
    note:
      'wall-clock; median / p99 over trials. state bytes: full encoded state (store and Y.Map: Yjs V2; JSON: the ' +
      'gossip payload). bootstrap: a fresh replica asks a peer for everything and applies it. in-sync diff: what ' +
      'anti-entropy costs when nothing is missing; the JSON map has no diff, so its row is a full-state message. ' +
      `History check at ${check.overwrites.toLocaleString('en-US')} overwrites: the store's history, written one ` +
      `writer at a time, equals ten syncing replicas' in all ${check.storeItems.toLocaleString('en-US')} items; the ` +
      `one-document Y.Map history has ${check.ymapItems.toLocaleString('en-US')} items like the replicas' ` +
      `${check.ymapReplicatedItems.toLocaleString('en-US')} and ${fmtRatio(check.ymapStateRatio)} of their state size.`,
  };
  const ratios: Table = {
    title: 'Scenario 4: store relative to the baselines (same run)',
    headers: [
      'replica',
      'overwrites',
      'state vs JSON',
      'state vs Y.Map',
      'heap vs JSON',
      'heap vs Y.Map',
      'bootstrap vs JSON',
      'bootstrap vs Y.Map',
      'in-sync diff vs JSON full',
      'in-sync diff vs Y.Map',
    ],
    rows: (['store', 'compacted'] as const).flatMap((impl) =>
      sizes.map((n) => {
        const s = find(impl, n);
        const j = find('json', n);
        const y = find('ymap', n);
        const r = (get: (f: GrowthFigures) => number, base: GrowthFigures | undefined): string =>
          s && base ? fmtRatio(ratio(get(s), get(base))) : 'n/a';
        return [
          impl === 'store' ? 'whole history' : 'compacted',
          n.toLocaleString('en-US'),
          r((f) => f.stateBytes, j),
          r((f) => f.stateBytes, y),
          r((f) => f.replicaHeapBytes, j),
          r((f) => f.replicaHeapBytes, y),
          r((f) => f.bootstrapMs.median, j),
          r((f) => f.bootstrapMs.median, y),
          r((f) => f.inSyncDiffMs.median, j),
          r((f) => f.inSyncDiffMs.median, y),
        ];
      }),
    ),
  };
  const panels: ChartPanel[] = [
    {
      title: 'S4 encoded state after N overwrites of 10,000 shards (bytes)',
      unit: 'bytes',
      log: true,
      groups: sizes.map((n) => (n >= 1_000_000 ? `${n / 1_000_000}M` : `${n / 1000}k`)),
      series: (['store', 'compacted', 'ymap', 'json'] as const).map((impl) => ({
        label: label[impl],
        values: sizes.map((n) => find(impl, n)?.stateBytes ?? Number.NaN),
      })),
    },
  ];
  const headlines = sizes.flatMap((n) => {
    const s = find('store', n);
    const c = find('compacted', n);
    const j = find('json', n);
    const y = find('ymap', n);
    if (!s || !c || !j || !y) return [`S4 ${n}: incomplete`];
    return [
      `S4 ${n.toLocaleString('en-US')} overwrites: state ${fmtBytes(s.stateBytes)} (${fmtRatio(ratio(s.stateBytes, j.stateBytes))} of the JSON map, ` +
        `${fmtRatio(ratio(s.stateBytes, y.stateBytes))} of Y.Map), bootstrap ${fmt(s.bootstrapMs.median)} ms ` +
        `(${fmtRatio(ratio(s.bootstrapMs.median, j.bootstrapMs.median))} of JSON), in-sync diff ${fmt(s.inSyncDiffMs.median)} ms ` +
        `(${fmtRatio(ratio(s.inSyncDiffMs.median, y.inSyncDiffMs.median))} of Y.Map)`,
      `S4 ${n.toLocaleString('en-US')} overwrites, compacted (compact() ${fmt(c.compactMs ?? Number.NaN)} ms): state ${fmtBytes(c.stateBytes)} ` +
        `(${fmtRatio(ratio(c.stateBytes, j.stateBytes))} of the JSON map), heap ${fmtBytes(c.replicaHeapBytes)} ` +
        `(${fmtRatio(ratio(c.replicaHeapBytes, j.replicaHeapBytes))}), bootstrap ${fmt(c.bootstrapMs.median)} ms ` +
        `(${fmtRatio(ratio(c.bootstrapMs.median, j.bootstrapMs.median))} of JSON, ${fmtRatio(ratio(c.bootstrapMs.median, s.bootstrapMs.median))} of the whole history)`,
    ];
  });
  return {
    id: 's4',
    title: 'Growth',
    tables: [main, ratios],
    data: { shards: SHARDS, writers: WRITERS, batch: BATCH, check, figures },
    headlines,
    panels,
  };
}
