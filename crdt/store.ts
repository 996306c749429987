// The replicated placement store: one Y.Doc, one top-level Y.Map per entity type, one slot per (shard, writer)
// so Yjs never has to resolve a conflict; the visible placement of a shard is its slot with the greatest hlc.
// Compaction folds the document into a base (base.ts: per shard its winning slot) and starts an empty
// document of the next generation, so the history a replica holds and sends is bounded by what changed
// since then, not by everything ever written.
import * as decoding from 'lib0/decoding';
import * as Y from 'yjs';
import { BaseState } from './base.js';
import { UPDATE_EVENT, applyUpdate as applyEncodedUpdate, encodeStateAsUpdate } from './codec.js';
import { MAX_NODE_LENGTH, MAX_UPDATE_STRUCTS, PlacementStoreError, describe, nameProblem } from './errors.js';
import { HybridLogicalClock, compareHlc, successor, type Hlc } from './hlc.js';
import { silentLog, type PlacementLog } from './log.js';
import { BASE_WRITER, EMPTY_SNAPSHOT, SnapshotIndex, type Placement, type PlacementSnapshot, type SlotChange } from './snapshot.js';
import {
  assertShardId,
  assertTarget,
  assertTypeName,
  decodeSlotValue,
  encodeSlotValue,
  parseSlotKey,
  slotKey,
  type Slot,
  type SlotValue,
} from './slots.js';
import { checkUpdate } from './update-guard.js';
import {
  baseDigest,
  decodeWireStateVector,
  decodeWireUpdate,
  encodeBase,
  encodeWireStateVector,
  encodeWireUpdate,
  type BaseEntries,
} from './wire.js';

export interface PlacementStoreOptions {
  /** This node's stable name: the writer of every slot this store writes. */
  readonly node: string;
  readonly now?: () => number;
  /** Default 60_000. */
  readonly maxDriftMs?: number;
  readonly log?: PlacementLog;
  /** Remote updates with more structs (or base slots) are rejected. Default MAX_UPDATE_STRUCTS (2,000,000). */
  readonly maxUpdateStructs?: number;
  /**
   * Compacts automatically (see `compact()`) once the current document holds more than this many items
   * and more than four times as many items as live slots. Default DEFAULT_COMPACT_AFTER_ITEMS (100,000);
   * `Infinity` leaves compaction to explicit `compact()` calls.
   */
  readonly compactAfterItems?: number;
}

export const DEFAULT_COMPACT_AFTER_ITEMS = 100_000;

export interface PlacementStoreStats {
  /** Live slots (map keys) over all types; never more than writers x shards. */
  readonly slots: number;
  /** Own slots deleted because a strictly greater slot for the same shard exists. */
  readonly prunedSlots: number;
  /** Own writes re-asserted after an earlier incarnation's concurrent write to the same slot hid them. */
  readonly repairedSlots: number;
  /** Remote timestamps that were too far ahead to move the local clock. */
  readonly driftRejected: number;
  readonly rejectedUpdates: number;
  /** Shard winners recomputed by snapshot refreshes: refresh work is proportional to this. */
  readonly recomputedShards: number;
  /** The current document's generation: how many compactions this replica's history has been through. */
  readonly generation: number;
  /** Shards whose compacted winner is held in the base. */
  readonly baseSlots: number;
  /** Items (writes and prunes, live or deleted) in the current document: what a full sync carries. */
  readonly documentItems: number;
  /** Compactions this replica started itself. */
  readonly compactions: number;
  /** Document updates of a generation this replica no longer holds, ignored (their writers re-send them folded). */
  readonly staleUpdates: number;
  /** The generation of the document kept from before the last compaction, or null once it was released. */
  readonly previousGeneration: number | null;
}

export type UpdateListener = (update: Uint8Array, origin: 'local' | 'remote') => void;
export type ChangeListener = (typeName: string, shardIds: readonly number[]) => void;

// Transaction origins: only updates applied from peers are 'remote'; prunes are this node's own writes.
const REMOTE = Symbol('placement-remote');
const LOCAL = Symbol('placement-local');

