// Which packed chunks a shard moving on goes with as the very bytes they came in (no state copied): a new host
// holds its states as views of the chunks they arrived in (held-state.ts), and most of them are still held,
// unchanged, when the shard moves again (a shard of a thousand entities of which a few woke). A chunk goes on as
// it came when at most a quarter of its bytes are entries this host no longer holds from it (an entity that
// woke, was passivated, whose sends changed, or whose later entry came in a later part): each of those is stated
// again after every chunk that goes as it came (its current state, its sends, or an empty state: fresh), and the
// new host's rule that an entity's entry in a later part wins (sorted-states.ts) makes the stale
// entry harmless. Chunks go in the order of the parts they came as, so an entity in two of them keeps its winner.
// A stopped shard's held states are sorted out from its chunks' entries: a chunk the start and the wakes know
// (which of its entries are superseded) without a look at them, any other by looking each entry up once and
// comparing identity (the entry held is the entry in the chunk). Nothing is made per state that goes on in its chunk.
import { PACKED_HEADER_BYTES, type WireEntityState } from '../protocol/packed-states.js';
import type { ProcessedSends } from './dedup-table.js';
import type { StateLimits } from '../core/config.js';
import {
  NO_SENDS,
  chunkOf,
  isEntryOf,
  isOutline,
  outlineOf,
  reshipState,
  type ArrivedChunk,
  type HeldEntry,
  type HeldLeft,
  type HeldSnapshot,
  type HeldState,
} from './held-state.js';

/** A chunk that goes on as it came, with which of its entries this host still holds unchanged. */
export interface ReshippedChunk {
  readonly arrived: ArrivedChunk;
  /** Per entry of the chunk, 1 when its bytes are the entity's current state here (every other one is superseded). */
  readonly current: Uint8Array;
  /** How many entries are current; each holds a value (a shard holds no state without one). */
  readonly count: number;
  /** Bytes of the chunk's entries that are current: their states, ids and lengths. */
  readonly currentBytes: number;
}

/** No chunk sent ahead of the stop. */
export const NONE_SENT: ReadonlySet<ArrivedChunk> = new Set();

/** Bytes of an entry's lengths in a packed chunk beside its id and state: u16 id length, u32 state length. */
const ENTRY_LENGTHS = 6;

/**
 * The snapshots and the states a stopped shard still held (`held`) sorted out: the chunks that go on as they
 * came, in the order of the parts they came as, and every other snapshot (an entity's own, a held state that
 * changed here or whose chunk is packed again). A known chunk's entries are not looked at; any other chunk's are
 * looked up once each: no object is made for a state that goes on in its chunk. The chunks `sent` ahead of the
 * stop (region-host.ts) went as they came whatever they hold now: they come first, in the order they went, so
 * what they carry that is no longer current is stated again after them like any stale entry (toRestate).
 */
export function sortOut<T extends { readonly entityId: string }>(
  snapshots: ReadonlyArray<T | HeldSnapshot>,
  held: HeldLeft | undefined,
  sends: ReadonlyMap<string, ReadonlyArray<ProcessedSends>>,
  limits: StateLimits,
  sent: ReadonlySet<ArrivedChunk> = NONE_SENT,
): { readonly whole: ReshippedChunk[]; readonly rest: Array<T | HeldSnapshot> } {
  const rest: Array<T | HeldSnapshot> = [...snapshots];
  const early: ReshippedChunk[] = [];
  const whole: ReshippedChunk[] = [];
  if (held === undefined || (held.states.size === 0 && sent.size === 0)) return { whole, rest };
  let found = 0;
  const touched = touchedBy(sends, held, limits);
  for (const arrived of held.chunks) {
    const superseded = knownEntries(arrived, held, touched, limits);
    const run =
      superseded === undefined
        ? runOf(arrived, held.states, (changed) => rest.push(changed))
        : intactRun(arrived, superseded);
    found += run.found;
    if (sent.has(arrived)) early.push(run);
    else if (goesOn(run, limits)) whole.push(run);
    else for (const snapshot of currentOf(run, held.states)) rest.push(snapshot);
  }
  // States that came listed (protocol 7) are in no chunk.
  if (found < held.states.size)
    for (const [entityId, entry] of held.states)
      if (isOutline(entry) && entry.chunk === undefined) rest.push({ entityId, ok: true, held: entry });
  return { whole: [...early, ...whole], rest };

  /**
   * A chunk's entries this host still holds from it: each unchanged one marked current, each changed one given
   * to `changed`; `found` counts both.
   */
  function runOf(
    arrived: ArrivedChunk,
    states: ReadonlyMap<string, HeldEntry>,
    changed: (snapshot: HeldSnapshot) => void,
  ): ReshippedChunk & { found: number } {
    const { entities } = arrived;
    const current = new Uint8Array(entities.length);
    let found = 0;
    for (let i = 0; i < entities.length; i++) {
      const entry = entities[i] as WireEntityState;
      const state = states.get(entry.entityId);
      if (state === undefined || !isEntryOf(state, entry)) continue;
      found++;
      if (unchangedHere(entry.entityId, state, sends, limits)) current[i] = 1;
      else changed({ entityId: entry.entityId, ok: true, held: outlineOf(state, arrived) });
    }
    return { ...asRun(arrived, current), found };
  }
}

