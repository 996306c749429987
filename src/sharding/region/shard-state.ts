// Entity state across a graceful hand-off, on the region's side. The old host encodes each entity's snapshot
// once (bounded per entity), packs them into chunks under a byte budget so no transfer is one frame over the
// transport's limit, and the new host assembles one transfer's chunks and decodes each entity's state when
// the shard starts. Each state travels as its own bytes: one entity's bad state costs that entity alone.
import { decodeValue, encodeMessage } from '../../cluster/message-codec.js';

/** One entity's encoded snapshot. */
export interface EntityState {
  readonly entityId: string;
  readonly state: Uint8Array;
}

/** What became of one entity's state at a hand-off (the label of `actor_ts_entity_snapshots_total`). */
export type SnapshotOutcome = 'shipped' | 'restored' | 'too_large' | 'failed' | 'lost';

export interface StateLimits {
  readonly maxEntitySnapshotBytes: number;
  readonly stateChunkBytes: number;
}

/** A snapshot as the entity gave it: its value, or why it could not. */
export type TakenSnapshot = { readonly entityId: string } & (
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string }
);

export interface PackedStates {
  readonly chunks: EntityState[][];
  readonly bytes: number;
  /** Entities that start fresh on the new host, with why. */
  readonly refused: ReadonlyArray<{
    readonly entityId: string;
    readonly outcome: 'too_large' | 'failed';
    readonly detail: string;
  }>;
}

const SNAPSHOT = 'EntitySnapshot';
/** Per entity in a chunk, beyond its id and state: msgpack map and key overhead, generously. */
const ENTRY_OVERHEAD = 32;

/** Encodes and chunks a shard's snapshots; undefined values (nothing to keep) are skipped. */
export function packSnapshots(snapshots: Iterable<TakenSnapshot>, limits: StateLimits): PackedStates {
  const chunks: EntityState[][] = [];
  const refused: Array<PackedStates['refused'][number]> = [];
  let current: EntityState[] = [];
  let currentBytes = 0;
  let bytes = 0;
  for (const snapshot of snapshots) {
    const { entityId } = snapshot;
    if (!snapshot.ok) {
      refused.push({ entityId, outcome: 'failed', detail: snapshot.error });
      continue;
    }
    if (snapshot.value === undefined) continue;
    let state: Uint8Array;
    try {
      state = encodeMessage({ type: SNAPSHOT, value: snapshot.value });
    } catch (error) {
      refused.push({ entityId, outcome: 'failed', detail: error instanceof Error ? error.message : String(error) });
      continue;
    }
    if (state.byteLength > limits.maxEntitySnapshotBytes) {
      refused.push({
        entityId,
        outcome: 'too_large',
        detail: `${state.byteLength} bytes > maxEntitySnapshotBytes ${limits.maxEntitySnapshotBytes}`,
      });
      continue;
    }
    const size = state.byteLength + entityId.length * 3 + ENTRY_OVERHEAD;
    // A state larger than a chunk travels alone: maxEntitySnapshotBytes is what keeps it under the frame limit.
    if (current.length > 0 && currentBytes + size > limits.stateChunkBytes) {
      chunks.push(current);
      current = [];
      currentBytes = 0;
    }
    current.push({ entityId, state });
    currentBytes += size;
    bytes += state.byteLength;
  }
  if (current.length > 0) chunks.push(current);
  return { chunks, bytes, refused };
}

/** Decodes one entity's state; undefined with a reason when the bytes are not a snapshot this code wrote. */
export function unpackState(
  state: Uint8Array,
): { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: string } {
  const decoded = decodeValue(state);
  if (!decoded.ok) return decoded;
  const value = decoded.value as { type?: unknown; value?: unknown } | null;
  if (typeof value !== 'object' || value === null || value.type !== SNAPSHOT)
    return { ok: false, reason: 'not an entity snapshot' };
  return { ok: true, value: value.value };
}

interface Transfer {
  readonly transferId: number;
  readonly parts: number;
  readonly received: Map<number, ReadonlyArray<EntityState>>;
  bytes: number;
}

/**
 * The transfers a new host has received for shards it is about to start: one per shard (a later transfer
 * replaces an earlier one), bounded in bytes (the oldest go first), taken when the shard starts.
 */
export class IncomingStates {
  private readonly transfers = new Map<number, Transfer>();
  /** Per shard, the transfer its last start here took: a late copy of it (a repeated HostShard) is stale. */
  private readonly taken = new Map<number, number>();
  private total = 0;

  constructor(private readonly maxBytes: number) {}

  get bytes(): number {
    return this.total;
  }

  /** One chunk. Returns the shards whose transfers were dropped to stay within the bound (their state is lost). */
  add(
    shardId: number,
    transferId: number,
    part: number,
    parts: number,
    entities: ReadonlyArray<EntityState>,
  ): number[] {
    if (this.taken.get(shardId) === transferId) return [];
    let transfer = this.transfers.get(shardId);
    if (transfer === undefined || transfer.transferId !== transferId || transfer.parts !== parts) {
      if (transfer !== undefined) this.drop(shardId);
      transfer = { transferId, parts, received: new Map(), bytes: 0 };
      this.transfers.set(shardId, transfer);
    }
    if (transfer.received.has(part)) return [];
    const size = entities.reduce((sum, entity) => sum + entity.state.byteLength, 0);
    transfer.received.set(part, entities);
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

  /** The shard's states, by entity id, if its transfer is complete; `incomplete` when parts are missing. */
  take(shardId: number): ReadonlyMap<string, Uint8Array> | 'incomplete' | undefined {
    const transfer = this.transfers.get(shardId);
    if (transfer === undefined) return undefined;
    this.drop(shardId);
    this.taken.set(shardId, transfer.transferId);
    if (transfer.received.size !== transfer.parts) return 'incomplete';
    const states = new Map<string, Uint8Array>();
    for (let part = 0; part < transfer.parts; part++)
      for (const { entityId, state } of transfer.received.get(part) ?? []) states.set(entityId, state);
    return states;
  }

  clear(): void {
    this.transfers.clear();
    this.total = 0;
  }

  private drop(shardId: number): void {
    const transfer = this.transfers.get(shardId);
    if (transfer === undefined) return;
    this.transfers.delete(shardId);
    this.total -= transfer.bytes;
  }
}
