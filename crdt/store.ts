// The replicated placement store: one Y.Doc, one top-level Y.Map per entity type, one slot per (shard, writer)
// so Yjs never has to resolve a conflict; the visible placement of a shard is its admitted slot with the
// greatest hlc (admission.ts decides which remote values count). Compaction folds the document into a base
// (generations.ts) and starts an empty document of the next generation, so the history a replica holds
// and sends is bounded by what changed since then, not by everything ever written. The store's own writes are
// made in local-writes.ts, what arrives is settled in intake.ts, and held values are released in held-release.ts.
import * as Y from 'yjs';
import { Admission } from './admission.js';
import { copyBytes } from './bytes.js';
import { UPDATE_EVENT, applyUpdate as applyEncodedUpdate } from './codec.js';
import { PlacementStoreError, describe } from './errors.js';
import { Generations } from './generations.js';
import { HeldRelease } from './held-release.js';
import { HybridLogicalClock, type Hlc } from './hlc.js';
import { foldLateUpdate, mergeBase, settleTransaction, type IntakeContext } from './intake.js';
import { StoreListeners, type ChangeListener, type UpdateListener } from './listeners.js';
import { writeLocal, type LocalWrite, type LocalWriteContext } from './local-writes.js';
import type { PlacementLog } from './log.js';
import { OwnWrites } from './own-writes.js';
import { Settler } from './settle.js';
import type { SlotMeta } from './slot-meta.js';
import { EMPTY_SNAPSHOT, placementOf as written, type Placement, type PlacementSnapshot } from './snapshot.js';
import { assertShardId, assertTypeName, checkWrites, type Slot, type SlotValue, type SlotWrite } from './slots.js';
import {
  resolveStoreOptions,
  type PlacementStoreOptions,
  type ResolvedStoreOptions,
  type PlacementStoreStats,
  type RemoveOptions,
} from './store-options.js';
import { checkWireUpdate, type SlotCheck } from './update-guard.js';
import { encodeWireUpdate } from './wire.js';
import type { PlacementDurability } from './durability.js';

export { DEFAULT_COMPACT_AFTER_ITEMS, DEFAULT_MAX_AHEAD_MS, DEFAULT_MAX_UPDATE_SLOTS } from './store-options.js';
export type { PlacementStoreOptions, PlacementStoreStats, RemoveOptions } from './store-options.js';
export type { UpdateListener, ChangeListener } from './listeners.js';

// Transaction origins: only updates applied from peers are 'remote'; prunes are this node's own writes.
const REMOTE = Symbol('placement-remote');
const LOCAL = Symbol('placement-local');

/** One replica of the placement map (shard -> target per type): an HLC last-writer-wins map CRDT on a Yjs document. */
export class PlacementStore {
  readonly node: string;
  /** This replica's storage, or undefined when it lives in memory only (see durability.ts). */
  readonly durability: PlacementDurability | undefined = undefined;
  private readonly onTransaction = (transaction: Y.Transaction): void => this.afterTransaction(transaction);
  private readonly onPreviousTransaction = (transaction: Y.Transaction): void => {
    if (transaction.origin === REMOTE) foldLateUpdate(this.intake, transaction);
  };
  private readonly onDocumentUpdate = (update: Uint8Array, origin: unknown): void => {
    this.listeners.emitUpdate(
      encodeWireUpdate(this.state.gen, undefined, update),
      origin === REMOTE ? 'remote' : 'local',
    );
  };
  private readonly state: Generations;
  /** The resolved bounds on what an update may carry and on the document before it is compacted. */
  private readonly limits: Pick<ResolvedStoreOptions, 'maxUpdateStructs' | 'maxUpdateSlots' | 'compactAfterItems'>;
  private slotCheck: SlotCheck | undefined;
  private readonly clock: HybridLogicalClock;
  private readonly log: PlacementLog;
  private readonly listeners: StoreListeners;
  private readonly admission: Admission;
  private readonly ownWrites = new OwnWrites();
  private readonly settler: Settler;
  private readonly localWrites: LocalWriteContext;
  private readonly intake: IntakeContext;
  private readonly heldRelease: HeldRelease;
  private documentItems = 0;
  private compactions = 0;
  private staleUpdates = 0;
  private rejectedUpdates = 0;
  private forcedRemovals = 0;

