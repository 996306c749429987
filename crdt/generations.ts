// The store's state across compactions: the current document of generation `gen`, the base that earlier
// generations were folded into, the previous document (kept so late updates of peers still on it count),
// and per entity type the document's Y.Map and its snapshot index. The store decides when to compact
// and what a transaction means; this module only holds and swaps the pieces.
import * as Y from 'yjs';
import { BaseState } from './base.js';
import { encodeStateAsUpdate } from './codec.js';
import { checkStateVector, equalBytes, shareName } from './bytes.js';
import { SnapshotIndex } from './snapshot.js';
import type { SlotValue } from './slots.js';
import { baseDigest, decodeWireStateVector, encodeBase, encodeWireStateVector, encodeWireUpdate } from './wire.js';

export interface DocumentHooks {
  /** Start listening to a document that becomes current. */
  attach(doc: Y.Doc): void;
  /** Stop listening to the current document, which becomes the previous one. */
  detach(doc: Y.Doc): void;
}

export class Generations {
  doc = new Y.Doc();
  gen = 0;
  readonly base = new BaseState();
  previous: { readonly generation: number; readonly doc: Y.Doc } | undefined;
  private readonly maps = new Map<string, Y.Map<SlotValue>>();
  private readonly typeOf = new Map<object, string>();
  private readonly indexes = new Map<string, SnapshotIndex>();
  private typeNameList: readonly string[] = Object.freeze([]);

  constructor(private readonly hooks: DocumentHooks) {
    hooks.attach(this.doc);
  }

  /** The current document's map of a type, created (with its index) on first use. */
  mapFor(typeName: string): Y.Map<SlotValue> {
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

  indexFor(typeName: string): SnapshotIndex {
    this.mapFor(typeName);
    return this.indexes.get(typeName) as SnapshotIndex;
  }

  existingIndex(typeName: string): SnapshotIndex | undefined {
    return this.indexes.get(typeName);
  }

  allIndexes(): IterableIterator<[string, SnapshotIndex]> {
    return this.indexes.entries();
  }

  /** Every type ever named, sorted; every top-level type is created through mapFor. */
  typeNames(): readonly string[] {
    return this.typeNameList;
  }

  /** The type name of a top-level type of the current document. */
  typeNameOf(type: object): string | undefined {
    return this.typeOf.get(type) ?? shareName(this.doc, type);
  }

  liveSlots(): number {
    let live = 0;
    for (const index of this.indexes.values()) live += index.slotCount;
    return live;
  }

  /** Moves to `generation`: every shard's winner goes to the base, and an empty document takes over. */
  advance(generation: number): void {
    const old = this.doc;
    this.hooks.detach(old);
    for (const [typeName, index] of this.indexes) for (const winner of index.fold()) this.base.merge(typeName, winner);
    this.previous?.doc.destroy();
    this.previous = { generation: this.gen, doc: old };
    this.doc = new Y.Doc();
    this.hooks.attach(this.doc);
    this.maps.clear();
    this.typeOf.clear();
    for (const typeName of [...this.indexes.keys()]) this.mapFor(typeName);
    this.gen = generation;
  }

  releasePrevious(): boolean {
    if (this.previous === undefined) return false;
    this.previous.doc.destroy();
    this.previous = undefined;
    return true;
  }

  /** The generation, the base's digest and the document's Yjs state vector (wire.ts). */
  encodeStateVector(): Uint8Array {
    return encodeWireStateVector({
      generation: this.gen,
      baseDigest: baseDigest(this.base),
      doc: Y.encodeStateVector(this.doc),
    });
  }

  /** See PlacementStore.encodeDiff; `remoteStateVector` is a private copy. */
  encodeDiff(remoteStateVector: Uint8Array): Uint8Array {
    const remote = decodeWireStateVector(remoteStateVector);
    checkStateVector(remote.doc);
    if (remote.generation > this.gen) return encodeWireUpdate(this.gen, encodeBase(this.foldedBase()), undefined);
    const base = equalBytes(remote.baseDigest, baseDigest(this.base)) ? undefined : encodeBase(this.base);
    const since = remote.generation === this.gen ? remote.doc : undefined;
    return encodeWireUpdate(this.gen, base, encodeStateAsUpdate(this.doc, since));
  }

  /** Whether Yjs holds structs or deletions of the current document waiting for a missing update. */
  awaitingMissing(): boolean {
    return this.doc.store.pendingStructs !== null || this.doc.store.pendingDs !== null;
  }

  /** The base this replica would hold after compacting now: every shard's current winner. */
  private foldedBase(): BaseState {
    const folded = new BaseState();
    for (const [typeName, index] of this.indexes) for (const winner of index.winners()) folded.merge(typeName, winner);
    return folded;
  }
}
