// Checks a remote update before it may touch the document. It walks the Yjs V2 update format exactly as
// Yjs will when applying it, but streaming and bounded: every struct must be a placement slot (a key of
// a top-level map, with a well-formed key and value), ids must be possible, and the walk must end
// within the bytes and the struct budget. Yjs itself accepts any content, and a corrupt V2 stream can
// make its run-length decoders repeat a value forever, so without this gate one bad frame could plant
// unreadable data, crash integration half-way, or exhaust memory. Timestamps are checked here only for
// shape (safe integers, counter in range): whether a well-formed value counts is the read path's call
// (admission.ts), because refusing a whole update would leave a hole that all later updates of the same
// writer wait behind forever. Slots are counted and their shard ids checked (SlotBudget) because a
// well-formed update can still carry a million slots of a type with a thousand shards.
import * as binary from 'lib0/binary';
import * as decoding from 'lib0/decoding';
import * as Y from 'yjs';
import { MAX_UPDATE_STRUCTS, PlacementStoreError } from './errors.js';
import { isSlotValue, parseSlotKey, typeNameProblem } from './slots.js';
import { decodeWireUpdate, type WireUpdate } from './wire.js';

// Yjs content refs (structs/Item.js contentRefs) and the struct info values it reserves.
const CONTENT_DELETED = 1;
const CONTENT_ANY = 8;
const SKIP = 10;

/** Why a slot of `typeName` may not hold `shardId` (say, beyond the type's shard count), or null. */
export type SlotCheck = (typeName: string, shardId: number) => string | null;

/** What an update may bring beyond well-formedness: how many new slots, and which shard ids. */
export interface SlotLimits {
  /** Most slots (keys written for the first time, plus base slots) one update may carry. */
  readonly maxNewSlots: number;
  readonly check?: SlotCheck | undefined;
}

interface Id {
  readonly client: number;
  readonly clock: number;
}

/**
 * Validates a V2 `update` and returns the entity types it names; throws `malformed_update` otherwise.
 * `maxStructs` bounds the work a single update may cause.
 */
export function checkUpdate(
  update: Uint8Array,
  maxStructs: number = MAX_UPDATE_STRUCTS,
  slots: SlotBudget | undefined = undefined,
): ReadonlySet<string> {
  const typeNames = new Set<string>();
  try {
    walk(new Y.UpdateDecoderV2(decoding.createDecoder(update)), typeNames, maxStructs, slots);
  } catch (cause) {
    if (cause instanceof PlacementStoreError) throw cause;
    throw malformed(`cannot be decoded (${cause instanceof Error ? cause.message : String(cause)})`, cause);
  }
  return typeNames;
}

/**
 * Counts the slots an update brings and checks their shard ids; throws `too_many_slots` or
 * `shard_out_of_range`. One budget may span an update's base and its document.
 */
export class SlotBudget {
  private left: number;
  constructor(private readonly limits: SlotLimits) {
    this.left = limits.maxNewSlots;
  }

  take(typeName: string, shardId: number): void {
    if (--this.left < 0) {
      throw new PlacementStoreError(
        'too_many_slots',
        `placement update rejected: it brings more than ${this.limits.maxNewSlots} slots at once`,
      );
    }
    const problem = this.limits.check?.(typeName, shardId) ?? null;
    if (problem !== null) {
      throw new PlacementStoreError(
        'shard_out_of_range',
        `placement update rejected: shard ${shardId} of type ${JSON.stringify(typeName.slice(0, 60))} ${problem}`,
      );
    }
  }
}

/**
 * Decodes a wire update (wire.ts) and checks its document part and, with `limits`, every slot it brings;
 * returns it with the entity types its document names. Throws a typed error otherwise.
 */
export function checkWireUpdate(
  bytes: Uint8Array,
  maxStructs: number,
  limits: SlotLimits | undefined,
): { wire: WireUpdate; typeNames: ReadonlySet<string> } {
  const slots = limits === undefined ? undefined : new SlotBudget(limits);
  // Base slots are checked as they are decoded: a forged base of a million slots stops at the first bad one.
  const wire = decodeWireUpdate(
    bytes,
    maxStructs,
    slots === undefined ? undefined : (typeName, shardId) => slots.take(typeName, shardId),
  );
  return { wire, typeNames: wire.doc === undefined ? new Set() : checkUpdate(wire.doc, maxStructs, slots) };
}