  constructor(options: PlacementStoreOptions) {
    const resolved = resolveStoreOptions(options);
    this.node = resolved.node;
    this.limits = resolved;
    this.slotCheck = resolved.slotCheck;
    this.log = resolved.log;
    this.listeners = new StoreListeners(this.log);
    this.admission = new Admission(resolved.node, resolved.now, resolved.maxAheadMs, this.log);
    this.clock = new HybridLogicalClock(resolved.node, {
      now: resolved.now,
      maxDriftMs: resolved.maxDriftMs,
      onDrift: (remote, localWallMs) => this.admission.driftRefused(remote, localWallMs),
    });
    const state = new Generations({
      attach: (doc) => {
        doc.on('afterTransaction', this.onTransaction);
        doc.on(UPDATE_EVENT, this.onDocumentUpdate);
      },
      detach: (doc) => {
        doc.off('afterTransaction', this.onTransaction);
        doc.off(UPDATE_EVENT, this.onDocumentUpdate);
        doc.on('afterTransaction', this.onPreviousTransaction);
      },
    });
    this.state = state;
    this.settler = new Settler({
      node: this.node,
      state,
      clock: this.clock,
      ownWrites: this.ownWrites,
      listeners: this.listeners,
      log: this.log,
      admissible: (hlc) => this.admission.admissible(hlc),
      localOrigin: LOCAL,
    });
    this.localWrites = {
      node: this.node,
      state,
      clock: this.clock,
      ownWrites: this.ownWrites,
      admission: this.admission,
      localOrigin: LOCAL,
    };
    this.intake = { state, admission: this.admission, settler: this.settler, log: this.log };
    this.heldRelease = new HeldRelease({ ...this.intake, busy: () => this.listeners.busy });
  }

  /** Whether the document holds structs or deletions waiting for an update that has not arrived (cheap). */
  get awaitingMissing(): boolean {
    return this.state.awaitingMissing();
  }
  /** The greatest wallMs of a remote value that counts here (admission.ts); 0 before any. */
  latestTimestampMs(): number {
    return this.admission.latestAdmittedWallMs;
  }
  setSlotCheck(check: SlotCheck | undefined): void {
    this.slotCheck = check;
  } // replaces the options' slotCheck

  /** The generation of the current document; see `compact()`. */
  get generation(): number {
    return this.state.gen;
  }

  /**
   * Writes an explicit placement; it beats every value this replica admitted for the shard. Throws
   * `hlc_out_of_range` (and writes nothing) when the timestamp it needs is beyond MAX_HLC_WALL_MS.
   */
  set(typeName: string, shardId: number, target: string, meta?: SlotMeta): Placement {
    assertTypeName(typeName);
    const [write] = checkWrites([{ shardId, target, meta }]) as [SlotWrite];
    const [hlc] = this.writeAll(typeName, [write], false) as [Hlc];
    return written(target, hlc, this.node, write[2]);
  }

  /**
   * Writes several placements in one transaction: one update on the wire and one onChange call per type,
   * instead of one per shard. Every entry is validated before anything is written; a shard named twice
   * ends with its last entry. Returns what was written, in entry order.
   */
  setMany(
    typeName: string,
    entries: ReadonlyArray<{ readonly shardId: number; readonly target: string; readonly meta?: SlotMeta }>,
  ): Placement[] {
    assertTypeName(typeName);
    const writes = checkWrites(entries);
    const hlcs = this.writeAll(typeName, writes, false);
    return writes.map(([, target, meta], i) => written(target, hlcs[i] as Hlc, this.node, meta));
  }