export class PlacementStore {
  readonly node: string;
  private doc = new Y.Doc();
  private gen = 0;
  private readonly base = new BaseState();
  // The document before the last compaction, kept so late updates from peers still on it are not lost.
  private previous: { readonly generation: number; readonly doc: Y.Doc } | undefined;
  private readonly compactAfterItems: number;
  private documentItems = 0;
  private compactions = 0;
  private staleUpdates = 0;
  // Listener calls in progress (see maybeCompact).
  private listening = 0;
  private readonly clock: HybridLogicalClock;
  private readonly log: PlacementLog;
  private readonly maxUpdateStructs: number;
  private readonly maps = new Map<string, Y.Map<SlotValue>>();
  private readonly typeOf = new Map<object, string>();
  private readonly indexes = new Map<string, SnapshotIndex>();
  private readonly updateListeners = new Set<UpdateListener>();
  private readonly changeListeners = new Set<ChangeListener>();
  private readonly driftReported = new Set<string>();
  private typeNameList: readonly string[] = Object.freeze([]);
  // What this incarnation last wrote into each of its slots, to notice a write lost to a Yjs conflict.
  private readonly ownWrites = new Map<string, OwnWrite>();
  private prunedSlots = 0;
  private repairedSlots = 0;
  private driftRejected = 0;
  private rejectedUpdates = 0;

