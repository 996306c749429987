// The histories scenario 4 measures: W writers overwriting random placements, every writer seeing the
// others' writes every BATCH writes of its own. Ten real replicas that each apply all 1,000,000 writes do
// not fit the 10-minute budget (their build alone took 7 minutes and 2.6 GB), so the store's history is
// written the way it would be, one writer at a time, and `checkStoreHistory` proves at a small size that
// the result is the same document, item for item, as ten replicas syncing through a hub.
import * as Y from 'yjs';
import { EMPTY_STATE_VECTOR, PlacementStore } from '../../crdt/index.js';
import { encodeSlotValue, slotKey, type SlotValue } from '../../crdt/slots.js';
import { decodeWireUpdate, encodeWireUpdate } from '../../crdt/wire.js';
import { seededRandom } from './seeded-random.js';
import { EPOCH_MS, simAddress } from './sim-cluster.js';
import { TYPE_NAME } from '../protocols/types.js';

export const SHARDS = 10_000;
export const WRITERS = 10;
/** Writes per writer between two syncs. */
export const BATCH = 1000;
const TARGETS = 100;

/** One write of the shared workload: the same sequence for every implementation. */
export interface Write {
  readonly writer: number;
  readonly shardId: number;
  readonly target: string;
}

/** Rounds of WRITERS x BATCH writes, writer 0's batch first; the writers sync after every round. */
export function* workload(overwrites: number, seed: number): Generator<Write[]> {
  const random = seededRandom(seed);
  const targets = Array.from({ length: TARGETS }, (_, i) => simAddress(i).toString());
  const rounds = Math.ceil(overwrites / (WRITERS * BATCH));
  for (let round = 0; round < rounds; round++) {
    const writes: Write[] = [];
    for (let writer = 0; writer < WRITERS; writer++) {
      for (let i = 0; i < BATCH; i++) {
        writes.push({
          writer,
          shardId: Math.floor(random() * SHARDS),
          target: targets[Math.floor(random() * TARGETS)] as string,
        });
      }
    }
    yield writes;
  }
}

export function writerName(writer: number): string {
  return `writer-${writer}`;
}

/**
 * The store's history, one Y.Doc per writer holding only that writer's slots. It is exact because a slot
 * key names its writer: nobody else ever writes or deletes it, so a writer's items (their keys, origins,
 * deletions) do not depend on which other items its document holds. What does depend on the others is
 * which own slots the writer prunes after a sync: every slot of a shard but the one with the greatest hlc,
 * the store's rule, applied here by the writer itself. With one write per tick (`now` = EPOCH_MS + tick)
 * every hlc is (tick, 0), as the store's clock gives. `replica()` is a real PlacementStore holding it all.
 */
export class StoreHistory {
  private readonly writers = Array.from({ length: WRITERS }, (_, i) => {
    const doc = new Y.Doc();
    return { doc, map: doc.getMap<SlotValue>(TYPE_NAME), node: writerName(i) };
  });
  // Per shard, the writers holding a live slot and the tick of that slot.
  private readonly live = new Map<number, Map<number, number>>();
  private tick = 0;

  round(writes: readonly Write[]): void {
    const touched = new Set<number>();
    for (const { writer, shardId, target } of writes) {
      const w = this.writers[writer] as (typeof this.writers)[number];
      const hlc = { wallMs: EPOCH_MS + ++this.tick, counter: 0, node: w.node };
      // One transaction per write, as PlacementStore.set does.
      w.doc.transact(() => w.map.set(slotKey(shardId, w.node), encodeSlotValue(target, hlc)));
      let holders = this.live.get(shardId);
      if (holders === undefined) this.live.set(shardId, (holders = new Map()));
      holders.set(writer, this.tick);
      touched.add(shardId);
    }
    const prunes = this.writers.map((): number[] => []);
    for (const shardId of touched) {
      const holders = this.live.get(shardId) as Map<number, number>;
      let newest = -1;
      for (const [writer, tick] of holders) if (newest < 0 || tick > (holders.get(newest) as number)) newest = writer;
      for (const writer of [...holders.keys()]) {
        if (writer === newest) continue;
        (prunes[writer] as number[]).push(shardId);
        holders.delete(writer);
      }
    }
    // A writer prunes in one transaction per sync, as the store does per applied update.
    prunes.forEach((shardIds, writer) => {
      const w = this.writers[writer] as (typeof this.writers)[number];
      if (shardIds.length > 0)
        w.doc.transact(() => shardIds.forEach((shardId) => w.map.delete(slotKey(shardId, w.node))));
    });
  }