  /**
   * Writes a tombstone: the shard has no explicit placement until a set with a greater hlc. With
   * `{ force: true }` it also deletes the shard's refused values (see RemoveOptions), the way out of a
   * value that is far ahead of every sane clock.
   */
  remove(typeName: string, shardId: number, options?: RemoveOptions): Hlc {
    assertTypeName(typeName);
    assertShardId(shardId);
    if (
      options !== undefined &&
      (typeof options !== 'object' || options === null || !['undefined', 'boolean'].includes(typeof options.force))
    ) {
      throw new PlacementStoreError(
        'invalid_option',
        `remove options must be { force?: boolean }, got ${describe(options)}`,
      );
    }
    return this.writeAll(typeName, [[shardId, null]], options?.force === true)[0] as Hlc;
  }

  snapshot(typeName: string): PlacementSnapshot {
    assertTypeName(typeName);
    this.releaseDue();
    return this.state.existingIndex(typeName)?.snapshot() ?? EMPTY_SNAPSHOT;
  }

  /** The slot `writer` holds for a shard as this replica counts it (tombstones and `over` marks included). */
  slotOf(typeName: string, shardId: number, writer: string): Slot | undefined {
    return this.state.existingIndex(typeName)?.slot(shardId, writer);
  }
  /** Every entity type the document holds, including types learnt only from peers. */
  typeNames(): readonly string[] {
    return this.state.typeNames();
  }

  /** The generation, the base's digest and the document's Yjs state vector (wire.ts). */
  encodeStateVector(): Uint8Array {
    // Called on every anti-entropy round: held values are released on time even when nothing else happens.
    this.releaseDue();
    return this.state.encodeStateVector();
  }

  /**
   * Everything a peer with `remoteStateVector` lacks: the base when the digests differ, and the document
   * diff including the full delete set (all of the document when the peer is a generation behind). A peer
   * a generation ahead gets this replica's placements folded into a base, its document being obsolete there.
   */
  encodeDiff(remoteStateVector: Uint8Array): Uint8Array {
    return this.state.encodeDiff(copyBytes(remoteStateVector, 'malformed_state_vector', 'state vector'));
  }

  /**
   * Applies a peer's update; idempotent and order-free. A malformed update throws and changes nothing.
   * An update of a later generation moves this replica to it first (compacting its own document).
   * Values the timestamp rule refuses are integrated but do not count (admission.ts).
   */
  applyUpdate(update: Uint8Array): void {
    const bytes = copyBytes(update, 'malformed_update', 'update');
    let checked: ReturnType<typeof checkWireUpdate>;
    try {
      // This replica's own data (a durable store's replay) was checked when it first arrived.
      checked = checkWireUpdate(
        bytes,
        this.limits.maxUpdateStructs,
        this.ownData ? undefined : { maxNewSlots: this.limits.maxUpdateSlots, check: this.slotCheck },
      );
    } catch (error) {
      this.rejectedUpdates++;
      throw error;
    }
    const { wire, typeNames } = checked;
    if (wire.generation > this.state.gen) this.advance(wire.generation);
    if (wire.base !== undefined) mergeBase(this.intake, wire.base);
    if (wire.doc !== undefined) {
      const previous = this.state.previous;
      if (wire.generation === this.state.gen) {
        // Created up front so that Yjs integrates into Y.Maps we track rather than into anonymous types.
        for (const typeName of typeNames) this.state.mapFor(typeName);
        this.applyToDocument(this.state.doc, wire.doc);
      } else if (wire.generation === previous?.generation) {
        // As above: a type the old document never held must still be read as a map when it is folded.
        for (const typeName of typeNames) previous.doc.getMap<SlotValue>(typeName);
        this.applyToDocument(previous.doc, wire.doc);
      } else {
        this.staleUpdates++;
      }
    }
    this.releaseDue();
    this.maybeCompact();
  }

