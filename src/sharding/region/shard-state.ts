// Entity state across a graceful hand-off, on the region's side. The old host encodes each entity's snapshot
// once (bounded per entity), packs them into chunks under a byte budget so no transfer is one frame over the
// transport's limit, and the new host assembles one transfer's chunks and, when the shard starts, holds each
// entity's state until its first message (held-state.ts). Each state travels as its own bytes: one entity's
// bad state costs that entity alone. The sends an entity processed (dedup-table.ts) travel in the same bytes,
// also for an entity without state. A state still held when the shard moves again travels on as it came.
import { encodeMessage, encodeValueScratch } from '../../cluster/transport/message-codec.js';
import { PackedWriter } from '../protocol/packed-states.js';
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
 * as soon as it is full (`last`: the final one), so its sender need not wait for the rest to be packed.
 */
export function packSnapshots(
  snapshots: Iterable<TakenSnapshot>,
  limits: StateLimits,
  sends: ReadonlyMap<string, ReadonlyArray<ProcessedSends>> = new Map(),
  onChunk: (chunk: PackedChunk, last: boolean) => void = () => {},
): PackedStates {
  const chunks: PackedChunk[] = [];
  const refused: Array<PackedStates['refused'][number]> = [];
  let current = new PackedWriter(limits.stateChunkBytes);
  let currentBytes = 0;
  let bytes = 0;
  let values = 0;
  const tooLarge = (entityId: string, state: Uint8Array): boolean => {
    if (state.byteLength <= limits.maxEntitySnapshotBytes) return false;
    refused.push({
      entityId,
      outcome: 'too_large',
      detail: `${state.byteLength} bytes > maxEntitySnapshotBytes ${limits.maxEntitySnapshotBytes}`,
    });
    return true;
  };
  /** The entity's bytes, and whether they hold its state (else only what it processed, or nothing). */
  const encode = (entityId: string, value: unknown): { state?: Uint8Array; withValue: boolean } => {
    const processed = sends.get(entityId);
    if (value === undefined && processed === undefined) return { withValue: false };
    const entry = { type: SNAPSHOT, ...(value === undefined ? {} : { value }), ...(processed && { sends: processed }) };
    try {
      const state = encodeView(entry);
      if (value === undefined || !tooLarge(entityId, state)) return { state, withValue: value !== undefined };
    } catch (error) {
      refused.push({ entityId, outcome: 'failed', detail: error instanceof Error ? error.message : String(error) });
    }
    // The state stays behind; what the entity processed still travels.
    return encode(entityId, undefined);
  };
  /** A held state goes on as the bytes it came in, with what the dedup table kept of its sends spliced in. */
  const reship = (entityId: string, held: HeldState): { state?: Uint8Array; withValue: boolean } => {
    const state = reshipState(held, sends.get(entityId) ?? []);
    if (state === undefined) return { withValue: false };
    if (held.value === undefined || !tooLarge(entityId, state)) return { state, withValue: held.value !== undefined };
    return encode(entityId, undefined);
  };
  const add = (entityId: string, value: unknown, held?: HeldState): void => {
    const { state, withValue } = held === undefined ? encode(entityId, value) : reship(entityId, held);
    if (state === undefined) return;
    if (withValue) values++;
    const size = state.byteLength + entityId.length * 3 + ENTRY_OVERHEAD;
    // A state larger than a chunk travels alone: maxEntitySnapshotBytes is what keeps it under the frame limit.
    const full = current.count > 0 && currentBytes + size > limits.stateChunkBytes ? current.finish() : undefined;
    if (full !== undefined) {
      current = new PackedWriter(limits.stateChunkBytes);
      currentBytes = 0;
    }
    // Copied in before the full chunk (not the last) goes on: sending it encodes, over the scratch bytes of a state.
    current.add(entityId, state);
    currentBytes += size;
    bytes += state.byteLength;
    if (full !== undefined) {
      chunks.push(full);
      onChunk(full, false);
    }
  };
  const seen = new Set<string>();
  for (const snapshot of snapshots) {
    seen.add(snapshot.entityId);
    if ('held' in snapshot) add(snapshot.entityId, undefined, snapshot.held);
    else if (snapshot.ok) add(snapshot.entityId, snapshot.value);
    else {
      refused.push({ entityId: snapshot.entityId, outcome: 'failed', detail: snapshot.error });
      add(snapshot.entityId, undefined);
    }
  }
  for (const entityId of sends.keys()) if (!seen.has(entityId)) add(entityId, undefined);
  if (current.count > 0) {
    const final = current.finish();
    chunks.push(final);
    onChunk(final, true);
  }
  return { chunks, bytes, values, refused };
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
    private readonly read: (state: Uint8Array) => T,
  ) {}

  get bytes(): number {
    return this.total;
  }

  /**
   * One chunk (at `place` in its transfer: transfer-parts.ts); its states are read unless it is a repeat.
   * Returns the shards whose transfers were dropped to stay within the bound (their state is lost).
   */
  add(shardId: number, transferId: number, place: ChunkPlace, entities: ReadonlyArray<EntityState>): number[] {
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
      part.push([entityId, this.read(state)]);
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
