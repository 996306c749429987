// Scenario 2, concurrent operators: K writers on different nodes write the same shard and one shard each at
// the same simulated instant (wall clocks skewed by up to +-50 ms); time until every snapshot is equal, and
// whether the winner is the greatest timestamp. The plain Y.Map baseline shows why the store exists.
import { PlacementStore } from '../../crdt/index.js';
import * as Y from 'yjs';
import { EPOCH_MS, buildSimCluster, simAddress } from '../lib/sim-cluster.js';
import type { BenchOptions, ChartPanel, ScenarioResult } from '../lib/scenario.js';
import { seededRandom, shuffled, withSeededMathRandom } from '../lib/seeded-random.js';
import { fmt, fmtSummary, summarize, type Convergence, type Summary } from '../lib/stats.js';
import type { Table } from '../lib/table.js';
import { placementStoreProtocol } from '../protocols/placement-store.js';
import { plainYMapProtocol } from '../protocols/plain-ymap.js';
import { TYPE_NAME, compareStamps, type Protocol, type Stamp } from '../protocols/types.js';

const SKEW_MS = 50;
// Offline conflicts: each write lands at a random moment in a window wider than the skew, so which writer
// holds the greatest timestamp varies from conflict to conflict.
const JITTER_MS = 500;
const SHARED_SHARD = 0;

/** timeMs: simulated ms from the simultaneous writes until every node's snapshot is equal. */
interface NetworkFigures extends Convergence {
  readonly writers: number;
  /** Trials whose shared shard did not end on the greatest timestamp (on any node). */
  readonly lostConflicts: number;
  /** Node x shard checks where a node did not show the greatest timestamp's value. */
  readonly violations: number;
}

interface OfflineFigures {
  readonly protocol: string;
  readonly writers: number;
  readonly conflicts: number;
  readonly lostConflicts: number;
}

export async function concurrentOperators(options: BenchOptions): Promise<ScenarioResult> {
  const ks = [2, 8, 32];
  const network: NetworkFigures[] = [];
  const offline: OfflineFigures[] = [];
  for (const writers of ks) {
    const trials = options.quick ? (writers >= 32 ? 1 : 5) : writers >= 32 ? 8 : 20;
    for (const protocol of [placementStoreProtocol, plainYMapProtocol]) {
      network.push(
        await withSeededMathRandom(options.seed + writers, () => overNetwork(protocol, writers, trials, options)),
      );
    }
    const conflicts = options.quick ? 200 : 1000;
    offline.push(offlineStore(writers, conflicts, options.seed));
    offline.push(offlineYMap(writers, conflicts, options.seed));
  }
  return report(network, offline, ks);
}

function overNetwork(protocol: Protocol, writers: number, trials: number, options: BenchOptions): NetworkFigures {
  const nodes = Math.max(writers, 10);
  const times: number[] = [];
  const messages: number[] = [];
  let lostConflicts = 0;
  let violations = 0;
  for (let trial = 0; trial < trials; trial++) {
    // A fresh cluster per trial: new skews and new Yjs client ids, so each trial is an independent conflict.
    const cluster = buildSimCluster(protocol, {
      nodes,
      seed: options.seed * 104_729 + writers * 1000 + trial,
      delayMs: options.delayMs,
      skewMs: SKEW_MS,
    });
    try {
      const { clock, random } = cluster;
      clock.advanceTo(100 + Math.floor(random() * 1000));
      const chosen = shuffled([...cluster.nodes.keys()], random).slice(0, writers);
      const shards = [SHARED_SHARD, ...chosen.map((_, i) => i + 1)];
      const written = new Map<number, Array<{ target: string; stamp: Stamp }>>();
      const start = clock.now();
      const before = cluster.traffic.mark();
      chosen.forEach((node, i) => {
        const writer = cluster.nodes[node];
        if (writer === undefined) return;
        for (const shardId of [SHARED_SHARD, i + 1]) {
          const target = simAddress(Math.floor(random() * nodes)).toString();
          const list = written.get(shardId) ?? [];
          list.push({ target, stamp: writer.write(shardId, target) });
          written.set(shardId, list);
        }
      });
      const equal = (): boolean =>
        shards.every((shardId) => {
          const first = cluster.nodes[0]?.read(shardId);
          return first !== undefined && cluster.nodes.every((node) => node.read(shardId) === first);
        });
      if (!clock.runUntil(equal, start + 60_000)) throw new Error(`${protocol.id}: K=${writers} did not converge`);
      times.push(clock.now() - start);
      clock.runUntil(() => clock.networkIdle(), clock.now() + 1000);
      messages.push(cluster.traffic.mark().messages - before.messages);
      let lost = false;
      for (const [shardId, list] of written) {
        const greatest = list.reduce((a, b) => (compareStamps(a.stamp, b.stamp) >= 0 ? a : b));
        for (const node of cluster.nodes) {
          const stamp = node.stamp(shardId);
          if (
            node.read(shardId) !== greatest.target ||
            stamp === undefined ||
            compareStamps(stamp, greatest.stamp) !== 0
          ) {
            violations++;
            if (shardId === SHARED_SHARD) lost = true;
          }
        }
      }
      if (lost) lostConflicts++;
    } finally {
      cluster.close();
    }
  }
  return {
    protocol: protocol.id,
    writers,
    nodes,
    trials,
    timeMs: summarize(times),
    messages: summarize(messages),
    lostConflicts,
    violations,
  };
}