  /**
   * Folds the current document into the base and starts an empty document of the next generation. Visible
   * placements do not change. Peers follow on their next sync (a peer a generation behind gets this replica's
   * whole, small document; its own writes reach this replica folded into its base), and the previous document
   * is kept until `releasePreviousGeneration()` so late updates still count. Returns the new generation.
   */
  compact(): number {
    this.advance(this.state.gen + 1);
    this.compactions++;
    return this.state.gen;
  }

  /** Updates applied now are this replica's own data (a durable store's replay), not a peer's. */
  protected get ownData(): boolean {
    return false;
  }
  /** A change listener is running: a subclass defers a compaction of its own until it returned. */
  protected get notifying(): boolean {
    return this.listeners.busy;
  }
  /** Drops the document kept from before the last compaction; the replicator calls it once peers caught up. */
  releasePreviousGeneration(): boolean {
    return this.state.releasePrevious();
  }

  onUpdate(listener: UpdateListener): () => void {
    return this.listeners.onUpdate(listener);
  }
  onChange(listener: ChangeListener): () => void {
    return this.listeners.onChange(listener);
  }

  stats(): PlacementStoreStats {
    this.releaseDue();
    let slots = 0;
    let recomputedShards = 0;
    for (const [, index] of this.state.allIndexes()) {
      slots += index.slotCount;
      recomputedShards += index.recomputedShards;
    }
    const refused = this.admission.stats();
    return {
      slots,
      prunedSlots: this.settler.prunedSlots,
      repairedSlots: this.settler.repairedSlots,
      driftRejected: refused.clockDrift,
      rejectedUpdates: this.rejectedUpdates,
      rejectedValues: { outOfRange: refused.outOfRange, aheadOfClock: refused.aheadOfClock },
      heldValues: refused.held,
      quarantinedValues: refused.quarantined,
      forcedRemovals: this.forcedRemovals,
      awaitingMissingUpdates: this.state.awaitingMissing(),
      recomputedShards,
      generation: this.state.gen,
      baseSlots: this.state.base.slotCount,
      documentItems: this.documentItems,
      compactions: this.compactions,
      staleUpdates: this.staleUpdates,
      previousGeneration: this.state.previous?.generation ?? null,
    };
  }

  /** Writes slots of one type in one transaction (local-writes.ts); returns each write's hlc. */
  private writeAll(typeName: string, writes: readonly LocalWrite[], force: boolean): Hlc[] {
    this.releaseDue();
    const hlcs = writeLocal(this.localWrites, typeName, writes, force);
    if (force) this.forcedRemovals++;
    this.maybeCompact();
    return hlcs;
  }

  /** Moves to `generation`: every shard's winner goes to the base, and an empty document takes over. */
  private advance(generation: number): void {
    this.state.advance(generation);
    this.ownWrites.clear();
    this.admission.moveToBase();
    this.documentItems = 0;
  }

  private maybeCompact(): void {
    // Not from inside a listener: the write that called back may still be settling on this document.
    if (this.listeners.busy || this.documentItems <= this.limits.compactAfterItems) return;
    if (this.documentItems > 4 * this.state.liveSlots()) this.compact();
  }

  /** Lets held values the clock has reached count, as if they had just arrived (held-release.ts). */
  private releaseDue(): void {
    this.heldRelease.releaseDue();
  }

  private applyToDocument(doc: Y.Doc, update: Uint8Array): void {
    try {
      applyEncodedUpdate(doc, update, REMOTE);
    } catch (cause) {
      // Not expected after checkUpdate; reported as the typed error rather than a Yjs internal one.
      this.rejectedUpdates++;
      const reason = cause instanceof Error ? cause.message : String(cause);
      this.log({ level: 'warn', message: `Yjs failed to apply a checked placement update: ${reason}` });
      throw new PlacementStoreError('malformed_update', `placement update rejected by Yjs: ${reason}`, { cause });
    }
  }

  private afterTransaction(transaction: Y.Transaction): void {
    for (const [client, clock] of transaction.afterState)
      this.documentItems += clock - (transaction.beforeState.get(client) ?? 0);
    settleTransaction(this.intake, transaction, transaction.origin === REMOTE);
  }
}
