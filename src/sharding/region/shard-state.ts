// Entity state across a graceful hand-off, on the region's side. The old host encodes each entity's snapshot
// once (bounded per entity), packs them into chunks under a byte budget so no transfer is one frame over the
// transport's limit, and the new host assembles one transfer's chunks and, when the shard starts, holds each
// entity's state until its first message (held-state.ts). Each state travels as its own bytes: one entity's
// bad state costs that entity alone. The sends an entity processed (dedup-table.ts) travel in the same bytes,
// also for an entity without state. A state still held when the shard moves again travels on as it came, and a
// chunk none of whose states changed since it came travels on as that chunk (no state copied).
import { encodeMessage, encodeValueScratch } from '../../cluster/transport/message-codec.js';
import { PACKED_HEADER_BYTES, PackedWriter, packedCount } from '../protocol/packed-states.js';
import { TransferParts, type ChunkPlace } from '../protocol/transfer-parts.js';
import type { ProcessedSends } from './dedup-table.js';
import { SNAPSHOT, reshipState, type HeldState } from './held-state.js';

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

export interface StateLimits {
  readonly maxEntitySnapshotBytes: number;
  readonly stateChunkBytes: number;
}

/** A snapshot as the entity gave it: its value, or why it could not; or the state held for an entity never woken. */
export type TakenSnapshot = { readonly entityId: string } & (
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: string }
  | { readonly ok: true; readonly held: HeldState }
);

/** One chunk of a shard's states: its entities, each state a view of `packed` (their one copy, protocol 8's wire). */
export interface PackedChunk {
  readonly entities: EntityState[];
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
 * as soon as it is full (`last`: the final one), so its sender need not wait for the rest to be packed. The
 * held states of a chunk none of whose states changed here go on as that chunk, as it came (unchangedChunk),
 * ahead of the states packed one by one.
 */
export function packSnapshots(
  snapshots: ReadonlyArray<TakenSnapshot>,
  limits: StateLimits,
  sends: ReadonlyMap<string, ReadonlyArray<ProcessedSends>> = new Map(),
  onChunk: (chunk: PackedChunk, last: boolean) => void = () => {},
): PackedStates {
  const packer = new ChunkPacker(limits, sends, onChunk);
  const whole: WholeChunk[] = [];
  const rest: TakenSnapshot[] = [];
  let from: Uint8Array | undefined;
  for (let at = 0; at < snapshots.length; at++) {
    const snapshot = snapshots[at] as TakenSnapshot;
    const chunk = 'held' in snapshot ? snapshot.held.chunk : undefined;
    // Tried once per run of states from one chunk: a run that is not the whole chunk unchanged is packed.
    const unchanged = chunk !== undefined && chunk !== from ? unchangedChunk(snapshots, at, sends, limits) : undefined;
    from = chunk;
    if (unchanged === undefined) rest.push(snapshot);
    else {
      whole.push(unchanged);
      at += unchanged.chunk.entities.length - 1;
    }
  }
  // The chunks that go as they came go first: the new host reads them while the rest is packed.
  whole.forEach((chunk, i) => packer.ship(chunk, i === whole.length - 1 && rest.length === 0));
  for (const snapshot of rest) packer.take(snapshot);
  return packer.finish();
}

/** A chunk that goes on as it came, and how many of its states hold a value. */
interface WholeChunk {
  readonly chunk: PackedChunk;
  readonly values: number;
}

/**
 * The held states from `at` on, when they are every state of the packed chunk the first one arrived in, in its
 * order, each unchanged here (reshipState gives its bytes as they came) and within the limits: that chunk then
 * goes on as it came, no state copied (a shard moved on before its entities woke, bench S10). Its count is
 * what the receiver read it by (state-messages.ts refuses a chunk that is not exactly its entities), and the
 * held states are distinct entities whose bytes are views of it: the whole run is the whole chunk. Undefined
 * otherwise (its states are packed one by one).
 */
function unchangedChunk(
  snapshots: ReadonlyArray<TakenSnapshot>,
  at: number,
  sends: ReadonlyMap<string, ReadonlyArray<ProcessedSends>>,
  limits: StateLimits,
): WholeChunk | undefined {
  const first = snapshots[at];
  const packed = first !== undefined && 'held' in first ? first.held.chunk : undefined;
  const count = packed === undefined ? 0 : packedCount(packed);
  if (packed === undefined || count === 0 || at + count > snapshots.length) return undefined;
  // A chunk cut under a larger budget than this node's is packed again under this one's.
  if (count > 1 && packed.length > limits.stateChunkBytes + PACKED_HEADER_BYTES) return undefined;
  // A run shorter than the chunk (an entity woke) is seen at its end before any state is looked at.
  const lastOne = snapshots[at + count - 1] as TakenSnapshot;
  if (!('held' in lastOne) || lastOne.held.chunk !== packed) return undefined;
  const entities: EntityState[] = [];
  let values = 0;
  for (let i = at; i < at + count; i++) {
    const snapshot = snapshots[i] as TakenSnapshot;
    if (!('held' in snapshot) || snapshot.held.chunk !== packed) return undefined;
    const { held } = snapshot;
    if (reshipState(held, sends.get(snapshot.entityId) ?? []) !== held.bytes) return undefined;
    if (held.value !== undefined) {
      if (held.bytes.byteLength > limits.maxEntitySnapshotBytes) return undefined;
      values++;
    }
    entities.push({ entityId: snapshot.entityId, state: held.bytes });
  }
  return { chunk: { entities, packed }, values };
}

/** The chunks of one hand-off's states as packSnapshots builds them: one entity at a time, or a whole chunk. */
class ChunkPacker {
  private readonly chunks: PackedChunk[] = [];
  private readonly refused: Array<PackedStates['refused'][number]> = [];
  private readonly seen = new Set<string>();
  private current: PackedWriter;
  private currentBytes = 0;
  private bytes = 0;
  private values = 0;