/**
 * Many conflicts without a network, in batches of 50: per batch, K fresh replicas (new skews, new Yjs
 * client ids, as after a restart) each write shards 0..49 within 500 ms of each other without syncing,
 * then one replica merges everyone's state. Counts shards whose winner is not the greatest timestamp.
 */
const BATCH = 50;

function offlineStore(writers: number, conflicts: number, seed: number): OfflineFigures {
  const random = seededRandom(seed * 31 + writers);
  let lost = 0;
  for (let batch = 0; batch < conflicts / BATCH; batch++) {
    let time = 0;
    const stores = Array.from({ length: writers }, (_, i) => {
      const skew = Math.round((random() * 2 - 1) * SKEW_MS);
      return new PlacementStore({ node: simAddress(i).toString(), now: () => EPOCH_MS + time + skew });
    });
    const greatest: Stamp[] = [];
    for (let shardId = 0; shardId < BATCH; shardId++) {
      const writes = stores
        .map((store, i) => ({ store, i, at: shardId * 1000 + Math.floor(random() * JITTER_MS) }))
        .sort((a, b) => a.at - b.at);
      for (const { store, i, at } of writes) {
        time = at;
        const hlc = store.set(TYPE_NAME, shardId, simAddress(i).toString()).hlc;
        if (greatest[shardId] === undefined || compareStamps(hlc, greatest[shardId] as Stamp) > 0)
          greatest[shardId] = hlc;
      }
    }
    const hub = stores[0] as PlacementStore;
    for (const store of stores.slice(1)) hub.applyUpdate(store.encodeDiff(hub.encodeStateVector()));
    const placements = hub.snapshot(TYPE_NAME).placements;
    for (let shardId = 0; shardId < BATCH; shardId++) {
      const hlc = placements.get(shardId)?.hlc;
      if (hlc === undefined || compareStamps(hlc, greatest[shardId] as Stamp) !== 0) lost++;
    }
  }
  return { protocol: 'store', writers, conflicts, lostConflicts: lost };
}

