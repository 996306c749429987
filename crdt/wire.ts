// The store's own envelope around Yjs, kept in one place. A state vector is
//   varUint generation | varUint8Array base digest (empty for an empty base) | varUint8Array Yjs state vector
// and an update is
//   varUint generation | varUint flags (1 = base, 2 = document, 4 = base with meta)
//     | [varUint8Array base] | [varUint8Array Yjs V2 update]
// The generation says which document the Yjs part belongs to (compaction starts a new, empty one); the
// base is the compacted part, a plain list of winning slots that any replica can merge at any time.
// Since protocol version 3 a base also carries the slots' meta (flag 4); a base without the flag is read
// the version-2 way, its slots without meta.
import { createHash } from 'node:crypto';
import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';
import * as Y from 'yjs';
import type { BaseState } from './base.js';
import { MAX_NODE_LENGTH, MAX_TARGET_LENGTH, MAX_HLC_COUNTER, PlacementStoreError, nameProblem } from './errors.js';
import {
  canonicalMeta,
  metaKey,
  metaProblem,
  MAX_META_FIELDS,
  MAX_META_STRING_LENGTH,
  type SlotMeta,
} from './slot-meta.js';
import type { Hlc } from './hlc.js';
import { typeNameProblem, type Slot } from './slots.js';

export interface WireStateVector {
  readonly generation: number;
  readonly baseDigest: Uint8Array;
  readonly doc: Uint8Array;
}

export interface BaseEntries {
  readonly typeName: string;
  readonly slots: readonly Slot[];
}

export interface WireUpdate {
  readonly generation: number;
  readonly base: readonly BaseEntries[] | undefined;
  readonly doc: Uint8Array | undefined;
}

const HAS_BASE = 1;
const HAS_DOC = 2;
const BASE_WITH_META = 4;
// A meta record's JSON: its fields' names, values and punctuation, escapes included (6 code units per char).
const MAX_META_JSON_LENGTH = MAX_META_FIELDS * (40 + 6 * MAX_META_STRING_LENGTH);
const EMPTY = new Uint8Array(0);

export function encodeWireStateVector(stateVector: WireStateVector): Uint8Array {
  return encoding.encode((encoder) => {
    encoding.writeVarUint(encoder, stateVector.generation);
    encoding.writeVarUint8Array(encoder, stateVector.baseDigest);
    encoding.writeVarUint8Array(encoder, stateVector.doc);
  });
}

export function decodeWireStateVector(bytes: Uint8Array): WireStateVector {
  return strictly(bytes, 'malformed_state_vector', 'state vector', (decoder) => ({
    generation: readGeneration(decoder),
    baseDigest: decoding.readVarUint8Array(decoder),
    doc: decoding.readVarUint8Array(decoder),
  }));
}

/** `base` is already encoded (encodeBase), so a cached encoding can be sent as is. */
export function encodeWireUpdate(
  generation: number,
  base: Uint8Array | undefined,
  doc: Uint8Array | undefined,
): Uint8Array {
  return encoding.encode((encoder) => {
    encoding.writeVarUint(encoder, generation);
    encoding.writeVarUint(
      encoder,
      (base === undefined ? 0 : HAS_BASE | BASE_WITH_META) | (doc === undefined ? 0 : HAS_DOC),
    );
    if (base !== undefined) encoding.writeVarUint8Array(encoder, base);
    if (doc !== undefined) encoding.writeVarUint8Array(encoder, doc);
  });
}

/** Decodes and validates the envelope and the base; the Yjs part is checked by update-guard.ts. */
export function decodeWireUpdate(
  bytes: Uint8Array,
  maxBaseSlots: number,
  onSlot?: (typeName: string, shardId: number) => void,
): WireUpdate {
  return strictly(bytes, 'malformed_update', 'update', (decoder) => {
    const generation = readGeneration(decoder);
    const flags = decoding.readVarUint(decoder);
    if ((flags & ~(HAS_BASE | HAS_DOC | BASE_WITH_META)) !== 0) throw new Error(`unknown flags ${flags}`);
    const withMeta = (flags & BASE_WITH_META) !== 0;
    const base =
      (flags & HAS_BASE) === 0
        ? undefined
        : decodeBase(decoding.readVarUint8Array(decoder), maxBaseSlots, withMeta, onSlot);
    const doc = (flags & HAS_DOC) === 0 ? undefined : decoding.readVarUint8Array(decoder);
    return { generation, base, doc };
  });
}