/**
 * The held chunks known to go on as they came by what the shard's start and its wakes noted alone (HeldLeft's
 * `intact`), without a look at their entries or at the dedup table: those a shard about to move sends ahead of its
 * stop (StateTransfer.early). Cheap by design, not exact: the stop sorts every one of them out again (`sent`), so
 * an entry that is not current by then (its sends changed, its entity woke) is stated again after them.
 */
export function knownWhole(held: HeldLeft, limits: StateLimits): ArrivedChunk[] {
  return held.chunks.filter((arrived) => {
    const superseded = knownEntries(arrived, held, NONE_TOUCHED, limits);
    return superseded !== undefined && goesOn(intactRun(arrived, superseded), limits);
  });
}

/** No chunk touched by a change of sends (knownWhole does not look at them). */
const NONE_TOUCHED: ReadonlySet<ArrivedChunk> = new Set();

/**
 * The indexes of a chunk's superseded entries when every other one is current and unchanged here without a look
 * at them: known (HeldLeft's `intact`), no changed state of it in the dedup table's `sends` (`touched`: the chunks
 * of those; all when too many to look up), and no entry of it over maxEntitySnapshotBytes (the chunk is not
 * larger). Undefined when its entries must be looked up.
 */
function knownEntries(
  arrived: ArrivedChunk,
  held: HeldLeft,
  touched: ReadonlySet<ArrivedChunk> | 'all',
  limits: StateLimits,
): ReadonlyArray<number> | undefined {
  const superseded = held.intact.get(arrived);
  if (superseded === undefined || touched === 'all' || touched.has(arrived)) return undefined;
  return arrived.packed.length <= limits.maxEntitySnapshotBytes ? superseded : undefined;
}

/**
 * The chunks holding a state that may have changed here: one whose entity the dedup table has sends of, or whose
 * state carried sends at the start, unless those are the sends the table has now (unchangedHere). `all` when
 * finding them (a lookup and a walk of the chunks per such entity) would cost more than looking every held state
 * up.
 */
function touchedBy(
  sends: ReadonlyMap<string, ReadonlyArray<ProcessedSends>>,
  held: HeldLeft,
  limits: StateLimits,
): ReadonlySet<ArrivedChunk> | 'all' {
  const touched = new Set<ArrivedChunk>();
  if (held.intact.size === 0 || (sends.size === 0 && held.withSends.length === 0)) return touched;
  if ((sends.size + held.withSends.length) * held.chunks.length > held.states.size) return 'all';
  const check = (entityId: string): void => {
    const entry = held.states.get(entityId);
    if (entry === undefined) return;
    const chunk = chunkOf(entry, held.chunks);
    if (chunk !== undefined && !unchangedHere(entityId, entry, sends, limits)) touched.add(chunk);
  };
  for (const entityId of sends.keys()) check(entityId);
  for (const entityId of held.withSends) check(entityId);
  return touched;
}

/** A chunk whose entries are known as a run: every entry current but the `superseded`. */
function intactRun(arrived: ArrivedChunk, superseded: ReadonlyArray<number>): ReshippedChunk & { found: number } {
  const current = new Uint8Array(arrived.entities.length).fill(1);
  for (const at of superseded) current[at] = 0;
  const run = asRun(arrived, current);
  return { ...run, found: run.count };
}

/**
 * A chunk as a run, its `current` entries marked: their count, and their bytes (the chunk's entries less each other
 * entry's exact size: its state, its id in UTF-8, its lengths), so only the few superseded entries are measured.
 */
function asRun(arrived: ArrivedChunk, current: Uint8Array): ReshippedChunk {
  let count = 0;
  let currentBytes = arrived.packed.length - PACKED_HEADER_BYTES;
  arrived.entities.forEach((entry, i) => {
    if (current[i] === 1) count++;
    else currentBytes -= entry.state.length + Buffer.byteLength(entry.entityId) + ENTRY_LENGTHS;
  });
  return { arrived, current, count, currentBytes };
}