function offlineYMap(writers: number, conflicts: number, seed: number): OfflineFigures {
  const random = seededRandom(seed * 31 + writers);
  let lost = 0;
  for (let batch = 0; batch < conflicts / BATCH; batch++) {
    const docs = Array.from({ length: writers }, (_, i) => {
      const doc = new Y.Doc();
      doc.clientID = Math.floor(random() * 2 ** 32);
      return {
        doc,
        map: doc.getMap<readonly [string, number, string]>(TYPE_NAME),
        skew: Math.round((random() * 2 - 1) * SKEW_MS),
        node: simAddress(i).toString(),
      };
    });
    const greatest: Stamp[] = [];
    for (let shardId = 0; shardId < BATCH; shardId++) {
      for (const { map, skew, node } of docs) {
        const wallMs = EPOCH_MS + shardId * 1000 + Math.floor(random() * JITTER_MS) + skew;
        map.set(String(shardId), [node, wallMs, node]);
        const stamp = { wallMs, counter: 0, node };
        if (greatest[shardId] === undefined || compareStamps(stamp, greatest[shardId] as Stamp) > 0)
          greatest[shardId] = stamp;
      }
    }
    const hub = docs[0] as (typeof docs)[number];
    for (const { doc } of docs.slice(1))
      Y.applyUpdateV2(hub.doc, Y.encodeStateAsUpdateV2(doc, Y.encodeStateVector(hub.doc)));
    for (let shardId = 0; shardId < BATCH; shardId++) {
      const value = hub.map.get(String(shardId));
      const best = greatest[shardId] as Stamp;
      if (value === undefined || value[1] !== best.wallMs || value[2] !== best.node) lost++;
    }
    for (const { doc } of docs) doc.destroy();
  }
  return { protocol: 'ymap', writers, conflicts, lostConflicts: lost };
}

function report(
  network: readonly NetworkFigures[],
  offline: readonly OfflineFigures[],
  ks: readonly number[],
): ScenarioResult {
  const label = (id: string): string => (id === 'store' ? placementStoreProtocol.label : plainYMapProtocol.label);
  const share = (f: OfflineFigures): number => f.lostConflicts / f.conflicts;
  const main: Table = {
    title: 'Scenario 2: K concurrent writers (same shard + one shard each, same instant, clocks skewed +-50 ms)',
    headers: [
      'protocol',
      'K',
      'N',
      'time to equal ms (sim)',
      'messages',
      'conflicts lost (network)',
      'violations',
      'conflicts lost (offline)',
    ],
    rows: network.map((f) => {
      const off = offline.find((o) => o.protocol === f.protocol && o.writers === f.writers);
      return [
        label(f.protocol),
        String(f.writers),
        String(f.nodes),
        fmtSummary(f.timeMs),
        fmtSummary(f.messages),
        `${f.lostConflicts}/${f.trials}`,
        String(f.violations),
        off ? `${off.lostConflicts}/${off.conflicts} (${fmt(100 * share(off))}%)` : 'n/a',
      ];
    }),
    note:
      'time and messages: simulated, median / p99 over trials (fresh cluster per trial). conflicts lost: the shared ' +
      'shard ended on a value that is not the greatest timestamp (store: greatest HLC; Y.Map: greatest [wallMs, node] ' +
      'stored in the value). violations: node x shard checks showing anything but the greatest timestamp (must be 0 ' +
      'for the store). offline: many conflicts merged without a network (fresh replicas every 50 conflicts), for a precise share; a clock-blind winner would lose 1 - 1/K of them.',
  };
  const panels: ChartPanel[] = [
    {
      title: 'S2 concurrent conflicts resolved against the greatest timestamp (%)',
      unit: '%',
      log: false,
      groups: ks.map((k) => `K=${k}`),
      series: ['store', 'ymap'].map((id) => ({
        label: label(id),
        values: ks.map((k) => {
          const f = offline.find((o) => o.protocol === id && o.writers === k);
          return f ? 100 * share(f) : Number.NaN;
        }),
      })),
    },
  ];
  const headlines = ks.map((k) => {
    const store = offline.find((o) => o.protocol === 'store' && o.writers === k);
    const ymap = offline.find((o) => o.protocol === 'ymap' && o.writers === k);
    const storeNet = network.find((f) => f.protocol === 'store' && f.writers === k);
    return (
      `S2 K=${k}: store resolved ${store ? store.conflicts - store.lostConflicts : '?'}/${store?.conflicts ?? '?'} conflicts to the greatest HLC ` +
      `(${storeNet?.violations ?? '?'} violations over the network); plain Y.Map lost ${ymap ? fmt(100 * share(ymap)) : '?'}% of them`
    );
  });
  return { id: 's2', title: 'Concurrent operators', tables: [main], data: { network, offline }, headlines, panels };
}
