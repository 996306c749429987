// Semantics 1-4 of the placement store as fast-check properties: random operations on 2-5 replicas with
// skewed injected clocks, delivered in random order with duplicates, drops and partitions.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PlacementReplicator, PlacementStore, compareHlc, type Hlc } from '../../crdt/index.js';
import { ManualTimers, MemoryNetwork, TYPES, UpdatePool, prng, stateVectorOf, view } from './helpers.js';

const HOUR = 3_600_000;
const BASE = 1_700_000_000_000;
const RUNS = 200;

interface Op {
  readonly replica: number;
  readonly kind: 'set' | 'remove';
  readonly type: (typeof TYPES)[number];
  readonly shard: number;
  readonly target: string;
  readonly advance: number;
  readonly deliveries: number;
}

interface Write {
  readonly type: string;
  readonly shard: number;
  readonly target: string | null;
  readonly hlc: Hlc;
  /** The placement the writing replica showed for the shard just before the write. */
  readonly seen: Hlc | undefined;
}

const opArb: fc.Arbitrary<Op> = fc.record({
  replica: fc.nat(4),
  kind: fc.constantFrom('set' as const, 'set' as const, 'remove' as const),
  type: fc.constantFrom(...TYPES),
  shard: fc.nat(5),
  target: fc.constantFrom('app@10.0.0.1:7701', 'app@10.0.0.2:7701', 'app@10.0.0.3:7701'),
  advance: fc.nat(40),
  deliveries: fc.nat(4),
});

function scenarioArb(maxSkewMs: number) {
  return fc.record({
    replicas: fc.integer({ min: 2, max: 5 }),
    skews: fc.array(fc.integer({ min: -maxSkewMs, max: maxSkewMs }), { minLength: 5, maxLength: 5 }),
    ops: fc.array(opArb, { minLength: 1, maxLength: 25 }),
    seed: fc.noShrink(fc.integer()),
  });
}

type Scenario = { replicas: number; skews: number[]; ops: Op[]; seed: number };

function makeStores(scenario: Scenario, clock: { t: number }): PlacementStore[] {
  return Array.from(
    { length: scenario.replicas },
    (_, i) => new PlacementStore({ node: `node-${i}`, now: () => BASE + clock.t + (scenario.skews[i] ?? 0) }),
  );
}

function perform(store: PlacementStore, op: Op): Write {
  const seen = store.snapshot(op.type).placements.get(op.shard)?.hlc;
  if (op.kind === 'set') {
    const p = store.set(op.type, op.shard, op.target);
    return { type: op.type, shard: op.shard, target: p.target, hlc: p.hlc, seen };
  }
  return { type: op.type, shard: op.shard, target: null, hlc: store.remove(op.type, op.shard), seen };
}

/** What every replica must show: per type and shard, the write with the greatest hlc (absent if a removal). */
function lastWriterWins(writes: readonly Write[]): Record<string, Record<number, string>> {
  const best = new Map<string, Write>();
  for (const w of writes) {
    const key = `${w.type}/${w.shard}`;
    const current = best.get(key);
    if (current === undefined || compareHlc(w.hlc, current.hlc) > 0) best.set(key, w);
  }
  const out: Record<string, Record<number, string>> = {};
  for (const w of best.values()) {
    if (w.target === null) continue;
    (out[w.type] ??= {})[w.shard] = `${w.target}|${w.hlc.wallMs}.${w.hlc.counter}.${w.hlc.node}|${w.hlc.node}`;
  }
  return out;
}

/** Replicas with hour-scale clock skews going through phases (partitions, drops) of `phaseArb`. */
function phasedScenarioArb<P>(phaseArb: fc.Arbitrary<P>, maxReplicas: number) {
  return fc.record({
    replicas: fc.integer({ min: 2, max: maxReplicas }),
    skews: fc.array(fc.integer({ min: -HOUR, max: HOUR }), { minLength: 5, maxLength: 5 }),
    phases: fc.array(phaseArb, { minLength: 1, maxLength: 4 }),
    seed: fc.noShrink(fc.integer()),
  });
}

function phasedCluster(scenario: { replicas: number; skews: number[]; seed: number }) {
  const clock = { t: 0 };
  const stores = makeStores({ ...scenario, ops: [] }, clock);
  return { clock, stores, ...replicated(stores, prng(scenario.seed)) };
}

/** The faults of one phase: the partition group of each of (at most) 5 replicas, and the share of frames lost. */
const PHASE_FAULTS = {
  groups: fc.array(fc.nat(1), { minLength: 5, maxLength: 5 }),
  dropRate: fc.constantFrom(0, 0.3, 0.7),
};