  constructor(
    private readonly limits: StateLimits,
    private readonly sends: ReadonlyMap<string, ReadonlyArray<ProcessedSends>>,
    private readonly onChunk: (chunk: PackedChunk, last: boolean) => void,
  ) {
    this.current = new PackedWriter(limits.stateChunkBytes);
  }

  /** One snapshot: its value encoded, a held state reshipped, a failed one refused (its sends still go). */
  take(snapshot: TakenSnapshot): void {
    this.seen.add(snapshot.entityId);
    if ('held' in snapshot) this.add(snapshot.entityId, this.reship(snapshot.entityId, snapshot.held));
    else if (snapshot.ok) this.add(snapshot.entityId, this.encode(snapshot.entityId, snapshot.value));
    else {
      this.refused.push({ entityId: snapshot.entityId, outcome: 'failed', detail: snapshot.error });
      this.add(snapshot.entityId, this.encode(snapshot.entityId, undefined));
    }
  }

  /**
   * A chunk that goes on as it came (unchangedChunk), shipped before any snapshot is taken; `end`: no snapshot
   * is taken after it. It is the final chunk when no entity known only by its sends is left either.
   */
  ship({ chunk, values }: WholeChunk, end: boolean): void {
    for (const { entityId, state } of chunk.entities) {
      this.seen.add(entityId);
      this.bytes += state.byteLength;
    }
    this.values += values;
    this.chunks.push(chunk);
    const last = end && [...this.sends.keys()].every((id) => this.seen.has(id));
    this.onChunk(chunk, last);
  }

