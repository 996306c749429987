// One copy of a change per peer, as fast-check properties: replicas on a lossy network of fixed one-tick latency
// where random pushes are lost. With anti-entropy off, the digests relayed by the pushes' receivers alone bring
// every replica to the same state, and no frame ever carries content to a peer that already holds all of it; with
// anti-entropy on, even writes whose every push was lost converge.
import fc from 'fast-check';
import * as Y from 'yjs';
import { describe, expect, it } from 'vitest';
import { PlacementReplicator, PlacementStore, type SyncFrame } from '../../crdt/index.js';
import { decodeWireUpdate } from '../../crdt/wire.js';
import { ManualTimers, prng, stateVectorOf, view } from './helpers.js';

const RUNS = 200;
const TARGETS = ['app@10.0.0.1:7701', 'app@10.0.0.2:7701', 'app@10.0.0.3:7701'] as const;

interface Op {
  readonly replica: number;
  readonly shard: number;
  readonly target: number;
  /** Ticks delivered before the write (0: concurrent with the previous one). */
  readonly advance: number;
  /** Per peer, in peer order: whether the write's push to it is lost. */
  readonly lost: readonly boolean[];
  /** Which peer's push is kept whatever `lost` says (with anti-entropy off, a write nobody got stays unknown). */
  readonly kept: number;
}

interface InFlight {
  readonly from: string;
  readonly to: string;
  readonly frame: SyncFrame;
}

/** Content: a pushed update or a sync step 2; a digest rides in an update frame but carries none. */
function isContent(frame: SyncFrame): frame is Extract<SyncFrame, { kind: 'step2' | 'update' }> {
  return frame.kind === 'step2' || (frame.kind === 'update' && frame.digest === undefined);
}

/** Per Yjs client, the clock range [from, to) of the structs a content frame carries. */
function structRanges(frame: Extract<SyncFrame, { kind: 'step2' | 'update' }>): Map<number, [number, number]> {
  const doc = decodeWireUpdate(frame.update, Number.MAX_SAFE_INTEGER).doc;
  const ranges = new Map<number, [number, number]>();
  if (doc === undefined) return ranges;
  const meta = Y.parseUpdateMetaV2(doc);
  for (const [client, to] of meta.to) ranges.set(client, [meta.from.get(client) ?? 0, to]);
  return ranges;
}

/**
 * Full mesh of replicators over frame links: a frame sent at tick t arrives at t + 1, in order. Pushes made while
 * `losing` is set are lost for the peers it names. Every content frame is checked when sent against what its
 * receiver holds then.
 */
class LossyMesh {
  readonly stores: PlacementStore[];
  readonly replicators = new Map<string, PlacementReplicator>();
  readonly timers = new ManualTimers();
  private queue: InFlight[] = [];
  losing: ReadonlySet<string> = new Set();
  pushesLost = 0;
  pulls = 0;
  /** Content frames that carried only structs their receiver already held when they were sent. */
  readonly redundant: string[] = [];

  constructor(replicas: number, seed: number) {
    const random = prng(seed);
    let t = 0;
    this.stores = Array.from({ length: replicas }, (_, i) => new PlacementStore({ node: `n${i}`, now: () => ++t }));
    for (const store of this.stores) {
      const replicator = new PlacementReplicator(
        store,
        { sendFrame: (peer, frame) => this.send(store.node, peer, frame) },
        { random, setInterval: this.timers.setInterval, clearInterval: this.timers.clearInterval },
      );
      this.replicators.set(store.node, replicator);
    }
    for (const store of this.stores)
      for (const peer of this.stores) if (peer !== store) this.replicators.get(store.node)?.addPeer(peer.node);
    this.settle();
    this.pulls = 0;
  }

  store(node: string): PlacementStore {
    return this.stores.find((s) => s.node === node) as PlacementStore;
  }

  /** Delivers one tick's frames (those sent during it arrive on the next). */
  tick(): void {
    const due = this.queue;
    this.queue = [];
    for (const { from, to, frame } of due) this.replicators.get(to)?.receiveFrame(from, frame);
  }

  /** Ticks until no frame is in flight. */
  settle(): void {
    for (let n = 0; n < 1_000 && this.queue.length > 0; n++) this.tick();
    expect(this.queue).toEqual([]);
  }