/**
 * Checks `check` on RUNS random phased clusters of 2 to `maxReplicas` replicas going through phases from `phaseArb`.
 */
function assertPhased<P>(
  phaseArb: fc.Arbitrary<P>,
  maxReplicas: number,
  check: (cluster: ReturnType<typeof phasedCluster>, phases: P[]) => void,
): void {
  fc.assert(
    fc.property(phasedScenarioArb(phaseArb, maxReplicas), (scenario) =>
      check(phasedCluster(scenario), scenario.phases),
    ),
    { numRuns: RUNS },
  );
}

/** Enters a phase: replica i is in partition group `groups[i]`, and `dropRate` of the frames are lost. */
function enterPhase(
  { net, names }: ReturnType<typeof phasedCluster>,
  phase: { groups: number[]; dropRate: number },
): void {
  net.partition = new Map(names.map((name, i) => [name, phase.groups[i] ?? 0]));
  net.dropRate = phase.dropRate;
}

/**
 * Heals every fault, runs anti-entropy rounds (at most 60) until `converged()` and asserts that it was
 * reached; then checks that no replicator rejected a frame, and closes them.
 */
function healAndSettle({ net, timers }: ReturnType<typeof phasedCluster>, converged: () => boolean): void {
  net.partition = new Map();
  net.dropRate = 0;
  net.duplicateRate = 0;
  for (let rounds = 0; rounds < 60 && !converged(); rounds++) {
    timers.fire();
    net.flush();
  }
  expect(converged()).toBe(true);
  for (const r of net.replicators.values()) {
    expect(r.stats().framesRejected).toBe(0);
    r.close();
  }
}

/** Every store behind a replicator on one MemoryNetwork (10% duplicates), all peered, first syncs done. */
function replicated(stores: readonly PlacementStore[], random: () => number) {
  const names = stores.map((s) => s.node);
  const net = new MemoryNetwork(random);
  net.duplicateRate = 0.1;
  const timers = new ManualTimers();
  stores.forEach((store, i) => {
    const replicator = new PlacementReplicator(store, net.linkFor(names[i] as string), {
      random,
      setInterval: timers.setInterval,
      clearInterval: timers.clearInterval,
    });
    net.replicators.set(names[i] as string, replicator);
  });
  stores.forEach((_, i) => {
    for (const peer of names) if (peer !== names[i]) net.replicators.get(names[i] as string)?.addPeer(peer);
  });
  net.flush();
  return { names, net, timers };
}

/** Runs the ops with random partial deliveries, then delivers everything; returns stores, pool and writes. */
function runWithPool(scenario: Scenario) {
  const clock = { t: 0 };
  const random = prng(scenario.seed);
  const stores = makeStores(scenario, clock);
  const pool = new UpdatePool(stores);
  const writes: Write[] = [];
  for (const op of scenario.ops) {
    clock.t += op.advance;
    writes.push(perform(stores[op.replica % stores.length] as PlacementStore, op));
    pool.deliverSome(random, op.deliveries);
    // 7. bounded growth: never more keys than writers x shards (2 types x 6 shards here)
    for (const store of stores) expect(store.stats().slots).toBeLessThanOrEqual(stores.length * TYPES.length * 6);
  }
  pool.deliverAll(random);
  return { stores, pool, writes, random, clock };
}