  constructor(options: PlacementStoreOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new PlacementStoreError('invalid_option', `options must be an object, got ${describe(options)}`);
    }
    const problem = nameProblem(options.node, MAX_NODE_LENGTH);
    if (problem !== null) throw new PlacementStoreError('invalid_option', `node ${problem}`);
    const maxUpdateStructs = options.maxUpdateStructs ?? MAX_UPDATE_STRUCTS;
    if (!Number.isSafeInteger(maxUpdateStructs) || maxUpdateStructs < 1) {
      throw new PlacementStoreError('invalid_option', `maxUpdateStructs must be a positive integer, got ${describe(maxUpdateStructs)}`);
    }
    const compactAfterItems = options.compactAfterItems ?? DEFAULT_COMPACT_AFTER_ITEMS;
    if (compactAfterItems !== Infinity && (!Number.isSafeInteger(compactAfterItems) || compactAfterItems < 1)) {
      throw new PlacementStoreError('invalid_option', `compactAfterItems must be a positive integer or Infinity, got ${describe(compactAfterItems)}`);
    }
    this.node = options.node;
    this.maxUpdateStructs = maxUpdateStructs;
    this.compactAfterItems = compactAfterItems;
    this.log = safeLog(options.log ?? silentLog);
    this.clock = new HybridLogicalClock(options.node, {
      ...(options.now === undefined ? {} : { now: options.now }),
      ...(options.maxDriftMs === undefined ? {} : { maxDriftMs: options.maxDriftMs }),
      onDrift: (remote, localWallMs) => this.reportDrift(remote, localWallMs),
    });
    this.attach(this.doc);
  }

  /** The generation of the current document; see `compact()`. */
  get generation(): number {
    return this.gen;
  }

  /** Writes an explicit placement; it beats every value this replica has seen for the shard. */
  set(typeName: string, shardId: number, target: string): Placement {
    assertTypeName(typeName);
    assertShardId(shardId);
    assertTarget(target);
    const hlc = this.write(typeName, shardId, target);
    return Object.freeze({ target, hlc, writer: this.node });
  }

  /**
   * Writes several placements in one transaction: one update on the wire and one onChange call per type,
   * instead of one per shard. Every entry is validated before anything is written; a shard named twice
   * ends with its last entry. Returns what was written, in entry order.
   */
  setMany(typeName: string, entries: ReadonlyArray<{ readonly shardId: number; readonly target: string }>): Placement[] {
    assertTypeName(typeName);
    if (!Array.isArray(entries)) {
      throw new PlacementStoreError('invalid_option', `entries must be an array, got ${describe(entries)}`);
    }
    for (const entry of entries) {
      if (typeof entry !== 'object' || entry === null) {
        throw new PlacementStoreError('invalid_option', `each entry must be { shardId, target }, got ${describe(entry)}`);
      }
      assertShardId(entry.shardId);
      assertTarget(entry.target);
    }
    const hlcs = this.writeAll(typeName, entries.map(({ shardId, target }) => [shardId, target] as const));
    return entries.map(({ target }, i) => Object.freeze({ target, hlc: hlcs[i] as Hlc, writer: this.node }));
  }

  /** Writes a tombstone: the shard has no explicit placement until a set with a greater hlc. */
  remove(typeName: string, shardId: number): Hlc {
    assertTypeName(typeName);
    assertShardId(shardId);
    return this.write(typeName, shardId, null);
  }

  snapshot(typeName: string): PlacementSnapshot {
    assertTypeName(typeName);
    return this.indexes.get(typeName)?.snapshot() ?? EMPTY_SNAPSHOT;
  }

  /** Every entity type the document holds, including types learnt only from peers. */
  typeNames(): readonly string[] {
    // Every top-level type is created through mapFor (applyUpdate creates the ones an update names first).
    return this.typeNameList;
  }

  /** The generation, the base's digest and the document's Yjs state vector (wire.ts). */
  encodeStateVector(): Uint8Array {
    return encodeWireStateVector({ generation: this.gen, baseDigest: baseDigest(this.base), doc: Y.encodeStateVector(this.doc) });
  }

  /**
   * Everything a peer with `remoteStateVector` lacks: the base when the digests differ, and the document
   * diff including the full delete set (all of the document when the peer is a generation behind). A peer
   * a generation ahead gets this replica's placements folded into a base, its document being obsolete there.
   */
  encodeDiff(remoteStateVector: Uint8Array): Uint8Array {
    const bytes = copyBytes(remoteStateVector, 'malformed_state_vector', 'state vector');
    const remote = decodeWireStateVector(bytes);
    checkStateVector(remote.doc);
    if (remote.generation > this.gen) return encodeWireUpdate(this.gen, encodeBase(this.foldedBase()), undefined);
    const base = equalBytes(remote.baseDigest, baseDigest(this.base)) ? undefined : encodeBase(this.base);
    const since = remote.generation === this.gen ? remote.doc : undefined;
    return encodeWireUpdate(this.gen, base, encodeStateAsUpdate(this.doc, since));
  }

  /**
   * Applies a peer's update; idempotent and order-free. A malformed update throws and changes nothing.
   * An update of a later generation moves this replica to it first (compacting its own document).
   */
  applyUpdate(update: Uint8Array): void {
    const bytes = copyBytes(update, 'malformed_update', 'update');
    let wire: ReturnType<typeof decodeWireUpdate>;
    let typeNames: ReadonlySet<string> = new Set();
    try {
      wire = decodeWireUpdate(bytes, this.maxUpdateStructs);
      if (wire.doc !== undefined) typeNames = checkUpdate(wire.doc, this.maxUpdateStructs);
    } catch (error) {
      this.rejectedUpdates++;
      throw error;
    }
    if (wire.generation > this.gen) this.advance(wire.generation);
    if (wire.base !== undefined) this.mergeBase(wire.base);
    if (wire.doc !== undefined) {
      if (wire.generation === this.gen) {
        // Created up front so that Yjs integrates into Y.Maps we track rather than into anonymous types.
        for (const typeName of typeNames) this.mapFor(typeName);
        this.applyToDocument(this.doc, wire.doc);
      } else if (wire.generation === this.previous?.generation) {
        // As above: a type the old document never held must still be read as a map when it is folded.
        for (const typeName of typeNames) this.previous.doc.getMap<SlotValue>(typeName);
        this.applyToDocument(this.previous.doc, wire.doc);
      } else {
        this.staleUpdates++;
      }
    }
    this.maybeCompact();
  }

  /**
   * Folds the current document into the base and starts an empty document of the next generation.
   * Visible placements do not change. Peers follow on their next sync (a peer a generation behind gets
   * this replica's whole, small document; its own writes reach this replica folded into its base), and
   * the previous document is kept until `releasePreviousGeneration()` so late updates still count.
   * Returns the new generation.
   */
  compact(): number {
    this.advance(this.gen + 1);
    this.compactions++;
    return this.gen;
  }

  /** Drops the document kept from before the last compaction; the replicator calls it once peers caught up. */
  releasePreviousGeneration(): boolean {
    if (this.previous === undefined) return false;
    this.previous.doc.destroy();
    this.previous = undefined;
    return true;
  }

  onUpdate(listener: UpdateListener): () => void {
    this.updateListeners.add(listener);
    return () => this.updateListeners.delete(listener);
  }

  onChange(listener: ChangeListener): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  stats(): PlacementStoreStats {
    let slots = 0;
    let recomputedShards = 0;
    for (const index of this.indexes.values()) {
      slots += index.slotCount;
      recomputedShards += index.recomputedShards;
    }
    return {
      slots,
      prunedSlots: this.prunedSlots,
      repairedSlots: this.repairedSlots,
      driftRejected: this.driftRejected,
      rejectedUpdates: this.rejectedUpdates,
      recomputedShards,
      generation: this.gen,
      baseSlots: this.base.slotCount,
      documentItems: this.documentItems,
      compactions: this.compactions,
      staleUpdates: this.staleUpdates,
      previousGeneration: this.previous?.generation ?? null,
    };
  }

  private write(typeName: string, shardId: number, target: string | null): Hlc {
    return this.writeAll(typeName, [[shardId, target]])[0] as Hlc;
  }

  /** Writes validated slots of one type in one transaction; returns each write's hlc. */
  private writeAll(typeName: string, writes: ReadonlyArray<readonly [shardId: number, target: string | null]>): Hlc[] {
    const map = this.mapFor(typeName);
    const index = this.indexes.get(typeName) as SnapshotIndex;
    const hlcs: Hlc[] = [];
    this.doc.transact(() => {
      for (const [shardId, target] of writes) {
        const key = slotKey(shardId, this.node);
        // The own slot is read from the map: a write made inside a listener, or earlier in this
        // transaction, is not indexed yet.
        const own = decodeSlotValue(map.get(key), this.node);
        const winner = index.winner(shardId);
        let hlc = this.clock.tick();
        for (const seen of [own?.hlc, winner?.hlc]) {
          if (seen !== undefined && compareHlc(hlc, seen) <= 0) hlc = successor(seen, this.node);
        }
        map.set(key, encodeSlotValue(target, hlc));
        this.ownWrites.set(ownWriteKey(typeName, shardId), { target, hlc });
        hlcs.push(hlc);
      }
    }, LOCAL);
    this.maybeCompact();
    return hlcs;
  }

  private mapFor(typeName: string): Y.Map<SlotValue> {
    let map = this.maps.get(typeName);
    if (map === undefined) {
      map = this.doc.getMap<SlotValue>(typeName);
      this.maps.set(typeName, map);
      this.typeOf.set(map, typeName);
      if (!this.indexes.has(typeName)) {
        this.indexes.set(typeName, new SnapshotIndex());
        this.typeNameList = Object.freeze([...this.indexes.keys()].sort());
      }
    }
    return map;
  }

  private attach(doc: Y.Doc): void {
    doc.on('afterTransaction', this.onTransaction);
    doc.on(UPDATE_EVENT, this.onDocumentUpdate);
  }

  private readonly onTransaction = (transaction: Y.Transaction): void => this.afterTransaction(transaction);

  private readonly onDocumentUpdate = (update: Uint8Array, origin: unknown): void => {
    const source = origin === REMOTE ? 'remote' : 'local';
    const bytes = encodeWireUpdate(this.gen, undefined, update);
    for (const listener of [...this.updateListeners]) this.guard('update', () => listener(bytes, source));
  };

  private readonly onPreviousTransaction = (transaction: Y.Transaction): void => this.foldLateUpdate(transaction);

  /** Moves to `generation`: every shard's winner goes to the base, and an empty document takes over. */
  private advance(generation: number): void {
    const old = this.doc;
    old.off('afterTransaction', this.onTransaction);
    old.off(UPDATE_EVENT, this.onDocumentUpdate);
    for (const [typeName, index] of this.indexes) for (const winner of index.fold()) this.base.merge(typeName, winner);
    this.previous?.doc.destroy();
    old.on('afterTransaction', this.onPreviousTransaction);
    this.previous = { generation: this.gen, doc: old };
    this.doc = new Y.Doc();
    this.attach(this.doc);
    this.maps.clear();
    this.typeOf.clear();
    for (const typeName of [...this.indexes.keys()]) this.mapFor(typeName);
    // Own writes now live in the base, where hlc alone decides: nothing left for a repair to protect.
    this.ownWrites.clear();
    this.documentItems = 0;
    this.gen = generation;
  }

  private maybeCompact(): void {
    // Not from inside a listener: the write that called back may still be settling on this document.
    if (this.listening > 0 || this.documentItems <= this.compactAfterItems) return;
    let live = 0;
    for (const index of this.indexes.values()) live += index.slotCount;
    if (this.documentItems > 4 * live) this.compact();
  }

  /** The base this replica would hold after compacting now: every shard's current winner. */
  private foldedBase(): BaseState {
    const folded = new BaseState();
    for (const [typeName, index] of this.indexes) for (const winner of index.winners()) folded.merge(typeName, winner);
    return folded;
  }

  private mergeBase(entries: readonly BaseEntries[]): void {
    const work = newSettlement();
    for (const { typeName, slots } of entries) {
      const changes: SlotChange[] = [];
      for (const slot of slots) if (this.base.merge(typeName, slot)) changes.push({ shardId: slot.shardId, writer: BASE_WRITER, slot });
      if (changes.length > 0) this.settle(typeName, changes, true, work);
    }
    this.finish(work);
  }

  /** A peer still on the previous generation wrote: what it wrote counts, folded into the base. */
  private foldLateUpdate(transaction: Y.Transaction): void {
    if (transaction.origin !== REMOTE) return;
    const entries: BaseEntries[] = [];
    for (const [type, keys] of transaction.changed) {
      const typeName = shareName(transaction.doc, type);
      if (typeName === undefined || !(type instanceof Y.Map)) continue;
      const slots: Slot[] = [];
      for (const key of keys) {
        const parsed = key === null ? null : parseSlotKey(key);
        if (parsed === null || key === null) continue;
        const slot = this.readSlot(type as Y.Map<SlotValue>, key, parsed.shardId, parsed.writer);
        if (slot !== undefined) slots.push(slot);
      }
      entries.push({ typeName, slots });
    }
    this.mergeBase(entries);
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
    for (const [client, clock] of transaction.afterState) this.documentItems += clock - (transaction.beforeState.get(client) ?? 0);
    const remote = transaction.origin === REMOTE;
    const work = newSettlement();
    for (const [type, keys] of transaction.changed) {
      const typeName = this.typeNameOf(type);
      if (typeName === undefined) continue;
      const map = this.mapFor(typeName);
      const changes: SlotChange[] = [];
      for (const key of keys) {
        const parsed = key === null ? null : parseSlotKey(key);
        if (parsed === null || key === null) continue;
        changes.push({ shardId: parsed.shardId, writer: parsed.writer, slot: this.readSlot(map, key, parsed.shardId, parsed.writer) });
      }
      this.settle(typeName, changes, remote, work);
    }
    this.finish(work);
  }

  /** Indexes changed slots of one type and decides which own slots to prune or repair. */
  private settle(typeName: string, changes: readonly SlotChange[], remote: boolean, work: Settlement): void {
    const map = this.mapFor(typeName);
    const index = this.indexes.get(typeName) as SnapshotIndex;
    // Indexed before anything that calls out (clock, log): the document already holds these slots, so
    // the snapshot must show them whatever a callback does.
    const visible = index.apply(changes);
    if (remote) for (const { slot } of changes) if (slot !== undefined) this.receiveClock(slot.hlc);
    if (visible.length > 0) work.notices.push([typeName, visible]);
    for (const shardId of new Set(changes.map((change) => change.shardId))) {
      const key = slotKey(shardId, this.node);
      const own = index.slot(shardId, this.node);
      const winner = index.winner(shardId);
      const lost = remote ? this.lostOwnWrite(typeName, shardId, own, winner) : undefined;
      if (lost !== undefined) work.repairs.push([map, key, lost]);
      else if (own !== undefined && winner !== undefined && compareHlc(winner.hlc, own.hlc) > 0) {
        work.prunes.push([map, key, ownWriteKey(typeName, shardId)]);
      }
    }
  }

  private finish(work: Settlement): void {
    const { prunes, repairs, notices } = work;
    if (prunes.length > 0 || repairs.length > 0) {
      // Inside a transaction's cleanup Yjs queues this one; still before applyUpdate/set return.
      this.doc.transact(() => {
        for (const [map, key, ownKey] of prunes) {
          this.ownWrites.delete(ownKey);
          if (map.has(key)) {
            map.delete(key);
            this.prunedSlots++;
          }
        }
        for (const [map, key, write] of repairs) {
          map.set(key, encodeSlotValue(write.target, write.hlc));
          this.repairedSlots++;
        }
      }, LOCAL);
    }
    for (const [typeName, shardIds] of notices) {
      for (const listener of [...this.changeListeners]) this.guard('change', () => listener(typeName, shardIds));
    }
  }

  /**
   * This node's write to a slot that a remote update just replaced by an older value or removed. That
   * happens only when an earlier incarnation of this node (another Yjs client) wrote the same slot
   * concurrently, e.g. after a restart with an empty document: Yjs then picks the survivor by client id,
   * not by hlc. The write is re-asserted unless a greater slot exists anyway.
   */
  private lostOwnWrite(typeName: string, shardId: number, own: Slot | undefined, winner: Slot | undefined): OwnWrite | undefined {
    const key = ownWriteKey(typeName, shardId);
    const mine = this.ownWrites.get(key);
    if (mine === undefined) return undefined;
    if (own !== undefined && compareHlc(own.hlc, mine.hlc) >= 0) return undefined;
    if (winner !== undefined && compareHlc(winner.hlc, mine.hlc) > 0) {
      this.ownWrites.delete(key);
      return undefined;
    }
    return mine;
  }

  private readSlot(map: Y.Map<SlotValue>, key: string, shardId: number, writer: string): Slot | undefined {
    const raw: unknown = map.get(key);
    if (raw === undefined) return undefined;
    const decoded = decodeSlotValue(raw, writer);
    if (decoded === null) {
      // Unreachable through applyUpdate (validated); kept so a bad value is ignored rather than trusted.
      this.log({ level: 'warn', message: `ignoring malformed placement slot ${JSON.stringify(key)}` });
      return undefined;
    }
    return { shardId, writer, target: decoded.target, hlc: decoded.hlc };
  }

  private typeNameOf(type: object): string | undefined {
    return this.typeOf.get(type) ?? shareName(this.doc, type);
  }

  private receiveClock(hlc: Hlc): void {
    try {
      this.clock.receive(hlc);
    } catch (error) {
      // Only a broken now() gets here (the value was validated); the slot stays applied and indexed.
      this.log({ level: 'warn', message: `clock could not merge a placement timestamp: ${error instanceof Error ? error.message : String(error)}` });
    }
  }

  private reportDrift(remote: Hlc, localWallMs: number): void {
    this.driftRejected++;
    if (this.driftReported.has(remote.node)) return;
    this.driftReported.add(remote.node);
    this.log({
      level: 'warn',
      message:
        `placement timestamp from node ${JSON.stringify(remote.node)} is ${remote.wallMs - localWallMs} ms ahead ` +
        `of the local clock; the clock was not moved (reported once per node)`,
      details: { node: remote.node, remoteWallMs: remote.wallMs, localWallMs },
    });
  }

  private guard(kind: string, call: () => void): void {
    this.listening++;
    try {
      call();
    } catch (error) {
      this.log({
        level: 'warn',
        message: `placement ${kind} listener threw: ${error instanceof Error ? error.message : String(error)}`,
        details: { error },
      });
    } finally {
      this.listening--;
    }
  }
}

