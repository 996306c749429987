// Entity state across a graceful hand-off, on the region's side. The old host encodes each entity's snapshot
// once (bounded per entity), packs them into chunks under a byte budget so no transfer is one frame over the
// transport's limit, and the new host assembles one transfer's chunks (incoming-states.ts) and, when the shard
// starts, holds each entity's state until its first message (held-state.ts). Each state travels as its own bytes:
// one entity's bad state costs that entity alone. The sends an entity processed (dedup-table.ts) travel in the
// same bytes, also for an entity without state. A state still held when the shard moves again travels on as it came, and a
// chunk most of whose states did not change since it came travels on as that chunk (reshipped-chunks.ts).
import { encodeMessage, encodeValueScratch } from '../../cluster/transport/message-codec.js';
import { PACKED_HEADER_BYTES, PackedWriter } from '../protocol/packed-states.js';
import type { ProcessedSends } from './dedup-table.js';
import type { StateLimits } from '../core/config.js';
import {
  SNAPSHOT,
  reshipState,
  type ArrivedChunk,
  type HeldLeft,
  type HeldSnapshot,
  type HeldState,
} from './held-state.js';
import { NONE_SENT, carriesSuperseded, sortOut, toRestate, type ReshippedChunk } from './reshipped-chunks.js';

/** One entity's encoded snapshot. */
export interface EntityState {
  readonly entityId: string;
  readonly state: Uint8Array;
}

/**
 * What became of one entity's state at a hand-off (the label of `actor_ts_entity_snapshots_total`). `restored`
 * is counted when the new host accepts the state at the shard's start (checked, held for the entity until its
 * first message there); a value that then cannot be decoded is counted `failed` as well. A state never woken
 * on a host is `restored` there and `shipped` again from there, like one that was.
 */
export type SnapshotOutcome = 'shipped' | 'restored' | 'too_large' | 'failed' | 'lost';

/** A snapshot as the entity gave it: its value, or why it could not; or the state held for an entity never woken. */
export type TakenSnapshot =
  | ({ readonly entityId: string } & (
      { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string }
    ))
  | HeldSnapshot;

/**
 * What a stopped shard hands over: the snapshots its entities took (after their last messages), and the states
 * it still held for entities never woken on it, with the chunks those came in (held-state.ts).
 */
export interface StoppedStates {
  readonly snapshots: ReadonlyArray<TakenSnapshot>;
  readonly held?: HeldLeft | undefined;
}

/** One chunk of a shard's states: its entities, each state a view of `packed` (their one copy, protocol 8's wire). */
export interface PackedChunk {
  readonly entities: ReadonlyArray<EntityState>;
  readonly packed: Uint8Array;
}

export interface PackedStates {
  readonly chunks: PackedChunk[];
  readonly bytes: number;
  /** Entities whose state is shipped (the others in `chunks` carry only the sends they processed). */
  readonly values: number;
  /** Entities that start fresh on the new host, with why. */
  readonly refused: ReadonlyArray<{
    readonly entityId: string;
    readonly outcome: 'too_large' | 'failed';
    readonly detail: string;
  }>;
}

/** Per entity in a chunk, beyond its id and state: msgpack map and key overhead, generously. */
const ENTRY_OVERHEAD = 32;

/**
 * Encodes and chunks a shard's snapshots and the sends its entities processed (`sends`, by entity); an
 * entity with neither a value (undefined: nothing to keep) nor sends is skipped. Each chunk goes to `onChunk`
 * as soon as it is full (`last`: the final one), so its sender need not wait for the rest to be packed. A chunk
 * whose held states mostly did not change here goes on as it came (reshipped-chunks.ts), ahead of the states
 * packed one by one, which state again whatever it carries that is no longer current. The chunks `sent` ahead of
 * the stop (StateTransfer.early) count as such chunks, gone already: what follows them is the rest of their transfer.
 */
export function packSnapshots(
  { snapshots, held }: StoppedStates,
  limits: StateLimits,
  sends: ReadonlyMap<string, ReadonlyArray<ProcessedSends>> = new Map(),
  onChunk: (chunk: PackedChunk, last: boolean) => void = () => {},
  sent: ReadonlySet<ArrivedChunk> = NONE_SENT,
): PackedStates {
  const { whole, rest } = sortOut(snapshots, held, sends, limits, sent);
  const sendsOnly = onlySends(rest, held, sends);
  const firstBytes = firstChunkBytes(rest, sendsOnly.length + superseded(whole), limits);
  const packer = new ChunkPacker(limits, sends, onChunk, carriesSuperseded(whole), firstBytes);
  const states = held?.states ?? new Map();
  // With nothing to pack, what must be stated again is known before the first chunk goes: none, and the last
  // chunk that goes as it came is the final one.
  const restate = rest.length === 0 && sendsOnly.length === 0 ? toRestate(whole, packer.written, states) : undefined;
  // The chunks that go as they came go first: the new host reads them while the rest is packed. Those sent
  // ahead of the stop are counted, not sent again.
  whole.forEach((chunk, i) =>
    packer.ship(chunk, restate?.size === 0 && i === whole.length - 1, sent.has(chunk.arrived)),
  );
  for (const snapshot of rest) packer.take(snapshot);
  for (const entityId of sendsOnly) packer.sendsOf(entityId);
  return packer.finish(restate ?? toRestate(whole, packer.written, states));
}

