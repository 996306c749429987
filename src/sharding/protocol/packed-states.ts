// A chunk of hand-off state as one binary (protocol 8): `[u32 count]` then per entity `[u16 idBytes][id UTF-8]
// [u32 stateBytes][state]`, all big-endian. Encoded once by the old host, relayed as the same bytes, and read
// by the receiver with one bounds check and one view per entity, where a msgpack array of maps cost a map
// decode per entity at every hop (bench S10). The bytes come from the network: every length is checked
// against what is left before it is used, and anything but an exact, complete encoding is refused whole.

/** One entity's encoded snapshot (see region/shard-state.ts). */
export interface WireEntityState {
  readonly entityId: string;
  readonly state: Uint8Array;
}

/** Bytes of an entity id in a packed chunk: the u16 length prefix bounds it. */
const MAX_ID_BYTES = 0xffff;

/** Strict UTF-8 (a malformed id is refused) that keeps a leading BOM, so unpack then pack gives the same bytes. */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The entities as one packed binary; throws `RangeError` on an id over 65,535 UTF-8 bytes (never on the wire). */
export function packEntities(entities: ReadonlyArray<WireEntityState>): Uint8Array {
  let size = 4;
  for (const { entityId, state } of entities) {
    const idBytes = Buffer.byteLength(entityId);
    if (idBytes > MAX_ID_BYTES) throw new RangeError(`entity id of ${idBytes} bytes cannot be packed`);
    size += 2 + idBytes + 4 + state.byteLength;
  }
  // Every byte is written below: no zero fill.
  const out = Buffer.allocUnsafe(size);
  out.writeUInt32BE(entities.length, 0);
  let at = 4;
  for (const { entityId, state } of entities) {
    const idBytes = out.write(entityId, at + 2);
    out.writeUInt16BE(idBytes, at);
    at += 2 + idBytes;
    out.writeUInt32BE(state.byteLength, at);
    out.set(state, at + 4);
    at += 4 + state.byteLength;
  }
  return out;
}

/** What a packed chunk may hold: at most `maxEntities` entities, ids of 1..`maxEntityIdLength` UTF-16 units. */
export interface PackedLimits {
  readonly maxEntities: number;
  readonly maxEntityIdLength: number;
}

/**
 * The entities of a packed chunk, each state a view into `bytes` (no copy); undefined when the bytes are not
 * exactly one well-formed encoding within `limits` (truncated, trailing bytes, a length past the end, a bad id).
 */
export function unpackEntities(bytes: Uint8Array, limits: PackedLimits): WireEntityState[] | undefined {
  if (bytes.byteLength < 4) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = view.getUint32(0);
  // Each entity takes at least 7 bytes: a count the bytes cannot hold is refused before any work for it.
  if (count > limits.maxEntities || count * 7 > bytes.byteLength - 4) return undefined;
  const entities: WireEntityState[] = [];
  let at = 4;
  for (let i = 0; i < count; i++) {
    if (at + 2 > bytes.byteLength) return undefined;
    const idEnd = at + 2 + view.getUint16(at);
    if (idEnd + 4 > bytes.byteLength) return undefined;
    const stateEnd = idEnd + 4 + view.getUint32(idEnd);
    if (stateEnd > bytes.byteLength) return undefined;
    const entityId = readId(bytes.subarray(at + 2, idEnd), limits.maxEntityIdLength);
    if (entityId === undefined) return undefined;
    entities.push({ entityId, state: bytes.subarray(idEnd + 4, stateEnd) });
    at = stateEnd;
  }
  return at === bytes.byteLength ? entities : undefined;
}

function readId(bytes: Uint8Array, maxLength: number): string | undefined {
  if (bytes.byteLength === 0) return undefined;
  let id: string;
  try {
    id = utf8.decode(bytes);
  } catch {
    return undefined;
  }
  return id.length <= maxLength ? id : undefined;
}