  get now(): number {
    return EPOCH_MS + this.tick;
  }

  /**
   * A real store that has applied every writer's state: what each replica holds after the sync. It never
   * compacts by itself, so that the history is measured as written (S4 measures a compacted copy apart).
   */
  replica(): PlacementStore {
    const now = this.now;
    const replica = new PlacementStore({ node: 'replica', now: () => now, compactAfterItems: Infinity });
    for (const { doc } of this.writers)
      replica.applyUpdate(encodeWireUpdate(0, undefined, Y.encodeStateAsUpdateV2(doc)));
    return replica;
  }

  destroy(): void {
    for (const { doc } of this.writers) doc.destroy();
  }
}

/** The reference: WRITERS real PlacementStores, each write a `set`, synced through writer 0 after every round. */
export function replicatedStoreHistory(overwrites: number, seed: number): PlacementStore {
  let tick = 0;
  const now = (): number => EPOCH_MS + tick;
  const stores = Array.from(
    { length: WRITERS },
    (_, i) => new PlacementStore({ node: writerName(i), now, compactAfterItems: Infinity }),
  );
  const [hub, ...others] = stores as [PlacementStore, ...PlacementStore[]];
  const sync = (): void => {
    for (const store of others) hub.applyUpdate(store.encodeDiff(hub.encodeStateVector()));
    for (const store of others) store.applyUpdate(hub.encodeDiff(store.encodeStateVector()));
  };
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
  return hub;
}

/**
 * Item-by-item comparison of two store states, with Yjs client ids (random per document) replaced by the
 * writer named in their slot keys and merged structs split into single items. Returns the differences.
 */
export function compareStoreStates(
  a: Uint8Array,
  b: Uint8Array,
): { readonly items: number; readonly differences: number } {
  const left = describeItems(documentOf(a));
  const right = describeItems(documentOf(b));
  let differences = Math.abs(left.size - right.size);
  for (const [id, item] of left) if (right.get(id) !== item) differences++;
  return { items: left.size, differences };
}

function documentOf(update: Uint8Array): Uint8Array {
  return decodeWireUpdate(update, Number.MAX_SAFE_INTEGER).doc ?? new Uint8Array([0, 0]);
}

function describeItems(update: Uint8Array): Map<string, string> {
  const { structs, ds } = Y.decodeUpdateV2(update);
  const writerOf = new Map<number, string>();
  for (const struct of structs) {
    if (struct instanceof Y.Item && struct.parentSub !== null)
      writerOf.set(struct.id.client, struct.parentSub.split('\u0000')[1] ?? '?');
  }
  const name = (client: number, clock: number): string => `${writerOf.get(client) ?? `client ${client}`}:${clock}`;
  const deleted = new Set<string>();
  for (const [client, ranges] of ds.clients) {
    for (const { clock, len } of ranges) for (let c = clock; c < clock + len; c++) deleted.add(name(client, c));
  }
  const items = new Map<string, string>();
  for (const struct of structs) {
    for (let i = 0; i < struct.length; i++) {
      const id = name(struct.id.client, struct.id.clock + i);
      if (!(struct instanceof Y.Item)) {
        items.set(id, struct.constructor.name);
        continue;
      }
      const origin =
        i > 0
          ? name(struct.id.client, struct.id.clock + i - 1)
          : struct.origin && name(struct.origin.client, struct.origin.clock);
      const value: unknown = struct.content instanceof Y.ContentAny ? struct.content.arr[i] : null;
      items.set(id, JSON.stringify([struct.parentSub, origin, struct.rightOrigin, deleted.has(id), value]));
    }
  }
  return items;
}