function walk(
  decoder: Y.UpdateDecoderV2,
  typeNames: Set<string>,
  maxStructs: number,
  slots: SlotBudget | undefined,
): void {
  const rest = decoder.restDecoder;
  let budget = maxStructs;
  const clients = decoding.readVarUint(rest);
  for (let c = 0; c < clients; c++) {
    const structs = decoding.readVarUint(rest);
    if (structs > budget) throw malformed(`has more than ${maxStructs} structs`);
    budget -= structs;
    const client = decoder.readClient();
    let clock = decoding.readVarUint(rest);
    for (let s = 0; s < structs; s++) {
      const id = { client, clock };
      if (!isId(id)) throw malformed(`has an impossible struct id ${where(id)}`);
      const info = decoder.readInfo();
      let length: number;
      if (info === SKIP) {
        length = decoding.readVarUint(rest);
      } else if ((binary.BITS5 & info) !== 0) {
        length = checkItem(decoder, info, id, typeNames, slots);
      } else {
        length = decoder.readLen(); // GC: a deleted range, no content
      }
      if (!isCount(length)) throw malformed(`struct ${where(id)} has an impossible length`);
      clock += length;
    }
  }
  const deleteClients = decoding.readVarUint(rest);
  for (let c = 0; c < deleteClients; c++) {
    decoder.resetDsCurVal();
    const client = decoding.readVarUint(rest);
    const ranges = decoding.readVarUint(rest);
    for (let r = 0; r < ranges; r++) {
      const clock = decoder.readDsClock();
      const len = decoder.readDsLen();
      if (!isId({ client, clock }) || !isCount(len)) throw malformed('has an impossible delete set range');
    }
  }
}

/** Reads one item in Yjs' field order, rejecting it as soon as it cannot be a slot; returns its length. */
function checkItem(
  decoder: Y.UpdateDecoderV2,
  info: number,
  id: Id,
  typeNames: Set<string>,
  slots: SlotBudget | undefined,
): number {
  const fail = (problem: string): PlacementStoreError =>
    malformed(`struct ${where(id)} is not a placement slot: ${problem}`);
  // Map entries never have a right origin; an entry with a left origin inherits parent and key from it,
  // and that origin went through this same check (or was written locally).
  if ((info & binary.BIT7) !== 0) throw fail('has a right origin, so it is a list element, not a map entry');
  if ((info & binary.BIT8) !== 0) {
    const origin = decoder.readLeftID();
    if (!isId(origin)) throw fail('has an impossible origin id');
    // Yjs assumes a client's structs only point back at that client's earlier structs and crashes otherwise.
    if (origin.client === id.client && origin.clock >= id.clock)
      throw fail(`its origin ${where(origin)} is not an earlier struct`);
  } else {
    if (!decoder.readParentInfo()) throw fail('is nested in another type, placement maps are top-level');
    const parent = decoder.readString();
    const nameProblem = typeNameProblem(parent);
    if (nameProblem !== null) throw fail(`type name ${nameProblem}`);
    if ((info & binary.BIT6) === 0) throw fail('has no map key');
    const key = decoder.readString();
    const slot = parseSlotKey(key);
    if (slot === null) throw fail(`key ${JSON.stringify(key.slice(0, 60))} is not shardId + U+0000 + writer`);
    // Without an origin this is the key's first item: a new slot (later writes of it point back at it).
    slots?.take(parent, slot.shardId);
    typeNames.add(parent);
  }
  const content = info & binary.BITS5;
  if (content === CONTENT_DELETED) return decoder.readLen();
  if (content !== CONTENT_ANY) throw fail(`content type ${content} is not allowed, only plain slot values`);
  const length = decoder.readLen();
  if (!isCount(length)) throw fail('has no value');
  for (let i = 0; i < length; i++) {
    const value: unknown = decoder.readAny();
    if (!isSlotValue(value))
      throw fail('value is not [target | null, wallMs, counter, meta?] with a valid target, timestamp and meta');
  }
  return length;
}

function isId(id: Id): boolean {
  return (
    Number.isInteger(id.client) &&
    id.client >= 0 &&
    id.client <= 0xffffffff &&
    Number.isSafeInteger(id.clock) &&
    id.clock >= 0
  );
}

function isCount(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 1;
}

function where(id: Id): string {
  return `${id.client}:${id.clock}`;
}

function malformed(reason: string, cause?: unknown): PlacementStoreError {
  return new PlacementStoreError('malformed_update', `placement update rejected: ${reason}`, { cause });
}
