// Which packed chunks a shard moving on goes with as the very bytes they came in (no state copied): a new host
// holds its states as views of the chunks they arrived in (held-state.ts), and most of them are still held,
// unchanged, when the shard moves again (a shard of a thousand entities of which a few woke). A chunk goes on as
// it came when at most a quarter of its bytes are entries this host no longer holds from it (an entity that
// woke, was passivated, whose sends changed, or whose later entry came in a later part): each of those is stated
// again after every chunk that goes as it came (its current state, its sends, or an empty state: fresh), and the
// new host's rule that an entity's entry in a later part wins (state-transfer.ts, sortedOut) makes the stale
// entry harmless. Chunks go in the order of the parts they came as, so an entity in two of them keeps its winner.
import { PACKED_HEADER_BYTES } from '../protocol/packed-states.js';
import type { ProcessedSends } from './dedup-table.js';
import type { StateLimits } from '../core/config.js';
import { NO_SENDS, reshipState, type ArrivedChunk, type HeldSnapshot } from './held-state.js';

/** A chunk that goes on as it came, with the states this host still holds from it unchanged. */
export interface ReshippedChunk {
  readonly arrived: ArrivedChunk;
  /** The held states of which the chunk's bytes are the current ones (every other entry in it is superseded). */
  readonly held: HeldSnapshot[];
  /** How many of `held` hold a value (not only the sends their entity processed). */
  values: number;
  /** Bytes of the chunk's entries that are current: `held`'s states, ids and lengths. */
  currentBytes: number;
}

/** Bytes of an entry's lengths in a packed chunk beside its id and state: u16 id length, u32 state length. */
const ENTRY_LENGTHS = 6;

/**
 * The snapshots sorted out: the chunks that go on as they came, in the order of the parts they came as, and
 * every other snapshot (an entity's own, a held state that changed here or whose chunk is packed again).
 */
export function sortOut<T extends { readonly entityId: string }>(
  snapshots: ReadonlyArray<T | HeldSnapshot>,
  sends: ReadonlyMap<string, ReadonlyArray<ProcessedSends>>,
  limits: StateLimits,
): { readonly whole: ReshippedChunk[]; readonly rest: Array<T | HeldSnapshot> } {
  const runs = new Map<ArrivedChunk, ReshippedChunk>();
  const rest: Array<T | HeldSnapshot> = [];
  let run: ReshippedChunk | undefined;
  for (const snapshot of snapshots) {
    const arrived = 'held' in snapshot ? snapshot.held.chunk : undefined;
    if (arrived === undefined || !unchangedHere(snapshot as HeldSnapshot, sends, limits)) {
      rest.push(snapshot);
      continue;
    }
    // A chunk's states are mostly next to one another: the last one's run is tried before the map.
    if (run?.arrived !== arrived) run = runs.get(arrived);
    if (run === undefined) {
      run = { arrived, held: [], values: 0, currentBytes: 0 };
      runs.set(arrived, run);
    }
    const { held, entityId } = snapshot as HeldSnapshot;
    run.held.push(snapshot as HeldSnapshot);
    if (held.value !== undefined) run.values++;
    // The id's UTF-16 length for its UTF-8 bytes: exact for ASCII, under for others (their chunk then looks more
    // superseded than it is, and is packed again sooner).
    run.currentBytes += held.bytes.length + entityId.length + ENTRY_LENGTHS;
  }
  const whole: ReshippedChunk[] = [];
  for (const candidate of [...runs.values()].sort((a, b) => a.arrived.part - b.arrived.part)) {
    if (goesAsItCame(candidate, limits)) whole.push(candidate);
    else rest.push(...candidate.held);
  }
  return { whole, rest };
}

/** Whether a held state goes on as the bytes it came in: its sends unchanged here, its size within the limit. */
function unchangedHere(
  { entityId, held }: HeldSnapshot,
  sends: ReadonlyMap<string, ReadonlyArray<ProcessedSends>>,
  limits: StateLimits,
): boolean {
  if (held.value !== undefined && held.bytes.length > limits.maxEntitySnapshotBytes) return false;
  const current = sends.get(entityId);
  // Most held states carry no sends and the table kept none for them (reshipState would give their bytes).
  if (current === undefined && held.sends.length === 0) return held.value !== undefined;
  return reshipState(held, current ?? NO_SENDS) === held.bytes;
}

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
  return whole.some((run) => run.held.length !== run.arrived.entities.length);
}

/**
 * What must be stated again after the chunks that go as they came, so no superseded entry wins on the new
 * host: per entity, the held state to restate (its current entry is in an earlier chunk, which the stale one
 * would follow), or undefined for an empty state (the entity starts fresh there). Entities `written` after
 * these chunks, or whose current entry is in a later chunk that goes as it came, need nothing.
 */
export function toRestate(
  whole: ReadonlyArray<ReshippedChunk>,
  written: ReadonlySet<string>,
): Map<string, HeldSnapshot | undefined> {
  const restate = new Map<string, HeldSnapshot | undefined>();
  if (!carriesSuperseded(whole)) return restate;
  // Each superseded entry's entity (few: the entities that woke) with the last chunk that carries one of it.
  const stale = new Map<string, number>();
  whole.forEach((run, at) => {
    if (run.held.length === run.arrived.entities.length) return;
    const current = new Set(run.held.map((snapshot) => snapshot.entityId));
    for (const { entityId } of run.arrived.entities)
      if (!current.has(entityId) && !written.has(entityId)) stale.set(entityId, at);
  });
  // Where each of them is current, if in a chunk that goes as it came: after its last stale entry, nothing to do.
  const current = new Map<string, { readonly at: number; readonly snapshot: HeldSnapshot }>();
  whole.forEach((run, at) => {
    for (const snapshot of run.held) if (stale.has(snapshot.entityId)) current.set(snapshot.entityId, { at, snapshot });
  });
  for (const [entityId, staleAt] of stale) {
    const entry = current.get(entityId);
    if (entry === undefined || entry.at < staleAt) restate.set(entityId, entry?.snapshot);
  }
  return restate;
}
