// Durable entity metrics (issue 36), exported when the node has an entity store: commit and restore latency
// histograms, observed as they happen, and the totals of commits, fenced writes, unchanged answers and failed
// transactions, read at scrape from the node's group commit.
import { Counter, Histogram, type Registry } from 'prom-client';

/** What the node's entity store reports: its totals, and its latencies as they happen. */
export interface EntityStoreFigures {
  stats(): {
    readonly commits: number;
    readonly writesCommitted: number;
    readonly writesFenced: number;
    readonly checksConfirmed: number;
    readonly failures: number;
  };
  /** Calls `listener` with each transaction's and each entity restore's duration; returns the unsubscribe. */
  onLatency(listener: (kind: 'commit' | 'restore', seconds: number) => void): () => void;
}

/** Commit round trips run from well under a millisecond (lmdb) to tens of milliseconds (a remote server). */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Registers the series on `registers`; returns what stops observing (called when the server closes). */
export function registerEntityStoreMetrics(
  figures: EntityStoreFigures,
  registers: Registry[],
  prefix: string,
): () => void {
  const histogram = (name: string, help: string): Histogram =>
    new Histogram({ name: `${prefix}${name}`, help, buckets: BUCKETS, registers });
  const commits = histogram('entity_store_commit_seconds', 'Duration of each entity store transaction (group commit).');
  const restores = histogram('entity_store_restore_seconds', "Time to read one durable entity's row on its start.");
  const total = (name: string, help: string, pick: (stats: ReturnType<EntityStoreFigures['stats']>) => number): void =>
    void new Counter({
      name: `${prefix}${name}`,
      help,
      registers,
      collect() {
        this.reset();
        this.inc(pick(figures.stats()));
      },
    });
  total('entity_store_commits_total', 'Entity store transactions committed.', (s) => s.commits);
  total('entity_store_writes_total', 'Durable entity states committed (after group commit).', (s) => s.writesCommitted);
  total(
    'entity_store_fenced_total',
    'Durable entity writes refused because a later host claimed their shard.',
    (s) => s.writesFenced,
  );
  total(
    'entity_store_unchanged_total',
    'Durable entity answers that left the state as committed: confirmed by an epoch check, nothing written.',
    (s) => s.checksConfirmed,
  );
  total(
    'entity_store_failures_total',
    'Entity store transactions that failed (store unavailable): nothing in them was acknowledged.',
    (s) => s.failures,
  );
  return figures.onLatency((kind, seconds) => (kind === 'commit' ? commits : restores).observe(seconds));
}