  /** The entities known only by their sends, then the final chunk (unless a whole chunk was the final one). */
  finish(): PackedStates {
    for (const entityId of this.sends.keys())
      if (!this.seen.has(entityId)) this.add(entityId, this.encode(entityId, undefined));
    if (this.current.count > 0) {
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

interface Transfer<T> {
  readonly transferId: number;
  /** Per part, each entity's state as read on arrival. */
  readonly received: TransferParts<Array<readonly [string, T]>>;
  bytes: number;
}

/**
 * The transfers a new host has received for shards it is about to start: one per shard (a later transfer
 * replaces an earlier one), bounded in bytes of state (the oldest go first), taken when the shard starts. Each
 * state is read (`read`: a new host reads its outline) when its chunk arrives, not at the start: the start then
 * only gathers what was read, and a host reads chunk k while chunk k+1 is still on its way.
 */
export class IncomingStates<T> {
  private readonly transfers = new Map<number, Transfer<T>>();
  /** Per shard, the transfer its last start here took: a late copy of it (a repeated HostShard) is stale. */
  private readonly taken = new Map<number, number>();
  private total = 0;

  constructor(
    private readonly maxBytes: number,
    /** Reads one state as it arrives; `chunk`: the packed chunk it is a view of (none for a listed chunk). */
    private readonly read: (state: Uint8Array, chunk: Uint8Array | undefined) => T,
  ) {}

  get bytes(): number {
    return this.total;
  }

  /**
   * One chunk (at `place` in its transfer: transfer-parts.ts), its states views of `packed` when it came packed;
   * its states are read unless it is a repeat. Returns the shards whose transfers were dropped to stay within
   * the bound (their state is lost).
   */
  add(
    shardId: number,
    transferId: number,
    place: ChunkPlace,
    entities: ReadonlyArray<EntityState>,
    packed?: Uint8Array,
  ): number[] {
    if (this.taken.get(shardId) === transferId) return [];
    let transfer = this.transfers.get(shardId);
    if (transfer?.transferId !== transferId) transfer = this.begin(shardId, transferId);
    const part: Array<readonly [string, T]> = [];
    let added = transfer.received.add(place, part);
    if (added === 'contradicts') {
      // Not one transfer with what came before it: the transfer starts over from this chunk.
      transfer = this.begin(shardId, transferId);
      added = transfer.received.add(place, part);
    }
    if (added !== 'added') return [];
    let size = 0;
    for (const { entityId, state } of entities) {
      size += state.byteLength;
      part.push([entityId, this.read(state, packed)]);
    }
    transfer.bytes += size;
    this.total += size;
    const dropped: number[] = [];
    for (const oldest of this.transfers.keys()) {
      if (this.total <= this.maxBytes) break;
      dropped.push(oldest);
      this.drop(oldest);
    }
    return dropped;
  }

  /** Whether the shard's transfer `transferId` is here with every part. */
  complete(shardId: number, transferId: number): boolean {
    const transfer = this.transfers.get(shardId);
    return transfer?.transferId === transferId && transfer.received.complete;
  }

  /**
   * The shard's states as read, by entity id, if its transfer is complete; `incomplete` when parts are missing.
   * With `transferId`, only that transfer: another one is dropped (undefined).
   */
  take(shardId: number, transferId?: number): ReadonlyMap<string, T> | 'incomplete' | undefined {
    const transfer = this.transfers.get(shardId);
    if (transfer === undefined) return undefined;
    this.drop(shardId);
    if (transferId !== undefined && transfer.transferId !== transferId) return undefined;
    this.taken.set(shardId, transfer.transferId);
    if (!transfer.received.complete) return 'incomplete';
    const states = new Map<string, T>();
    for (const entities of transfer.received.inOrder())
      for (const [entityId, state] of entities) states.set(entityId, state);
    return states;
  }

  clear(): void {
    this.transfers.clear();
    this.total = 0;
  }

  /** Drops whatever the shard's transfer holds (its state is not waited for any more). */
  drop(shardId: number): void {
    const transfer = this.transfers.get(shardId);
    if (transfer === undefined) return;
    this.transfers.delete(shardId);
    this.total -= transfer.bytes;
  }

  /** A new transfer of the shard, in place of any earlier one. */
  private begin(shardId: number, transferId: number): Transfer<T> {
    this.drop(shardId);
    const transfer: Transfer<T> = { transferId, received: new TransferParts(), bytes: 0 };
    this.transfers.set(shardId, transfer);
    return transfer;
  }
}