/**
 * The memory the first chunk packed one state at a time starts with: what the held states among `rest` take,
 * and an entry of SMALL_ENTRY_BYTES for each other (a snapshot, whose size is known once encoded; sends alone;
 * a superseded entry stated again: `others`), at most a whole chunk's; the writer grows for more. After chunks
 * that went as they came that chunk is mostly a few states: its memory is fresh from the kernel, each page
 * faulted in when first written, and a whole chunk's for a few states cost more than packing them (S10).
 */
function firstChunkBytes(rest: ReadonlyArray<TakenSnapshot>, others: number, limits: StateLimits): number {
  let bytes = PACKED_HEADER_BYTES + others * SMALL_ENTRY_BYTES;
  for (const snapshot of rest) {
    if (bytes >= limits.stateChunkBytes) break;
    const state = 'held' in snapshot ? snapshot.held.bytes.length : SMALL_ENTRY_BYTES;
    bytes += state + snapshot.entityId.length * 3 + ENTRY_OVERHEAD;
  }
  return Math.min(bytes, limits.stateChunkBytes);
}

/** Bytes reserved for an entry whose size is not known before it is packed (the writer grows for a longer one). */
const SMALL_ENTRY_BYTES = 256;

/** The entries of the chunks that go as they came that this host no longer holds from them. */
function superseded(whole: ReadonlyArray<ReshippedChunk>): number {
  let count = 0;
  for (const run of whole) count += run.arrived.entities.length - run.count;
  return count;
}

/**
 * The entities known only by the sends they processed: no snapshot of theirs is among `rest`, and the shard
 * held no state of theirs (a held state is in `rest` or current in a chunk that goes as it came).
 */
function onlySends(
  rest: ReadonlyArray<TakenSnapshot>,
  held: HeldLeft | undefined,
  sends: ReadonlyMap<string, ReadonlyArray<ProcessedSends>>,
): string[] {
  if (sends.size === 0) return [];
  // A set of the few entities with sends that have a snapshot, not of every snapshot.
  const taken = new Set<string>();
  for (const { entityId } of rest) if (sends.has(entityId)) taken.add(entityId);
  for (const entityId of sends.keys()) if (held?.states.has(entityId) === true) taken.add(entityId);
  return taken.size === sends.size ? [] : [...sends.keys()].filter((entityId) => !taken.has(entityId));
}

/** An entity's state with neither a value nor sends: the new host starts it fresh (a superseded entry's end). */
const EMPTY_STATE = encodeMessage({ type: SNAPSHOT });

/** The chunks of one hand-off's states as packSnapshots builds them: one entity at a time, or a whole chunk. */
class ChunkPacker {
  /** The entities written one by one, when a chunk that goes as it came carries superseded entries. */
  readonly written = new Set<string>();
  private readonly chunks: PackedChunk[] = [];
  private readonly refused: Array<PackedStates['refused'][number]> = [];
  private current: PackedWriter;
  private currentBytes = 0;
  private bytes = 0;
  private values = 0;
  private lastSent = false;
  /** Whether a chunk went as it came (sent now or ahead of the stop): the transfer then ends with a `last`. */
  private shipped = false;

  constructor(
    private readonly limits: StateLimits,
    private readonly sends: ReadonlyMap<string, ReadonlyArray<ProcessedSends>>,
    private readonly onChunk: (chunk: PackedChunk, last: boolean) => void,
    /** Whether `written` is kept (only superseded entries need it). */
    private readonly tracksWritten: boolean,
    /** The first chunk's memory (firstChunkBytes); each later one starts with a whole chunk's. */
    firstBytes: number,
  ) {
    this.current = new PackedWriter(firstBytes);
  }

  /** One snapshot: its value encoded, a held state reshipped, a failed one refused (its sends still go). */
  take(snapshot: TakenSnapshot): void {
    if ('held' in snapshot) this.add(snapshot.entityId, this.reship(snapshot.entityId, snapshot.held));
    else if (snapshot.ok) this.add(snapshot.entityId, this.encode(snapshot.entityId, snapshot.value));
    else {
      this.refused.push({ entityId: snapshot.entityId, outcome: 'failed', detail: snapshot.error });
      this.add(snapshot.entityId, this.encode(snapshot.entityId, undefined));
    }
  }

