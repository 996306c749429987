// Scenario 4, growth: 10 writers overwrite random placements of 10,000 shards (synced through a hub every
// 1,000 writes per writer) until 100k / 1M overwrites; then encoded state size, heap of one replica, time
// for a fresh node to bootstrap from a peer, and time to encode the diff for a peer that is already in sync.
// Wall-clock figures: reported with their ratio to the plain JSON map and to the plain Y.Map run here too.
// The 1,000,000 case runs only with --with-1m: building it (10 replicas, every write replayed through the
// hub) took 424 s for the store and 246 s for the plain Y.Map, and the whole scenario 22 minutes, well past
// the 10-minute budget of a full run (figures in bench/README.md).
import * as Y from 'yjs';
import { PlacementStore } from '../../crdt/index.js';
import { heapUsed, timeMs } from '../lib/heap.js';
import type { BenchOptions, ChartPanel, ScenarioResult } from '../lib/scenario.js';
import { seededRandom } from '../lib/seeded-random.js';
import { EPOCH_MS, simAddress } from '../lib/sim-cluster.js';
import { fmt, fmtBytes, fmtRatio, fmtSummary, ratio, summarize, type Summary } from '../lib/stats.js';
import type { Table } from '../lib/table.js';
import { LwwMap, parseEntries } from '../protocols/lww-map.js';
import { TYPE_NAME } from '../protocols/types.js';

const SHARDS = 10_000;
const WRITERS = 10;
const BATCH = 1000;
const TARGETS = 100;
const EMPTY_STATE_VECTOR = new Uint8Array([0]);

interface GrowthFigures {
  readonly implementation: 'store' | 'json' | 'ymap';
  readonly overwrites: number;
  readonly buildSeconds: number;
  readonly stateBytes: number;
  /** heapUsed growth for one more replica bootstrapped from a peer, after a full GC. */
  readonly replicaHeapBytes: number;
  readonly bootstrapMs: Summary;
  /** Store and Y.Map: diff for an in-sync peer. JSON map: it has no diff, so a full-state message. */
  readonly inSyncDiffMs: Summary;
  readonly inSyncDiffBytes: number;
  readonly liveKeys: number;
}

/** One write of the shared workload: the same sequence for every implementation. */
interface Write {
  readonly writer: number;
  readonly shardId: number;
  readonly target: string;
}

function* workload(overwrites: number, seed: number): Generator<Write[]> {
  const random = seededRandom(seed);
  const targets = Array.from({ length: TARGETS }, (_, i) => simAddress(i).toString());
  const rounds = Math.ceil(overwrites / (WRITERS * BATCH));
  for (let round = 0; round < rounds; round++) {
    const writes: Write[] = [];
    for (let writer = 0; writer < WRITERS; writer++) {
      for (let i = 0; i < BATCH; i++) {
        writes.push({ writer, shardId: Math.floor(random() * SHARDS), target: targets[Math.floor(random() * TARGETS)] as string });
      }
    }
    yield writes;
  }
}

export async function growth(options: BenchOptions): Promise<ScenarioResult> {
  const sizes = options.quick ? [20_000] : options.million ? [100_000, 1_000_000] : [100_000];
  const figures: GrowthFigures[] = [];
  for (const overwrites of sizes) {
    const trials = overwrites >= 1_000_000 ? 3 : options.quick ? 5 : 7;
    figures.push(measureStore(overwrites, trials, options.seed));
    figures.push(measureYMap(overwrites, trials, options.seed));
    figures.push(measureJson(overwrites, trials, options.seed));
  }
  return report(figures, sizes);
}

