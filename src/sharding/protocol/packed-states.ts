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

/** Bytes of a packed chunk's header, its u32 count of entities. */
export const PACKED_HEADER_BYTES = 4;

/** Bytes of an entity id in a packed chunk: the u16 length prefix bounds it. */
const MAX_ID_BYTES = 0xffff;

/** Strict UTF-8 (a malformed id is refused) that keeps a leading BOM, so unpack then pack gives the same bytes. */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The entities as one packed binary; throws `RangeError` on an id over 65,535 UTF-8 bytes (never on the wire). */
export function packEntities(entities: ReadonlyArray<WireEntityState>): Uint8Array {
  let size = PACKED_HEADER_BYTES;
  for (const { entityId, state } of entities) size += 6 + entityId.length * 3 + state.byteLength;
  const writer = new PackedWriter(size);
  for (const { entityId, state } of entities) writer.add(entityId, state);
  return writer.finish().packed;
}

/**
 * Builds one packed chunk entity by entity, copying each state in as it comes (the old host encodes a state
 * into a scratch buffer and this keeps the only copy): `finish` gives the bytes and each state as a view of them.
 */
export class PackedWriter {
  /** The chunk's memory; `writer` is a Buffer over the same bytes for its write methods. */
  private bytes: Uint8Array;
  private writer: Buffer;
  private at = PACKED_HEADER_BYTES;
  private readonly ranges: Array<readonly [string, number, number]> = [];

  constructor(capacity: number) {
    this.bytes = uninitialized(Math.max(64, capacity));
    this.writer = Buffer.from(this.bytes.buffer);
  }

  /** Entities added so far. */
  get count(): number {
    return this.ranges.length;
  }

  /** Appends one entity (its state copied); throws `RangeError` on an id over 65,535 UTF-8 bytes. */
  add(entityId: string, state: Uint8Array): void {
    const ascii = isShortAscii(entityId);
    const idBytes = ascii ? entityId.length : Buffer.byteLength(entityId);
    if (idBytes > MAX_ID_BYTES) throw new RangeError(`entity id of ${idBytes} bytes cannot be packed`);
    const stateBytes = state.length;
    this.reserve(6 + idBytes + stateBytes);
    const { writer, bytes } = this;
    writer.writeUInt16BE(idBytes, this.at);
    // A short ASCII id byte by byte: Buffer's write is a call into C++ that costs more than the id.
    if (ascii) for (let i = 0; i < idBytes; i++) bytes[this.at + 2 + i] = entityId.charCodeAt(i);
    else writer.write(entityId, this.at + 2);
    const stateAt = this.at + 2 + idBytes + 4;
    writer.writeUInt32BE(stateBytes, stateAt - 4);
    this.bytes.set(state, stateAt);
    this.ranges.push([entityId, stateAt, stateAt + stateBytes]);
    this.at = stateAt + stateBytes;
  }

  /** The chunk: its bytes (no more than twice their size kept alive) and its entities, views of them. */
  finish(): { readonly packed: Uint8Array; readonly entities: WireEntityState[] } {
    this.writer.writeUInt32BE(this.ranges.length, 0);
    const used = this.bytes.subarray(0, this.at);
    const packed = this.bytes.byteLength > 2 * this.at ? used.slice() : used;
    // Views made by the Uint8Array constructor, as unpackEntities makes them: a subarray each cost more.
    const { buffer, byteOffset } = packed;
    const entities: WireEntityState[] = [];
    for (const [entityId, start, end] of this.ranges)
      entities.push({ entityId, state: new Uint8Array(buffer, byteOffset + start, end - start) });
    return { packed, entities };
  }

  private reserve(bytes: number): void {
    if (this.at + bytes <= this.bytes.length) return;
    const grown = uninitialized(Math.max(2 * this.bytes.byteLength, this.at + bytes));
    grown.set(this.bytes.subarray(0, this.at));
    this.bytes = grown;
    this.writer = Buffer.from(grown.buffer);
  }
}

/**
 * A chunk's memory (an ArrayBuffer of its own), not zeroed: every byte a chunk gives out (up to `at`) is written
 * first. Zeroing 256 KiB touched every page of it even for a final chunk of one state (S10's hop in process:
 * 42% of a hop's time).
 */
function uninitialized(bytes: number): Uint8Array {
  const memory = Buffer.allocUnsafeSlow(bytes);
  return new Uint8Array(memory.buffer, memory.byteOffset, memory.length);
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
  // `length`, read once: a typed array's byteLength getter is a call per use here (Node 20), a tenth of this parse.
  const size = bytes.length;
  if (size < PACKED_HEADER_BYTES) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, size);
  const count = view.getUint32(0);
  // Each entity takes at least 7 bytes: a count the bytes cannot hold is refused before any work for it.
  if (count > limits.maxEntities || count * 7 > size - PACKED_HEADER_BYTES) return undefined;
  const entities: WireEntityState[] = [];
  // Views made by the Uint8Array constructor: a Buffer's own subarray cost a third of this parse (bench/state-chunks-tcp.ts).
  const { buffer, byteOffset } = bytes;
  // One Buffer over the bytes, to read each ASCII id as one string (its toString), not a string per character.
  const text = Buffer.from(buffer, byteOffset, size);
  let at = PACKED_HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    if (at + 2 > size) return undefined;
    const idEnd = at + 2 + view.getUint16(at);
    if (idEnd + 4 > size) return undefined;
    const stateEnd = idEnd + 4 + view.getUint32(idEnd);
    if (stateEnd > size) return undefined;
    const entityId = readId(text, at + 2, idEnd, limits.maxEntityIdLength);
    if (entityId === undefined) return undefined;
    entities.push({ entityId, state: new Uint8Array(buffer, byteOffset + idEnd + 4, stateEnd - idEnd - 4) });
    at = stateEnd;
  }
  return at === size ? entities : undefined;
}

/** Ids at most this long are checked byte by byte for ASCII, then read as one string: the decoder costs more. */
const SHORT_ID_BYTES = 64;

/** The id in `bytes[start..end)`: strict UTF-8 of 1..`maxLength` UTF-16 units, else undefined. */
function readId(bytes: Buffer, start: number, end: number, maxLength: number): string | undefined {
  if (end === start) return undefined;
  const ascii = end - start <= SHORT_ID_BYTES ? asciiText(bytes, start, end) : undefined;
  let id: string;
  try {
    id = ascii ?? utf8.decode(new Uint8Array(bytes.buffer, bytes.byteOffset + start, end - start));
  } catch {
    return undefined;
  }
  return id.length <= maxLength ? id : undefined;
}

/** Whether `text` is at most SHORT_ID_BYTES characters, all ASCII (then its UTF-8 is its char codes). */
function isShortAscii(text: string): boolean {
  if (text.length > SHORT_ID_BYTES) return false;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) >= 0x80) return false;
  return true;
}

/**
 * The bytes as text when every one is ASCII (then UTF-8, ASCII and Latin-1 agree), else undefined. Read by
 * toString once checked, not built a character at a time (57-66 ns an id against 82-171 in a microbenchmark; S10's
 * hop in process a little faster in five alternations of five).
 */
function asciiText(bytes: Buffer, start: number, end: number): string | undefined {
  for (let i = start; i < end; i++) if ((bytes[i] as number) >= 0x80) return undefined;
  return bytes.toString('latin1', start, end);
}