  /** An entity known only by the sends it processed. */
  sendsOf(entityId: string): void {
    this.add(entityId, this.encode(entityId, undefined));
  }

  /**
   * A chunk that goes on as it came, shipped before any snapshot is taken; `last` when nothing follows it. One
   * `sent` ahead of the stop is only counted: it went, and cannot say `last`, so a final chunk follows it.
   */
  ship({ arrived, count }: ReshippedChunk, last: boolean, sent: boolean): void {
    // `length`, not the byteLength getter (a call per use on Node 20), for each of the chunk's entries.
    for (const { state } of arrived.entities) this.bytes += state.length;
    this.values += count;
    this.shipped = true;
    if (sent) return;
    const chunk = { entities: arrived.entities, packed: arrived.packed };
    this.chunks.push(chunk);
    this.lastSent = last;
    this.onChunk(chunk, last);
  }

  /**
   * The entities whose superseded entries nothing after them states (`restate`: the current state to state
   * again, or none: an empty state), then the final chunk, empty when the rest wrote nothing after the chunks
   * that went as they came (the new host waits for a `last`).
   */
  finish(restate: ReadonlyMap<string, HeldSnapshot | undefined>): PackedStates {
    for (const [entityId, held] of restate) {
      const state = held === undefined ? EMPTY_STATE : reshipState(held.held, this.sends.get(entityId) ?? []);
      this.add(entityId, { state, withValue: false });
    }
    if (!this.lastSent && (this.current.count > 0 || this.shipped || this.chunks.length > 0)) {
      const final = this.current.finish();
      this.chunks.push(final);
      this.onChunk(final, true);
    }
    const { chunks, bytes, values, refused } = this;
    return { chunks, bytes, values, refused };
  }

  /** Refuses a state over maxEntitySnapshotBytes (true), its entity to start fresh on the new host. */
  private tooLarge(entityId: string, state: Uint8Array): boolean {
    const max = this.limits.maxEntitySnapshotBytes;
    if (state.byteLength <= max) return false;
    const detail = `${state.byteLength} bytes > maxEntitySnapshotBytes ${max}`;
    this.refused.push({ entityId, outcome: 'too_large', detail });
    return true;
  }

  /** The entity's bytes, and whether they hold its state (else only what it processed, or nothing). */
  private encode(entityId: string, value: unknown): Encoded {
    const processed = this.sends.get(entityId);
    if (value === undefined && processed === undefined) return { withValue: false };
    const entry = { type: SNAPSHOT, ...(value === undefined ? {} : { value }), ...(processed && { sends: processed }) };
    try {
      const state = encodeView(entry);
      if (value === undefined || !this.tooLarge(entityId, state)) return { state, withValue: value !== undefined };
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      this.refused.push({ entityId, outcome: 'failed', detail });
    }
    // The state stays behind; what the entity processed still travels.
    return this.encode(entityId, undefined);
  }

  /** A held state goes on as the bytes it came in, with what the dedup table kept of its sends spliced in. */
  private reship(entityId: string, held: HeldState): Encoded {
    const state = reshipState(held, this.sends.get(entityId) ?? []);
    if (state === undefined) return { withValue: false };
    if (held.value === undefined || !this.tooLarge(entityId, state))
      return { state, withValue: held.value !== undefined };
    return this.encode(entityId, undefined);
  }

  private add(entityId: string, { state, withValue }: Encoded): void {
    if (state === undefined) return;
    if (withValue) this.values++;
    const size = state.byteLength + entityId.length * 3 + ENTRY_OVERHEAD;
    // A state larger than a chunk travels alone: maxEntitySnapshotBytes is what keeps it under the frame limit.
    const { current, limits } = this;
    const full = current.count > 0 && this.currentBytes + size > limits.stateChunkBytes ? current.finish() : undefined;
    if (full !== undefined) {
      this.current = new PackedWriter(limits.stateChunkBytes);
      this.currentBytes = 0;
    }
    // Copied in before the full chunk (not the last) goes on: sending it encodes, over the scratch bytes of a state.
    this.current.add(entityId, state);
    if (this.tracksWritten) this.written.add(entityId);
    this.currentBytes += size;
    this.bytes += state.byteLength;
    if (full !== undefined) {
      this.chunks.push(full);
      this.onChunk(full, false);
    }
  }
}

/** An entity's bytes as packed, and whether they hold its state (else only what it processed, or nothing). */
interface Encoded {
  readonly state?: Uint8Array;
  readonly withValue: boolean;
}

/**
 * One entity's state encoded into the codec's scratch buffer: a view, valid until the next encoding, copied
 * into its chunk at once (a state of its own per entity cost an allocation each, most of the packing, S10).
 * An entry that cannot be encoded throws the codec's error naming it.
 */
function encodeView(entry: { readonly type: string }): Uint8Array {
  try {
    return encodeValueScratch(entry);
  } catch {
    return encodeMessage(entry);
  }
}