  converged(): boolean {
    const [first, ...rest] = this.stores as [PlacementStore, ...PlacementStore[]];
    return rest.every(
      (s) =>
        JSON.stringify(view(s)) === JSON.stringify(view(first)) &&
        JSON.stringify([...stateVectorOf(s)].sort()) === JSON.stringify([...stateVectorOf(first)].sort()),
    );
  }

  private send(from: string, to: string, frame: SyncFrame): void {
    if (frame.kind === 'update' && frame.digest === undefined && this.losing.has(to)) {
      this.pushesLost++;
      return;
    }
    if (frame.kind === 'step1') this.pulls++;
    if (isContent(frame)) this.checkNotRedundant(from, to, frame);
    this.queue.push({ from, to, frame });
  }

  private checkNotRedundant(from: string, to: string, frame: Extract<SyncFrame, { kind: 'step2' | 'update' }>): void {
    const ranges = structRanges(frame);
    if (ranges.size === 0) return; // deletions only: the anti-entropy's delete set, or a prune
    const held = stateVectorOf(this.store(to));
    const lacks = [...ranges].some(([client, [, end]]) => (held.get(client) ?? 0) < end);
    if (!lacks) this.redundant.push(`${from} -> ${to}: ${frame.kind} of ${JSON.stringify([...ranges])}`);
  }
}

const opArb = (replicas: number): fc.Arbitrary<Op> =>
  fc.record({
    replica: fc.nat(replicas - 1),
    shard: fc.nat(7),
    target: fc.nat(TARGETS.length - 1),
    advance: fc.constantFrom(0, 1, 1, 2, 3),
    lost: fc.array(fc.boolean(), { minLength: replicas - 1, maxLength: replicas - 1 }),
    kept: fc.nat(replicas - 2),
  });

/** 3-5 replicas: with the default relay fanout of 3 every receiver of a push relays its digest to every other peer. */
const scenarioArb = fc.integer({ min: 3, max: 5 }).chain((replicas) =>
  fc.record({
    replicas: fc.constant(replicas),
    ops: fc.array(opArb(replicas), { minLength: 1, maxLength: 20 }),
    seed: fc.noShrink(fc.integer()),
  }),
);

/** Runs the ops: before each, `advance` ticks; during each write, its pushes to the `lost` peers are lost. */
function run(mesh: LossyMesh, ops: readonly Op[], keepOne: boolean): void {
  for (const op of ops) {
    for (let n = 0; n < op.advance; n++) mesh.tick();
    const writer = mesh.stores[op.replica] as PlacementStore;
    const peers = mesh.stores.filter((s) => s !== writer).map((s) => s.node);
    mesh.losing = new Set(peers.filter((_, i) => op.lost[i] === true && !(keepOne && i === op.kept)));
    writer.set('Counter', op.shard, TARGETS[op.target] as string);
    mesh.losing = new Set();
  }
}

describe('digest repair of lost pushes', () => {
  it('with anti-entropy off, digests alone repair every lost push, and no content goes to a peer that holds it', () => {
    fc.assert(
      fc.property(scenarioArb, ({ replicas, ops, seed }) => {
        const mesh = new LossyMesh(replicas, seed);
        run(mesh, ops, true);
        mesh.settle();
        expect(mesh.converged()).toBe(true);
        expect(mesh.redundant).toEqual([]);
        // A lost push was repaired by a pull, not by luck.
        if (mesh.pushesLost > 0) expect(mesh.pulls).toBeGreaterThan(0);
        for (const r of mesh.replicators.values()) expect(r.stats().framesRejected).toBe(0);
      }),
      { numRuns: RUNS },
    );
  });

  it('with anti-entropy on, writes whose every push was lost converge too', () => {
    fc.assert(
      fc.property(scenarioArb, ({ replicas, ops, seed }) => {
        const mesh = new LossyMesh(replicas, seed);
        run(mesh, ops, false);
        mesh.settle();
        for (let rounds = 0; rounds < 30 && !mesh.converged(); rounds++) {
          mesh.timers.fire();
          mesh.settle();
        }
        expect(mesh.converged()).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });
});