/** The current entries of a chunk that does not go as it came, as snapshots to pack one by one. */
function currentOf(run: ReshippedChunk, states: ReadonlyMap<string, HeldEntry>): HeldSnapshot[] {
  const snapshots: HeldSnapshot[] = [];
  run.arrived.entities.forEach(({ entityId }, i) => {
    if (run.current[i] === 1)
      snapshots.push({ entityId, ok: true, held: outlineOf(states.get(entityId) as HeldEntry, run.arrived) });
  });
  return snapshots;
}

/**
 * Whether a held state goes on as the bytes it came in: its sends unchanged here, its size within the limit. A
 * plain entry (a value without sends) is, unless the dedup table holds sends of its entity.
 */
function unchangedHere(
  entityId: string,
  state: HeldEntry,
  sends: ReadonlyMap<string, ReadonlyArray<ProcessedSends>>,
  limits: StateLimits,
): boolean {
  const current = sends.size === 0 ? undefined : sends.get(entityId);
  if (!isOutline(state)) return current === undefined && state.state.length <= limits.maxEntitySnapshotBytes;
  return unchangedOutline(state, current, limits);
}

/** Whether an outlined held state goes on as it came, given the sends the dedup table kept of its entity. */
function unchangedOutline(
  held: HeldState,
  current: ReadonlyArray<ProcessedSends> | undefined,
  limits: StateLimits,
): boolean {
  if (held.value !== undefined && held.bytes.length > limits.maxEntitySnapshotBytes) return false;
  if (current === undefined && held.sends.length === 0) return held.value !== undefined;
  return reshipState(held, current ?? NO_SENDS) === held.bytes;
}

/** Whether a run goes on as the chunk it came in: it holds a current entry, and goesAsItCame. */
const goesOn = (run: ReshippedChunk, limits: StateLimits): boolean => run.count > 0 && goesAsItCame(run, limits);

/**
 * Whether the chunk goes on as it came: within this node's chunk budget (a chunk of one entity always is: its
 * size was checked as a state's), and no more than a quarter of its bytes superseded (so a chunk most of whose
 * entities woke is packed again, and superseded bytes do not pile up hop after hop).
 */
function goesAsItCame({ arrived, currentBytes }: ReshippedChunk, limits: StateLimits): boolean {
  const entries = arrived.packed.length - PACKED_HEADER_BYTES;
  if (arrived.entities.length > 1 && entries > limits.stateChunkBytes) return false;
  return 4 * Math.max(0, entries - currentBytes) <= entries;
}

/** Whether some chunk that goes as it came carries an entry this host no longer holds from it. */
export function carriesSuperseded(whole: ReadonlyArray<ReshippedChunk>): boolean {
  return whole.some((run) => run.count !== run.arrived.entities.length);
}

/**
 * What must be stated again after the chunks that go as they came, so no superseded entry wins on the new
 * host: per entity, the held state to restate (its current entry is in an earlier chunk, which the stale one
 * would follow), or undefined for an empty state (the entity starts fresh there). Entities `written` after
 * these chunks, or whose current entry is in a later chunk that goes as it came, need nothing. `states`: what
 * the shard held (HeldLeft's).
 */
export function toRestate(
  whole: ReadonlyArray<ReshippedChunk>,
  written: ReadonlySet<string>,
  states: ReadonlyMap<string, HeldEntry>,
): Map<string, HeldSnapshot | undefined> {
  const restate = new Map<string, HeldSnapshot | undefined>();
  if (!carriesSuperseded(whole)) return restate;
  // Each superseded entry's entity (few: the entities that woke) with the last chunk that carries one of it.
  const stale = new Map<string, number>();
  whole.forEach((run, at) => {
    if (run.count === run.arrived.entities.length) return;
    run.arrived.entities.forEach(({ entityId }, i) => {
      if (run.current[i] === 0 && !written.has(entityId)) stale.set(entityId, at);
    });
  });
  // Where each of them is current, if in a chunk that goes as it came: after its last stale entry, nothing to do.
  for (const [entityId, staleAt] of stale) {
    const state = states.get(entityId);
    const at = state === undefined ? -1 : currentIn(whole, state);
    if (at >= staleAt) continue;
    restate.set(
      entityId,
      state && at >= 0 ? { entityId, ok: true, held: outlineOf(state, whole[at]?.arrived) } : undefined,
    );
  }
  return restate;
}

/** Which chunk that goes as it came has `state` as a current entry (found by its chunk, then in it), or -1. */
function currentIn(whole: ReadonlyArray<ReshippedChunk>, state: HeldEntry): number {
  const chunk = chunkOf(
    state,
    whole.map((run) => run.arrived),
  );
  const at = whole.findIndex((run) => run.arrived === chunk);
  const run = whole[at];
  const i = run === undefined ? -1 : run.arrived.entities.findIndex((entry) => isEntryOf(state, entry));
  return run !== undefined && run.current[i] === 1 ? at : -1;
}