/**
 * Whether the replica with state vector `remote` holds document updates the one with `local` lacks: it is
 * on a later generation, or on the same one with a writer's clock further on. Both are trusted encodings
 * (`remote` was decoded once already); undefined when either does not decode.
 */
export function lacksUpdatesOf(local: Uint8Array, remote: Uint8Array): boolean | undefined {
  try {
    const mine = decodeWireStateVector(local);
    const theirs = decodeWireStateVector(remote);
    if (theirs.generation !== mine.generation) return theirs.generation > mine.generation;
    const have = Y.decodeStateVector(mine.doc);
    for (const [client, clock] of Y.decodeStateVector(theirs.doc)) if (clock > (have.get(client) ?? 0)) return true;
    return false;
  } catch {
    return undefined;
  }
}

/** The generation an update or state vector belongs to, or undefined when the bytes do not start with one. */
export function generationOf(bytes: Uint8Array): number | undefined {
  try {
    const generation = decoding.readVarUint(decoding.createDecoder(bytes));
    return Number.isSafeInteger(generation) ? generation : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Canonical encoding of a base: types in name order, slots in shard order, so equal bases encode equally.
 * Writers and targets are a few node names repeated over many shards, so each slot refers to them by
 * their index in one sorted string table; meta records likewise, by index in a sorted table of their JSON.
 */
export function encodeBase(base: BaseState): Uint8Array {
  const typeNames = base.typeNames().sort();
  const slotsByType = typeNames.map((typeName) => base.slotsOf(typeName));
  const strings = new Set<string>();
  for (const slots of slotsByType) {
    for (const slot of slots) {
      strings.add(slot.writer);
      if (slot.target !== null) strings.add(slot.target);
      if (slot.over !== undefined) strings.add(slot.over.node);
    }
  }
  const table = [...strings].sort();
  const indexOf = new Map(table.map((text, i) => [text, i]));
  const metas = new Map<string, SlotMeta>();
  for (const slots of slotsByType) for (const { meta } of slots) if (meta !== undefined) metas.set(metaKey(meta), meta);
  const metaTable = [...metas.keys()].sort();
  const metaIndexOf = new Map(metaTable.map((key, i) => [key, i]));
  return encoding.encode((encoder) => {
    encoding.writeVarUint(encoder, table.length);
    for (const text of table) encoding.writeVarString(encoder, text);
    encoding.writeVarUint(encoder, metaTable.length);
    for (const key of metaTable)
      encoding.writeVarString(encoder, JSON.stringify(canonicalMeta(metas.get(key) as SlotMeta)));
    encoding.writeVarUint(encoder, typeNames.length);
    typeNames.forEach((typeName, t) => {
      const slots = slotsByType[t] as Slot[];
      encoding.writeVarString(encoder, typeName);
      encoding.writeVarUint(encoder, slots.length);
      for (const slot of slots) {
        encoding.writeVarUint(encoder, slot.shardId);
        encoding.writeVarUint(encoder, indexOf.get(slot.writer) as number);
        // 0 is a tombstone, n + 1 the target at table index n.
        encoding.writeVarUint(encoder, slot.target === null ? 0 : (indexOf.get(slot.target) as number) + 1);
        encoding.writeVarUint(encoder, slot.hlc.wallMs);
        encoding.writeVarUint(encoder, slot.hlc.counter);
        // 0 is no meta, n + 1 the meta at table index n.
        encoding.writeVarUint(
          encoder,
          slot.meta === undefined ? 0 : (metaIndexOf.get(metaKey(slot.meta)) as number) + 1,
        );
      }
    });
    // Override marks (slots.ts `over`) trail the slots, and only when there are any: a base without them
    // encodes (and digests) as before.
    const overs: Array<readonly [number, number, Hlc]> = [];
    slotsByType.forEach((slots, t) =>
      slots.forEach((slot, i) => slot.over !== undefined && overs.push([t, i, slot.over])),
    );
    if (overs.length === 0) return;
    encoding.writeVarUint(encoder, overs.length);
    for (const [t, i, over] of overs) {
      encoding.writeVarUint(encoder, t);
      encoding.writeVarUint(encoder, i);
      encoding.writeVarUint(encoder, over.wallMs);
      encoding.writeVarUint(encoder, over.counter);
      encoding.writeVarUint(encoder, indexOf.get(over.node) as number);
    }
  });
}

/** What two replicas compare to know whether their bases differ; empty for an empty base. */
export function baseDigest(base: BaseState): Uint8Array {
  if (base.slotCount === 0) return EMPTY;
  return base.cachedDigest(() => new Uint8Array(createHash('sha256').update(encodeBase(base)).digest()));
}

/** `onSlot` sees each slot as it is read, so a check of it can stop a huge base early (by throwing). */
function decodeBase(
  bytes: Uint8Array,
  maxSlots: number,
  withMeta: boolean,
  onSlot?: (typeName: string, shardId: number) => void,
): BaseEntries[] {
  const decoder = decoding.createDecoder(bytes);
  const stringCount = decoding.readVarUint(decoder);
  if (stringCount > 2 * maxSlots) throw new Error(`base has more than ${2 * maxSlots} strings`);
  const table: string[] = [];
  for (let i = 0; i < stringCount; i++) table.push(decoding.readVarString(decoder));
  const string = (index: number, what: string, limit: number): string => {
    const text = table[index];
    if (text === undefined) throw new Error(`base slot ${what} refers to string ${index} of ${table.length}`);
    const problem = nameProblem(text, limit);
    if (problem !== null) throw new Error(`base slot ${what} ${problem}`);
    return text;
  };
  const metaTable = withMeta ? readMetaTable(decoder, maxSlots) : [];
  const types: BaseEntries[] = [];
  let budget = maxSlots;
  const typeCount = decoding.readVarUint(decoder);
  for (let t = 0; t < typeCount; t++) {
    const typeName = decoding.readVarString(decoder);
    const typeProblem = typeNameProblem(typeName);
    if (typeProblem !== null) throw new Error(`base type name ${typeProblem}`);
    const count = decoding.readVarUint(decoder);
    if (count > budget) throw new Error(`base has more than ${maxSlots} slots`);
    budget -= count;
    const slots: Slot[] = [];
    for (let i = 0; i < count; i++) {
      const shardId = decoding.readVarUint(decoder);
      const writer = string(decoding.readVarUint(decoder), 'writer', MAX_NODE_LENGTH);
      const targetRef = decoding.readVarUint(decoder);
      const target = targetRef === 0 ? null : string(targetRef - 1, 'target', MAX_TARGET_LENGTH);
      const wallMs = decoding.readVarUint(decoder);
      const counter = decoding.readVarUint(decoder);
      const metaRef = withMeta ? decoding.readVarUint(decoder) : 0;
      if (!Number.isSafeInteger(shardId)) throw new Error('base slot has an impossible shard id');
      onSlot?.(typeName, shardId);
      if (!Number.isSafeInteger(wallMs) || counter > MAX_HLC_COUNTER)
        throw new Error('base slot has an impossible timestamp');
      const hlc = Object.freeze({ wallMs, counter, node: writer });
      if (metaRef === 0) {
        slots.push(Object.freeze({ shardId, writer, target, hlc }));
        continue;
      }
      const meta = metaTable[metaRef - 1];
      if (meta === undefined) throw new Error(`base slot meta refers to record ${metaRef - 1} of ${metaTable.length}`);
      if (target === null) throw new Error('base tombstone carries meta');
      slots.push(Object.freeze({ shardId, writer, target, hlc, meta }));
    }
    types.push({ typeName, slots });
  }
  if (decoding.hasContent(decoder) && types.some(({ slots }) => slots.length > 0)) {
    readOvers(decoder, types, (index) => string(index, 'over mark node', MAX_NODE_LENGTH));
  }
  if (decoding.hasContent(decoder)) throw new Error('base has trailing bytes');
  return types;
}

/** The override marks after a base's slots: each names a slot by type and position, once, in order. */
function readOvers(decoder: decoding.Decoder, types: BaseEntries[], node: (index: number) => string): void {
  const total = types.reduce((sum, { slots }) => sum + slots.length, 0);
  const count = decoding.readVarUint(decoder);
  if (count < 1 || count > total) throw new Error(`base has ${count} override marks for ${total} slots`);
  let last = -1;
  for (let n = 0; n < count; n++) {
    const t = decoding.readVarUint(decoder);
    const i = decoding.readVarUint(decoder);
    const wallMs = decoding.readVarUint(decoder);
    const counter = decoding.readVarUint(decoder);
    const over = Object.freeze({ wallMs, counter, node: node(decoding.readVarUint(decoder)) });
    const slots = types[t]?.slots as Slot[] | undefined;
    const slot = slots?.[i];
    if (slots === undefined || slot === undefined) throw new Error(`base override mark names no slot (${t}, ${i})`);
    const position = t * (total + 1) + i;
    if (position <= last) throw new Error('base override marks are not in slot order');
    last = position;
    if (!Number.isSafeInteger(wallMs) || counter > MAX_HLC_COUNTER)
      throw new Error('base override mark has an impossible timestamp');
    slots[i] = Object.freeze({ ...slot, over });
  }
}

/** The base's meta records, each length-checked before it is parsed and validated after. */
function readMetaTable(decoder: decoding.Decoder, maxSlots: number): SlotMeta[] {
  const count = decoding.readVarUint(decoder);
  if (count > maxSlots) throw new Error(`base has more than ${maxSlots} meta records`);
  const table: SlotMeta[] = [];
  for (let i = 0; i < count; i++) {
    const json = decoding.readVarString(decoder);
    if (json.length > MAX_META_JSON_LENGTH)
      throw new Error(`base meta record ${i} is longer than ${MAX_META_JSON_LENGTH} characters`);
    const value: unknown = JSON.parse(json);
    const problem = metaProblem(value);
    if (problem !== null) throw new Error(`base meta record ${i} ${problem}`);
    table.push(canonicalMeta(value as SlotMeta));
  }
  return table;
}

/** Reads a generation; for the encodings here and in wire-digest.ts. */
export function readGeneration(decoder: decoding.Decoder): number {
  const generation = decoding.readVarUint(decoder);
  if (!Number.isSafeInteger(generation)) throw new Error('impossible generation');
  return generation;
}

/** Reads `bytes` with `read`, which must consume all of them; any failure becomes a PlacementStoreError `code`. */
export function strictly<T>(
  bytes: Uint8Array,
  code: 'malformed_update' | 'malformed_state_vector' | 'malformed_digest',
  what: string,
  read: (decoder: decoding.Decoder) => T,
): T {
  try {
    const decoder = decoding.createDecoder(bytes);
    const value = read(decoder);
    if (decoding.hasContent(decoder)) throw new Error(`${bytes.length - decoder.pos} trailing bytes`);
    return value;
  } catch (cause) {
    if (cause instanceof PlacementStoreError) throw cause; // a caller's check (onSlot) said why already
    throw new PlacementStoreError(
      code,
      `placement ${what} rejected: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
}

/** The state vector of a replica that holds nothing: `encodeDiff(EMPTY_STATE_VECTOR)` is a replica's whole state. */
export const EMPTY_STATE_VECTOR: Uint8Array = encodeWireStateVector({
  generation: 0,
  baseDigest: EMPTY,
  doc: new Uint8Array([0]),
});
