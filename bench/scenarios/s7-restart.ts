// Scenario 7, the storage side: how long a node with durable placements takes to be usable again after a
// restart (a store of 10,000 pins; a log of many records never snapshotted), and how much disk a long run of
// overwrites with compaction leaves behind compared with the compacted state itself. Wall-clock.
import { DurablePlacementStore, EMPTY_STATE_VECTOR, openLmdbPersistence } from '../../crdt/index.js';

const T = 'Counter';
const TARGETS = ['app@127.0.0.1:7701', 'app@127.0.0.1:7702', 'app@127.0.0.1:7703'];

export interface RestartFigure {
  readonly case: string;
  readonly pins: number;
  readonly logRecords: number;
  /** From opening the directory to a store whose snapshot() answers: what a restarted node waits before serving. */
  readonly openMs: number;
}

export interface DiskFigure {
  readonly overwrites: number;
  readonly shards: number;
  /** Size of the lmdb file (it never shrinks; freed pages are reused). */
  readonly bytesOnDisk: number;
  /** The snapshot plus the log since it, uncompressed: the live data in that file before packing. */
  readonly liveBytes: number;
  /** The whole state after one more compaction: what no storage can go below. */
  readonly compactedStateBytes: number;
  readonly compactions: number;
  readonly seconds: number;
}

/** Writes `pins` pins (in bulk writes of 100) into a fresh directory, closes it, and times the reopen. */
export async function restartWithPins(dir: string, pins: number): Promise<RestartFigure> {
  const store = await DurablePlacementStore.open({
    node: 'app@127.0.0.1:7701',
    persistence: await openLmdbPersistence(dir),
  });
  for (let first = 0; first < pins; first += 100) {
    store.setMany(
      T,
      Array.from({ length: Math.min(100, pins - first) }, (_, i) => ({
        shardId: first + i,
        target: TARGETS[(first + i) % 3] as string,
      })),
    );
  }
  await store.flush();
  const logRecords = store.storageHealth().logRecordsSinceSnapshot;
  await store.persistence.close();
  return { case: `${pins.toLocaleString('en-US')} pins`, pins, logRecords, openMs: await timeOpen(dir, pins) };
}

/**
 * `records` single writes over 1,000 shards, then the reopen, timed. With `snapshots` off (and compaction
 * off) every write stays a log record to replay, a log no node keeps by default; with them on, the default
 * policy has folded most of them into a snapshot.
 */
export async function restartWithLog(dir: string, records: number, snapshots: boolean): Promise<RestartFigure> {
  const never = Number.MAX_SAFE_INTEGER;
  const off = { compactAfterItems: Infinity, snapshotAfterRecords: never, snapshotAfterLogBytes: never };
  const options = { node: 'app@127.0.0.1:7701', ...(snapshots ? {} : off) };
  const store = await DurablePlacementStore.open({ ...options, persistence: await openLmdbPersistence(dir) });
  for (let i = 0; i < records; i++) {
    store.set(T, i % 1000, TARGETS[i % 3] as string);
    if (i % 10_000 === 9_999) await store.flush();
  }
  await store.flush();
  const logRecords = store.storageHealth().logRecordsSinceSnapshot;
  await store.persistence.close();
  const what = `${records.toLocaleString('en-US')} writes, ${snapshots ? 'default snapshot policy' : 'never snapshotted'}`;
  return { case: what, pins: 1000, logRecords, openMs: await timeOpen(dir, 1000) };
}

async function timeOpen(dir: string, expectedPins: number): Promise<number> {
  const started = process.hrtime.bigint();
  const store = await DurablePlacementStore.open({
    node: 'app@127.0.0.1:7701',
    persistence: await openLmdbPersistence(dir),
  });
  const pins = store.snapshot(T).placements.size;
  const openMs = Number(process.hrtime.bigint() - started) / 1e6;
  if (pins !== expectedPins) throw new Error(`reopened store holds ${pins} pins, expected ${expectedPins}`);
  // The reopen may have started folding a long log into a snapshot: let it finish before the directory goes.
  await store.flush();
  await store.persistence.close();
  return openMs;
}

/** `overwrites` single writes cycling over `shards` shards with the default compaction and snapshot policy. */
export async function diskAfterOverwrites(dir: string, overwrites: number, shards: number): Promise<DiskFigure> {
  const started = process.hrtime.bigint();
  const store = await DurablePlacementStore.open({
    node: 'app@127.0.0.1:7701',
    persistence: await openLmdbPersistence(dir),
  });
  for (let i = 0; i < overwrites; i++) {
    store.set(T, i % shards, TARGETS[i % 3] as string);
    if (i % 10_000 === 9_999) await store.flush();
  }
  await store.flush();
  const stats = store.storageHealth();
  const compactions = store.stats().compactions;
  store.compact();
  const compactedStateBytes = store.encodeDiff(EMPTY_STATE_VECTOR).length;
  await store.flush();
  await store.persistence.close();
  return {
    overwrites,
    shards,
    bytesOnDisk: stats.bytesOnDisk,
    liveBytes: stats.snapshotBytes + stats.logBytesSinceSnapshot,
    compactedStateBytes,
    compactions,
    seconds: Number(process.hrtime.bigint() - started) / 1e9,
  };
}