/** A log sink that cannot throw into the store: a failing sink must not leave an update half-processed. */
function safeLog(log: PlacementLog): PlacementLog {
  return (event) => {
    try {
      log(event);
    } catch {
      // Nowhere left to report it.
    }
  };
}

/** What settling slot changes leaves to do once the indexes are up to date. */
interface Settlement {
  readonly notices: Array<[string, number[]]>;
  readonly prunes: Array<[Y.Map<SlotValue>, string, string]>;
  readonly repairs: Array<[Y.Map<SlotValue>, string, OwnWrite]>;
}

function newSettlement(): Settlement {
  return { notices: [], prunes: [], repairs: [] };
}

function shareName(doc: Y.Doc, type: object): string | undefined {
  for (const [name, shared] of doc.share) if (shared === type) return name;
  return undefined;
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

interface OwnWrite {
  readonly target: string | null;
  readonly hlc: Hlc;
}

function ownWriteKey(typeName: string, shardId: number): string {
  return `${typeName}\u0000${shardId}`;
}

// A private copy: lib0 views read past a subarray's end into its buffer instead of failing.
function copyBytes(bytes: unknown, code: 'malformed_update' | 'malformed_state_vector', what: string): Uint8Array {
  if (!(bytes instanceof Uint8Array)) {
    throw new PlacementStoreError(code, `${what} must be a Uint8Array, got ${describe(bytes)}`);
  }
  return Uint8Array.from(bytes);
}

function checkStateVector(bytes: Uint8Array): void {
  try {
    const decoder = decoding.createDecoder(bytes);
    const entries = decoding.readVarUint(decoder);
    for (let i = 0; i < entries; i++) {
      decoding.readVarUint(decoder);
      decoding.readVarUint(decoder);
    }
    if (decoding.hasContent(decoder)) throw new Error(`${bytes.length - decoder.pos} trailing bytes`);
  } catch (cause) {
    throw new PlacementStoreError(
      'malformed_state_vector',
      `state vector rejected: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
}