/** The exactness check: the written history against the replicated one, after `overwrites` writes. */
export function checkStoreHistory(
  overwrites: number,
  seed: number,
): { readonly items: number; readonly differences: number } {
  const history = new StoreHistory();
  for (const writes of workload(overwrites, seed)) history.round(writes);
  const written = history.replica();
  history.destroy();
  const replicated = replicatedStoreHistory(overwrites, seed);
  return compareStoreStates(written.encodeDiff(EMPTY_STATE_VECTOR), replicated.encodeDiff(EMPTY_STATE_VECTOR));
}

/** A plain Y.Map value: `[target, wallMs, writer]`, one key per shard. */
export type YMapValue = readonly [string, number, string];

/**
 * The plain Y.Map baseline's history in one document, each writer's writes under its own client id. Its
 * keys are shared, so the exact per-writer construction does not apply; here a writer sees the batches
 * written before its own in the same round, where replicas would see them only at the sync. There are as
 * many items, deletions and keys as with replicas; the state is a little smaller (fewer concurrent
 * origins to encode), by the ratio `checkYMapHistory` reports in every run.
 */
export class YMapHistory {
  readonly doc = new Y.Doc();
  private readonly map = this.doc.getMap<YMapValue>(TYPE_NAME);
  private readonly clientIds: readonly number[];
  private tick = 0;

  constructor(seed: number) {
    const random = seededRandom(seed + 1);
    this.clientIds = Array.from({ length: WRITERS }, () => Math.floor(random() * 2 ** 32));
  }

  round(writes: readonly Write[]): void {
    for (const { writer, shardId, target } of writes) {
      this.doc.clientID = this.clientIds[writer] as number;
      this.map.set(String(shardId), [target, EPOCH_MS + ++this.tick, writerName(writer)]);
    }
  }

  clientId(writer: number): number {
    return this.clientIds[writer] as number;
  }
}

/** The reference: WRITERS Y.Docs with the same client ids, synced through writer 0 after every round. */
export function replicatedYMapHistory(overwrites: number, seed: number): Y.Doc {
  const ids = new YMapHistory(seed);
  const docs = Array.from({ length: WRITERS }, (_, i) => {
    const doc = new Y.Doc();
    doc.clientID = ids.clientId(i);
    return { doc, map: doc.getMap<YMapValue>(TYPE_NAME) };
  });
  const [hub, ...others] = docs.map(({ doc }) => doc) as [Y.Doc, ...Y.Doc[]];
  const sync = (): void => {
    for (const doc of others) Y.applyUpdateV2(hub, Y.encodeStateAsUpdateV2(doc, Y.encodeStateVector(hub)));
    for (const doc of others) Y.applyUpdateV2(doc, Y.encodeStateAsUpdateV2(hub, Y.encodeStateVector(doc)));
  };
  let tick = 0;
  for (const writes of workload(overwrites, seed)) {
    for (const { writer, shardId, target } of writes)
      (docs[writer] as (typeof docs)[number]).map.set(String(shardId), [target, EPOCH_MS + ++tick, writerName(writer)]);
    sync();
  }
  for (const doc of others) doc.destroy();
  return hub;
}

/** Encoded state of the one-document Y.Map history relative to the replicated one, after `overwrites` writes. */
export function checkYMapHistory(
  overwrites: number,
  seed: number,
): { readonly stateRatio: number; readonly items: number; readonly replicatedItems: number } {
  const history = new YMapHistory(seed);
  for (const writes of workload(overwrites, seed)) history.round(writes);
  const replicated = replicatedYMapHistory(overwrites, seed);
  const written = Y.encodeStateAsUpdateV2(history.doc);
  const reference = Y.encodeStateAsUpdateV2(replicated);
  const count = (update: Uint8Array): number => Y.decodeUpdateV2(update).structs.reduce((n, s) => n + s.length, 0);
  const result = {
    stateRatio: written.length / reference.length,
    items: count(written),
    replicatedItems: count(reference),
  };
  history.doc.destroy();
  replicated.destroy();
  return result;
}
