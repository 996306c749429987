// The replicated placement store: one Y.Doc, one top-level Y.Map per entity type, one slot per (shard, writer)
// so Yjs never has to resolve a conflict; the visible placement of a shard is its slot with the greatest hlc.
import * as decoding from 'lib0/decoding';
import * as Y from 'yjs';
import { UPDATE_EVENT, applyUpdate as applyEncodedUpdate, encodeStateAsUpdate } from './codec.js';
import { MAX_NODE_LENGTH, MAX_UPDATE_STRUCTS, PlacementStoreError, describe, nameProblem } from './errors.js';
import { HybridLogicalClock, compareHlc, successor, type Hlc } from './hlc.js';
import { silentLog, type PlacementLog } from './log.js';
import { EMPTY_SNAPSHOT, SnapshotIndex, type Placement, type PlacementSnapshot, type SlotChange } from './snapshot.js';
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

export interface PlacementStoreOptions {
  /** This node's stable name: the writer of every slot this store writes. */
  readonly node: string;
  readonly now?: () => number;
  /** Default 60_000. */
  readonly maxDriftMs?: number;
  readonly log?: PlacementLog;
  /** Remote updates with more structs are rejected. Default MAX_UPDATE_STRUCTS (2,000,000). */
  readonly maxUpdateStructs?: number;
}

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
}

export type UpdateListener = (update: Uint8Array, origin: 'local' | 'remote') => void;
export type ChangeListener = (typeName: string, shardIds: readonly number[]) => void;

// Transaction origins: only updates applied from peers are 'remote'; prunes are this node's own writes.
const REMOTE = Symbol('placement-remote');
const LOCAL = Symbol('placement-local');

export class PlacementStore {
  readonly node: string;
  private readonly doc = new Y.Doc();
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
    this.node = options.node;
    this.maxUpdateStructs = maxUpdateStructs;
    this.log = safeLog(options.log ?? silentLog);
    this.clock = new HybridLogicalClock(options.node, {
      ...(options.now === undefined ? {} : { now: options.now }),
      ...(options.maxDriftMs === undefined ? {} : { maxDriftMs: options.maxDriftMs }),
      onDrift: (remote, localWallMs) => this.reportDrift(remote, localWallMs),
    });
    this.doc.on('afterTransaction', (transaction: Y.Transaction) => this.afterTransaction(transaction));
    this.doc.on(UPDATE_EVENT, (update: Uint8Array, origin: unknown) => {
      const source = origin === REMOTE ? 'remote' : 'local';
      for (const listener of [...this.updateListeners]) this.guard('update', () => listener(update, source));
    });
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

  encodeStateVector(): Uint8Array {
    return Y.encodeStateVector(this.doc);
  }

  /** Everything a peer with `remoteStateVector` lacks, including the full delete set. */
  encodeDiff(remoteStateVector: Uint8Array): Uint8Array {
    const stateVector = copyBytes(remoteStateVector, 'malformed_state_vector', 'state vector');
    checkStateVector(stateVector);
    return encodeStateAsUpdate(this.doc, stateVector);
  }

  /** Applies a peer's update; idempotent and order-free. A malformed update throws and changes nothing. */
  applyUpdate(update: Uint8Array): void {
    let typeNames: ReadonlySet<string>;
    const bytes = copyBytes(update, 'malformed_update', 'update');
    try {
      typeNames = checkUpdate(bytes, this.maxUpdateStructs);
    } catch (error) {
      this.rejectedUpdates++;
      throw error;
    }
    // Created up front so that Yjs integrates into Y.Maps we track rather than into anonymous types.
    for (const typeName of typeNames) this.mapFor(typeName);
    try {
      applyEncodedUpdate(this.doc, bytes, REMOTE);
    } catch (cause) {
      // Not expected after checkUpdate; reported as the typed error rather than a Yjs internal one.
      this.rejectedUpdates++;
      const reason = cause instanceof Error ? cause.message : String(cause);
      this.log({ level: 'warn', message: `Yjs failed to apply a checked placement update: ${reason}` });
      throw new PlacementStoreError('malformed_update', `placement update rejected by Yjs: ${reason}`, { cause });
    }
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
    return hlcs;
  }

  private mapFor(typeName: string): Y.Map<SlotValue> {
    let map = this.maps.get(typeName);
    if (map === undefined) {
      map = this.doc.getMap<SlotValue>(typeName);
      this.maps.set(typeName, map);
      this.typeOf.set(map, typeName);
      this.indexes.set(typeName, new SnapshotIndex());
      this.typeNameList = Object.freeze([...this.maps.keys()].sort());
    }
    return map;
  }

  private afterTransaction(transaction: Y.Transaction): void {
    const remote = transaction.origin === REMOTE;
    const notices: Array<[string, number[]]> = [];
    const prunes: Array<[Y.Map<SlotValue>, string, string]> = [];
    const repairs: Array<[Y.Map<SlotValue>, string, OwnWrite]> = [];
    for (const [type, keys] of transaction.changed) {
      const typeName = this.typeNameOf(type);
      if (typeName === undefined) continue;
      const map = this.mapFor(typeName);
      const index = this.indexes.get(typeName) as SnapshotIndex;
      const changes: SlotChange[] = [];
      for (const key of keys) {
        const parsed = key === null ? null : parseSlotKey(key);
        if (parsed === null || key === null) continue;
        changes.push({ shardId: parsed.shardId, writer: parsed.writer, slot: this.readSlot(map, key, parsed.shardId, parsed.writer) });
      }
      // Indexed before anything that calls out (clock, log): the document already holds these slots, so
      // the snapshot must show them whatever a callback does.
      const visible = index.apply(changes);
      if (remote) for (const { slot } of changes) if (slot !== undefined) this.receiveClock(slot.hlc);
      if (visible.length > 0) notices.push([typeName, visible]);
      for (const shardId of new Set(changes.map((change) => change.shardId))) {
        const key = slotKey(shardId, this.node);
        const own = index.slot(shardId, this.node);
        const winner = index.winner(shardId);
        const lost = remote ? this.lostOwnWrite(typeName, shardId, own, winner) : undefined;
        if (lost !== undefined) repairs.push([map, key, lost]);
        else if (own !== undefined && winner !== undefined && compareHlc(winner.hlc, own.hlc) > 0) {
          prunes.push([map, key, ownWriteKey(typeName, shardId)]);
        }
      }
    }
    if (prunes.length > 0 || repairs.length > 0) {
      // Runs after this transaction's cleanup (Yjs queues it), still before applyUpdate/set return.
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
    const known = this.typeOf.get(type);
    if (known !== undefined) return known;
    for (const [name, shared] of this.doc.share) if (shared === type) return name;
    return undefined;
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
    try {
      call();
    } catch (error) {
      this.log({
        level: 'warn',
        message: `placement ${kind} listener threw: ${error instanceof Error ? error.message : String(error)}`,
        details: { error },
      });
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