function measureStore(overwrites: number, trials: number, seed: number): GrowthFigures {
  let tick = 0;
  const now = (): number => EPOCH_MS + tick;
  const stores = Array.from({ length: WRITERS }, (_, i) => new PlacementStore({ node: `writer-${i}`, now }));
  const hub = stores[0] as PlacementStore;
  const sync = (): void => {
    for (const store of stores.slice(1)) hub.applyUpdate(store.encodeDiff(hub.encodeStateVector()));
    for (const store of stores.slice(1)) store.applyUpdate(hub.encodeDiff(store.encodeStateVector()));
  };
  const start = process.hrtime.bigint();
  for (const writes of workload(overwrites, seed)) {
    for (const { writer, shardId, target } of writes) {
      tick++;
      (stores[writer] as PlacementStore).set(TYPE_NAME, shardId, target);
    }
    sync();
  }
  // Prunes made while applying the last round travel in one more round.
  sync();
  sync();
  const buildSeconds = Number(process.hrtime.bigint() - start) / 1e9;
  const state = hub.encodeDiff(EMPTY_STATE_VECTOR);
  const peer = stores[1] as PlacementStore;
  const bootstrap = bootstrapTrials(trials, () => {
    const fresh = new PlacementStore({ node: 'fresh', now });
    fresh.applyUpdate(hub.encodeDiff(fresh.encodeStateVector()));
    return fresh;
  });
  const inSync = repeat(50, () => hub.encodeDiff(peer.encodeStateVector()));
  return {
    implementation: 'store',
    overwrites,
    buildSeconds,
    stateBytes: state.length,
    replicaHeapBytes: bootstrap.heap,
    bootstrapMs: bootstrap.ms,
    inSyncDiffMs: inSync.ms,
    inSyncDiffBytes: inSync.bytes,
    liveKeys: hub.stats().slots,
  };
}

function measureYMap(overwrites: number, trials: number, seed: number): GrowthFigures {
  let tick = 0;
  const random = seededRandom(seed + 1);
  const docs = Array.from({ length: WRITERS }, (_, i) => {
    const doc = new Y.Doc();
    doc.clientID = Math.floor(random() * 2 ** 32);
    return { doc, map: doc.getMap<readonly [string, number, string]>(TYPE_NAME), node: `writer-${i}` };
  });
  const hub = (docs[0] as (typeof docs)[number]).doc;
  const sync = (): void => {
    for (const { doc } of docs.slice(1)) Y.applyUpdateV2(hub, Y.encodeStateAsUpdateV2(doc, Y.encodeStateVector(hub)));
    for (const { doc } of docs.slice(1)) Y.applyUpdateV2(doc, Y.encodeStateAsUpdateV2(hub, Y.encodeStateVector(doc)));
  };
  const start = process.hrtime.bigint();
  for (const writes of workload(overwrites, seed)) {
    for (const { writer, shardId, target } of writes) {
      tick++;
      const w = docs[writer] as (typeof docs)[number];
      w.map.set(String(shardId), [target, EPOCH_MS + tick, w.node]);
    }
    sync();
  }
  const buildSeconds = Number(process.hrtime.bigint() - start) / 1e9;
  const peer = (docs[1] as (typeof docs)[number]).doc;
  const bootstrap = bootstrapTrials(trials, () => {
    const fresh = new Y.Doc();
    Y.applyUpdateV2(fresh, Y.encodeStateAsUpdateV2(hub, Y.encodeStateVector(fresh)));
    return fresh;
  });
  const inSync = repeat(50, () => Y.encodeStateAsUpdateV2(hub, Y.encodeStateVector(peer)));
  const figures: GrowthFigures = {
    implementation: 'ymap',
    overwrites,
    buildSeconds,
    stateBytes: Y.encodeStateAsUpdateV2(hub).length,
    replicaHeapBytes: bootstrap.heap,
    bootstrapMs: bootstrap.ms,
    inSyncDiffMs: inSync.ms,
    inSyncDiffBytes: inSync.bytes,
    liveKeys: hub.getMap(TYPE_NAME).size,
  };
  for (const { doc } of docs) doc.destroy();
  return figures;
}

