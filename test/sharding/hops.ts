// The hops of a shard's state between hosts, for the tests of chunks that go on as they came (reshipped-chunks
// .test.ts): an old host packs what its stopped shard had (after any chunks it sent ahead of the stop), a new
// host (the real StateTransfer) reads every chunk off the wire, and what it then holds is read back as values.
import { expect } from 'vitest';
import { decodeValue } from '../../src/cluster/transport/message-codec.js';
import { silentLogger } from '../../src/logging.js';
import { unpackEntities } from '../../src/sharding/protocol/packed-states.js';
import { MAX_ENTITIES_PER_CHUNK } from '../../src/sharding/protocol/state-messages.js';
import { MAX_ENTITY_ID_LENGTH } from '../../src/sharding/protocol/entity-messages.js';
import type { ProcessedSends } from '../../src/sharding/region/dedup-table.js';
import { HeldStates, outlineOf, type ArrivedChunk, type HeldLeft } from '../../src/sharding/region/held-state.js';
import { knownWhole } from '../../src/sharding/region/reshipped-chunks.js';
import {
  packSnapshots,
  type PackedChunk,
  type StoppedStates,
  type TakenSnapshot,
} from '../../src/sharding/region/shard-state.js';
import { StateTransfer } from '../../src/sharding/region/state-transfer.js';

export const LIMITS = { maxEntitySnapshotBytes: 100_000, stateChunkBytes: 3_000 };
export const READ_LIMITS = { maxEntities: MAX_ENTITIES_PER_CHUNK, maxEntityIdLength: MAX_ENTITY_ID_LENGTH };
export const sendsOf = (n: number): ProcessedSends[] => [
  { node: 'sys@127.0.0.1:7001', incarnation: 3, done: [n + 1], failed: [] },
];
export type Sends = Map<string, ReadonlyArray<ProcessedSends>>;
/** What a host has of an entity: its value (undefined: none) and the sends it processed. */
export type Contents = Map<string, { readonly value: unknown; readonly sends: ReadonlyArray<ProcessedSends> }>;

/** Chunks sent ahead of the stop (StateTransfer.early): the first parts of the transfer. */
export interface Early {
  readonly chunks: ReadonlyArray<PackedChunk>;
  readonly sent: ReadonlySet<ArrivedChunk>;
}
export const NO_EARLY: Early = { chunks: [], sent: new Set() };

/**
 * One hand-off: the old host packs (after its `early` chunks), a new host (the real StateTransfer) receives every
 * chunk off the wire.
 */
export function hop(stopped: StoppedStates, sends: Sends, transferId = 1, early: Early = NO_EARLY) {
  const out: Array<[PackedChunk, boolean]> = early.chunks.map((chunk) => [chunk, false]);
  const packed = packSnapshots(stopped, LIMITS, sends, (chunk, last) => out.push([chunk, last]), early.sent);
  const transfer = new StateTransfer({
    typeName: 'T',
    config: { ...LIMITS, maxHandOffStateBytes: 100_000_000, handOffTimeoutMs: 60_000 },
    logger: silentLogger(),
  });
  out.forEach(([chunk, last], part) => {
    // As the wire gives it: the entities read from the packed bytes.
    const entities = unpackEntities(chunk.packed, READ_LIMITS);
    if (entities === undefined) throw new Error('a chunk that does not read');
    const place = last ? { last: true as const } : {};
    transfer.received({
      type: 'RestoreShardState',
      typeName: 'T',
      shardId: 1,
      transferId,
      part,
      ...place,
      entities,
      packed: chunk.packed,
    });
  });
  // Nothing to ship (no state, no sends) sends no chunk: the new host starts the shard fresh.
  if (out.length > 0) expect(transfer.expect(1, transferId, 0)).toBe('ready');
  const restored = out.length > 0 ? transfer.restore(1) : undefined;
  const held: HeldLeft = restored?.states.drain() ?? {
    states: new Map(),
    chunks: [],
    intact: new Map(),
    withSends: [],
  };
  const sendsThere: Sends = new Map(restored?.sends ?? []);
  return { out, packed, held, sends: sendsThere };
}

/**
 * A shard's stop on the new host: `snapshots` of its woken entities, and the held states of those `kept` (all),
 * the others woken first (as a real shard's entities are, however they end: `reversed` holds them in the other
 * order).
 */
export function stop(
  held: HeldLeft,
  snapshots: TakenSnapshot[] = [],
  kept: (entityId: string) => boolean = () => true,
  reversed = false,
): StoppedStates {
  const entries = reversed ? [...held.states].reverse() : [...held.states];
  const states = new HeldStates(new Map(entries), () => {}, held.chunks, held.intact, held.withSends);
  for (const [entityId] of entries) if (!kept(entityId)) states.wake(entityId);
  return { snapshots, held: states.drain() };
}

/**
 * A shard's stop as `stop`'s, its held chunks known to go as they came (knownWhole, what StateTransfer.early sends)
 * sent ahead of it once the entities not `keptThen` woke: the others not `kept` wake between the early send and
 * the stop, and the sends the stop packs may have changed since.
 */
export function stopAfterEarly(
  held: HeldLeft,
  snapshots: TakenSnapshot[],
  kept: (entityId: string) => boolean,
  keptThen: (entityId: string) => boolean,
): { readonly stopped: StoppedStates; readonly early: Early } {
  const states = new HeldStates(new Map(held.states), () => {}, held.chunks, held.intact, held.withSends);
  for (const [entityId] of held.states) if (!kept(entityId) && !keptThen(entityId)) states.wake(entityId);
  const whole = knownWhole(states.now(), LIMITS);
  const early = { chunks: whole.map(({ entities, packed }) => ({ entities, packed })), sent: new Set(whole) };
  for (const [entityId] of held.states) if (!kept(entityId)) states.wake(entityId);
  return { stopped: { snapshots, held: states.drain() }, early };
}

/** What the new host has: each held state's value, and the sends it restored (with a value or alone). */
export function contents({ held, sends }: { held: HeldLeft; sends: Sends }): Contents {
  const out: Contents = new Map();
  for (const [entityId, entry] of held.states) {
    const state = outlineOf(entry);
    const decoded = state.value && decodeValue(state.bytes.subarray(state.value.start, state.value.end));
    if (!decoded?.ok) throw new Error(`${entityId}: no value`);
    out.set(entityId, { value: decoded.value, sends: sends.get(entityId) ?? [] });
  }
  for (const [entityId, processed] of sends)
    if (!out.has(entityId)) out.set(entityId, { value: undefined, sends: processed });
  return out;
}

/**
 * Entities e0..e(n-1), each `bytes` long, with sends (every `sendsEvery`-th one, none for 0: the others are a
 * value alone, held as the entry they came in), fresh on a first host, then held on the next.
 */
export function firstHop(count: number, bytes = 200, sendsEvery = 1) {
  const values = Array.from({ length: count }, (_, i) => String.fromCharCode(97 + (i % 26)).repeat(bytes));
  const withSends = values.flatMap((_, i) => (sendsEvery > 0 && i % sendsEvery === 0 ? [i] : []));
  const sends: Sends = new Map(withSends.map((i) => [`e${i}`, sendsOf(i)]));
  const snapshots = values.map((value, i) => ({ entityId: `e${i}`, ok: true as const, value }));
  return { values, ...hop({ snapshots }, sends) };
}

export const lasts = (out: ReadonlyArray<[PackedChunk, boolean]>): boolean[] => out.map(([, last]) => last);
export const endsOnce = (out: ReadonlyArray<[PackedChunk, boolean]>): boolean[] =>
  out.map((_, i) => i === out.length - 1);
