// A new host's side of a hand-off's state before the shard starts: each transfer's chunks as they arrive, every
// state read (told plain, or its outline read: held-state.ts) as its chunk comes in, and each part folded into
// what the start takes (sorted-states.ts: an entity's entry in a later part wins) as soon as every part before it
// is in, bounded in bytes, and taken whole when the shard starts. The old host's side, packing the chunks, is
// shard-state.ts.
import { TransferParts, type ChunkPlace } from '../protocol/transfer-parts.js';
import type { SenderProgress } from './dedup-table.js';
import type { EntityState } from './shard-state.js';
import type { ArrivedChunk } from './held-state.js';

/**
 * One part of a transfer as it arrived: its entries, each state as read (`read[i]` is `entities[i]`'s), and the
 * packed chunk they are views of (none for a listed chunk). Two lists, not a pair per entity: a pair per state
 * was a thousand objects per S10 hand-off, garbage by the time the shard started.
 */
export interface ArrivedPart<T> {
  readonly entities: ReadonlyArray<EntityState>;
  readonly read: ReadonlyArray<T>;
  readonly chunk: ArrivedChunk | undefined;
}

/**
 * What a transfer's parts are gathered into, one part at a time in part order (`S`: for a start,
 * sorted-states.ts), so the start has only the last part's share of the work left.
 */
export interface PartsFold<T, S> {
  begin(): S;
  add(into: S, part: ArrivedPart<T>): void;
}

interface Transfer<T, S> {
  readonly transferId: number;
  /** When its first chunk arrived (the clock IncomingStates was given). */
  readonly sinceMs: number;
  /** Per part, its entries and each state as read on arrival. */
  readonly received: TransferParts<ArrivedPart<T>>;
  /** The parts folded so far (0 up to `folded`, excluded). */
  readonly gathered: S;
  folded: number;
  bytes: number;
  /** The old host's sender progress, as its chunks carried it (each chunk carries the same). */
  progress: ReadonlyArray<SenderProgress>;
}

/** A complete transfer as its shard's start takes it: its parts folded (PartsFold), and the sender progress. */
export interface TakenParts<S> {
  readonly gathered: S;
  readonly progress: ReadonlyArray<SenderProgress>;
}

/**
 * The transfers a new host has received for shards it is about to start: one per shard (a later transfer
 * replaces an earlier one), bounded in bytes of state (the oldest go first), taken when the shard starts. Each
 * state is read (`read`: a new host reads its outline) and each part folded in (`fold`) when its chunk arrives,
 * not at the start: a host reads chunk k while chunk k+1 is still on its way, and the start takes what was folded.
 */
export class IncomingStates<T, S> {
  private readonly transfers = new Map<number, Transfer<T, S>>();
  /** Per shard, the transfer its last start here took: a late copy of it (a repeated HostShard) is stale. */
  private readonly taken = new Map<number, number>();
  private total = 0;

  constructor(
    private readonly maxBytes: number,
    /** Reads one state as it arrives; `chunk`: the packed chunk it is a view of (none for a listed chunk). */
    private readonly read: (state: Uint8Array, chunk: ArrivedChunk | undefined) => T,
    /** What each transfer's parts are gathered into as they arrive in order. */
    private readonly fold: PartsFold<T, S>,
    /** The region's clock (its scheduler's now): when each transfer began, for dropStale. */
    private readonly now: () => number = () => 0,
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
    progress?: ReadonlyArray<SenderProgress>,
  ): number[] {
    if (this.taken.get(shardId) === transferId) return [];
    let transfer = this.transfers.get(shardId);
    if (transfer?.transferId !== transferId) transfer = this.begin(shardId, transferId);
    const chunk = packed === undefined ? undefined : { packed, entities, part: place.part };
    const read: T[] = [];
    const part = { entities, read, chunk };
    let added = transfer.received.add(place, part);
    if (added === 'contradicts') {
      // Not one transfer with what came before it: the transfer starts over from this chunk.
      transfer = this.begin(shardId, transferId);
      added = transfer.received.add(place, part);
    }
    if (added !== 'added') return [];
    if (progress !== undefined) transfer.progress = progress;
    let size = 0;
    for (const { state } of entities) {
      size += state.length;
      read.push(this.read(state, chunk));
    }
    transfer.bytes += size;
    this.total += size;
    this.gather(transfer);
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
   * The shard's transfer if complete, its parts as folded (every one of them, in part order), with the old host's
   * sender progress; `incomplete` when parts are missing. With `transferId`, only that transfer:
   * another one is dropped (undefined).
   */
  take(shardId: number, transferId?: number): TakenParts<S> | 'incomplete' | undefined {
    const transfer = this.transfers.get(shardId);
    if (transfer === undefined) return undefined;
    this.drop(shardId);
    if (transferId !== undefined && transfer.transferId !== transferId) return undefined;
    this.taken.set(shardId, transfer.transferId);
    if (!transfer.received.complete) return 'incomplete';
    return { gathered: transfer.gathered, progress: transfer.progress };
  }

  /** Folds in each part whose predecessors all are (all of them once the transfer is complete). */
  private gather(transfer: Transfer<T, S>): void {
    let part = transfer.received.at(transfer.folded);
    while (part !== undefined) {
      this.fold.add(transfer.gathered, part);
      transfer.folded++;
      part = transfer.received.at(transfer.folded);
    }
  }

  /**
   * Drops each incomplete transfer that began before `cutoffMs` unless `awaited` names it (a start waits for it);
   * returns their shards. A complete one stays (within the bound): a start named here later may still take it.
   */
  dropStale(cutoffMs: number, awaited: (shardId: number, transferId: number) => boolean): number[] {
    const dropped: number[] = [];
    for (const [shardId, { transferId, sinceMs, received }] of this.transfers) {
      if (sinceMs >= cutoffMs || received.complete || awaited(shardId, transferId)) continue;
      dropped.push(shardId);
      this.drop(shardId);
    }
    return dropped;
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
  private begin(shardId: number, transferId: number): Transfer<T, S> {
    this.drop(shardId);
    const received = new TransferParts<ArrivedPart<T>>();
    const transfer: Transfer<T, S> = {
      transferId,
      sinceMs: this.now(),
      received,
      gathered: this.fold.begin(),
      folded: 0,
      bytes: 0,
      progress: [],
    };
    this.transfers.set(shardId, transfer);
    return transfer;
  }
}