describe('placement store properties', () => {
  it('1 + 7. convergence: replicas that received the same updates, in any order, with duplicates, are equal; keys stay bounded', () => {
    fc.assert(
      fc.property(scenarioArb(2 * HOUR), (scenario) => {
        const { stores } = runWithPool(scenario);
        const [first, ...rest] = stores as [PlacementStore, ...PlacementStore[]];
        for (const other of rest) {
          expect(view(other)).toEqual(view(first));
          expect(other.typeNames()).toEqual(first.typeNames());
          expect(stateVectorOf(other)).toEqual(stateVectorOf(first));
        }
        // Once quiet, every writer has pruned every slot it lost: one key per written shard.
        const written = new Set(scenario.ops.map((op) => `${op.type}/${op.shard}`));
        for (const store of stores) expect(store.stats().slots).toBe(written.size);
      }),
      { numRuns: RUNS },
    );
  });

  it('2. last writer wins: each shard shows its greatest-hlc write; removals hide it, also against concurrent sets', () => {
    fc.assert(
      fc.property(scenarioArb(2 * HOUR), (scenario) => {
        const { stores, writes } = runWithPool(scenario);
        const expected = lastWriterWins(writes);
        for (const store of stores) expect(view(store)).toEqual(expected);
      }),
      { numRuns: RUNS },
    );
  });

  it('3. per-key dominance: a write after seeing a value beats it everywhere, even from a clock hours behind', () => {
    fc.assert(
      fc.property(scenarioArb(6 * HOUR), fc.nat(5), fc.constantFrom(...TYPES), (scenario, shard, type) => {
        const { stores, pool, writes, random, clock } = runWithPool(scenario);
        for (const w of writes) if (w.seen !== undefined) expect(compareHlc(w.hlc, w.seen)).toBeGreaterThan(0);
        // The replica whose wall clock is furthest behind overrides whatever the shard shows now.
        const skews = scenario.skews.slice(0, stores.length);
        const slowest = skews.indexOf(Math.min(...skews));
        const writer = stores[slowest] as PlacementStore;
        const shown = writer.snapshot(type).placements.get(shard);
        clock.t += 1;
        const override = writer.set(type, shard, 'operator-override');
        if (shown !== undefined) expect(compareHlc(override.hlc, shown.hlc)).toBeGreaterThan(0);
        pool.deliverAll(random);
        for (const store of stores) expect(store.snapshot(type).placements.get(shard)).toEqual(override);
      }),
      { numRuns: RUNS },
    );
  });

  it('4. partitions heal: writes on both sides of random partitions with drops converge by anti-entropy', () => {
    const phaseArb = fc.record({ ...PHASE_FAULTS, ops: fc.array(opArb, { maxLength: 8 }), ticks: fc.nat(2) });
    assertPhased(phaseArb, 5, (cluster, phases) => {
      const { clock, stores, net, timers } = cluster;
      const writes: Write[] = [];
      for (const phase of phases) {
        enterPhase(cluster, phase);
        for (const op of phase.ops) {
          clock.t += op.advance;
          writes.push(perform(stores[op.replica % stores.length] as PlacementStore, op));
          net.flush(op.deliveries * 3);
        }
        for (let i = 0; i < phase.ticks; i++) {
          timers.fire();
          net.flush();
        }
        net.flush();
      }
      const converged = () =>
        stores.every((s) => s.stats().slots === (stores[0] as PlacementStore).stats().slots) &&
        stores.every((s) => JSON.stringify(view(s)) === JSON.stringify(view(stores[0] as PlacementStore))) &&
        stores.every(
          (s) =>
            JSON.stringify([...stateVectorOf(s)].sort()) ===
            JSON.stringify([...stateVectorOf(stores[0] as PlacementStore)].sort()),
        );
      healAndSettle(cluster, converged);
      const expected = lastWriterWins(writes);
      for (const store of stores) expect(view(store)).toEqual(expected);
      // Prunes are deletions, invisible in state vectors: equal slot counts show the delete sets travelled too.
      const written = new Set(writes.map((w) => `${w.type}/${w.shard}`));
      for (const store of stores) expect(store.stats().slots).toBe(written.size);
      expect(timers.count).toBe(0);
    });
  });

  it('5. compaction at random moments, on random replicas, during partitions with drops, loses nothing and converges', () => {
    const stepArb = fc.record({ op: opArb, compact: fc.nat(5), ticks: fc.nat(1) });
    const phaseArb = fc.record({ ...PHASE_FAULTS, steps: fc.array(stepArb, { maxLength: 10 }) });
    assertPhased(phaseArb, 4, (cluster, phases) => {
      const { clock, stores, net, timers } = cluster;
      const writes: Write[] = [];
      let compactions = 0;
      for (const phase of phases) {
        enterPhase(cluster, phase);
        for (const { op, compact, ticks } of phase.steps) {
          clock.t += op.advance;
          const store = stores[op.replica % stores.length] as PlacementStore;
          writes.push(perform(store, op));
          if (compact === 0) {
            store.compact();
            compactions++;
          }
          net.flush(op.deliveries * 3);
          for (let i = 0; i < ticks; i++) timers.fire();
        }
        net.flush();
      }
      const first = stores[0] as PlacementStore;
      healAndSettle(
        cluster,
        () =>
          stores.every((s) => s.generation === first.generation) &&
          stores.every((s) => JSON.stringify(view(s)) === JSON.stringify(view(first))) &&
          stores.every((s) => equalBytes(s.encodeStateVector(), first.encodeStateVector())),
      );
      for (const store of stores) expect(view(store)).toEqual(lastWriterWins(writes));
      if (compactions > 0) expect(first.generation).toBeGreaterThan(0);
    });
  });
});

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}