function measureJson(overwrites: number, trials: number, seed: number): GrowthFigures {
  let tick = 0;
  const map = new LwwMap();
  const start = process.hrtime.bigint();
  for (const writes of workload(overwrites, seed)) {
    for (const { writer, shardId, target } of writes) map.write(shardId, target, EPOCH_MS + ++tick, `writer-${writer}`);
  }
  const buildSeconds = Number(process.hrtime.bigint() - start) / 1e9;
  const bootstrap = bootstrapTrials(trials, () => {
    const fresh = new LwwMap();
    fresh.mergeAll(parseEntries(map.serialize()));
    return fresh;
  });
  // The JSON map has no diff: every gossip round re-sends (and, after a change, re-serialises) the whole map.
  const full = repeat(50, () => {
    const copy = new LwwMap();
    for (const [shardId, entry] of map.entries) copy.mergeEntry(shardId, entry);
    return copy.serialize();
  });
  return {
    implementation: 'json',
    overwrites,
    buildSeconds,
    stateBytes: map.serialize().length,
    replicaHeapBytes: bootstrap.heap,
    bootstrapMs: bootstrap.ms,
    inSyncDiffMs: full.ms,
    inSyncDiffBytes: full.bytes,
    liveKeys: map.entries.size,
  };
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

function report(figures: readonly GrowthFigures[], sizes: readonly number[]): ScenarioResult {
  const label = { store: 'placement store (ours)', ymap: 'plain Y.Map', json: 'plain JSON map' } as const;
  const find = (impl: GrowthFigures['implementation'], n: number): GrowthFigures | undefined =>
    figures.find((f) => f.implementation === impl && f.overwrites === n);
  const main: Table = {
    title: `Scenario 4: growth (${WRITERS} writers, ${SHARDS.toLocaleString('en-US')} shards, hub sync every ${BATCH} writes per writer)`,
    headers: ['implementation', 'overwrites', 'state bytes', 'live keys', 'replica heap', 'bootstrap ms', 'in-sync diff ms', 'in-sync diff bytes', 'build s'],
    rows: figures.map((f) => [
      label[f.implementation],
      f.overwrites.toLocaleString('en-US'),
      fmtBytes(f.stateBytes),
      f.liveKeys.toLocaleString('en-US'),
      fmtBytes(f.replicaHeapBytes),
      fmtSummary(f.bootstrapMs),
      fmtSummary(f.inSyncDiffMs),
      fmtBytes(f.inSyncDiffBytes),
      fmt(f.buildSeconds),
    ]),
    note:
      'wall-clock; median / p99 over trials. state bytes: full encoded state (store and Y.Map: Yjs V2; JSON: the ' +
      'gossip payload). bootstrap: a fresh replica asks a peer for everything and applies it. in-sync diff: what ' +
      'anti-entropy costs when nothing is missing; the JSON map has no diff, so its row is a full-state message. ' +
      'build s: time to run the workload (store: includes syncing 10 replicas).',
  };
  const ratios: Table = {
    title: 'Scenario 4: store relative to the baselines (same run)',
    headers: ['overwrites', 'state vs JSON', 'state vs Y.Map', 'heap vs JSON', 'heap vs Y.Map', 'bootstrap vs JSON', 'bootstrap vs Y.Map', 'in-sync diff vs JSON full', 'in-sync diff vs Y.Map'],
    rows: sizes.map((n) => {
      const s = find('store', n);
      const j = find('json', n);
      const y = find('ymap', n);
      const r = (get: (f: GrowthFigures) => number, base: GrowthFigures | undefined): string => (s && base ? fmtRatio(ratio(get(s), get(base))) : 'n/a');
      return [
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
  };
  const panels: ChartPanel[] = [
    {
      title: 'S4 encoded state after N overwrites of 10,000 shards (bytes)',
      unit: 'bytes',
      log: true,
      groups: sizes.map((n) => `${n / 1000}k`),
      series: (['store', 'ymap', 'json'] as const).map((impl) => ({ label: label[impl], values: sizes.map((n) => find(impl, n)?.stateBytes ?? Number.NaN) })),
    },
  ];
  const headlines = sizes.map((n) => {
    const s = find('store', n);
    const j = find('json', n);
    const y = find('ymap', n);
    if (!s || !j || !y) return `S4 ${n}: incomplete`;
    return (
      `S4 ${n.toLocaleString('en-US')} overwrites: state ${fmtBytes(s.stateBytes)} (${fmtRatio(ratio(s.stateBytes, j.stateBytes))} of the JSON map, ` +
      `${fmtRatio(ratio(s.stateBytes, y.stateBytes))} of Y.Map), bootstrap ${fmt(s.bootstrapMs.median)} ms ` +
      `(${fmtRatio(ratio(s.bootstrapMs.median, j.bootstrapMs.median))} of JSON), in-sync diff ${fmt(s.inSyncDiffMs.median)} ms ` +
      `(${fmtRatio(ratio(s.inSyncDiffMs.median, y.inSyncDiffMs.median))} of Y.Map)`
    );
  });
  return { id: 's4', title: 'Growth', tables: [main, ratios], data: { shards: SHARDS, writers: WRITERS, batch: BATCH, figures }, headlines, panels };
}
