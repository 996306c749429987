// Entity states a new host holds still encoded until each entity's first message there (lazy restore): a shard
// of a thousand entities starts without decoding or creating any of them, and a state never woken travels on
// at the next hand-off as the bytes it came in, its value neither decoded nor encoded again. As its chunk arrives
// a state is only told plain (a value alone, as the old host packs most: held as the very entry it came as, no
// object made for it) or has its outline read (the keys of its map, where its value lies) and the sends it
// processed decoded: those must be in the dedup table before any message is admitted, whichever entity it is for.
import { decodeValue, encodeMessage, encodeValue } from '../../cluster/transport/message-codec.js';
import { bytesAt, msgpackMapHeader, msgpackValueEnd } from '../../cluster/transport/msgpack-scan.js';
import type { WireEntityState } from '../protocol/packed-states.js';
import { parseProcessedSends, type ProcessedSends } from './dedup-table.js';
import { readProcessedSends } from './sends-reader.js';

/** The `type` of one entity's encoded state: `{ type, value?, sends? }` (shard-state.ts writes it). */
export const SNAPSHOT = 'EntitySnapshot';

/** One entity's state as it arrived, not decoded: its bytes and where in them its value lies. */
export interface HeldState {
  readonly bytes: Uint8Array;
  /** The value's byte range in `bytes`; undefined when the state held only the sends the entity processed. */
  readonly value: { readonly start: number; readonly end: number } | undefined;
  /** The processed sends `bytes` hold (restored into the dedup table at the start, taken from it again). */
  readonly sends: ReadonlyArray<ProcessedSends>;
  /**
   * The packed chunk the state arrived in, `bytes` a view of it; undefined for a state that came listed (protocol
   * 7). A chunk most of whose states did not change here ships on as it came (reshipped-chunks.ts).
   */
  readonly chunk: ArrivedChunk | undefined;
}

/**
 * A packed chunk as a new host received it (packed-states.ts): its bytes, its entries as read (an entity's entry
 * in a later part of the transfer wins over this one), and its part in its transfer.
 */
export interface ArrivedChunk {
  readonly packed: Uint8Array;
  readonly entities: ReadonlyArray<WireEntityState>;
  readonly part: number;
}

/** A state held here as a stopped shard gives it to be shipped on (one form of shard-state.ts's TakenSnapshot). */
export interface HeldSnapshot {
  readonly entityId: string;
  readonly ok: true;
  readonly held: HeldState;
}

export type SkimmedState =
  { readonly ok: true; readonly held: HeldState } | { readonly ok: false; readonly reason: string };

const copy = (bytes: Uint8Array): Uint8Array => Uint8Array.from(bytes);
const TYPE_KEY = copy(encodeValue('type'));
const VALUE_KEY = copy(encodeValue('value'));
const SENDS_KEY = copy(encodeValue('sends'));
const SNAPSHOT_BYTES = copy(encodeValue(SNAPSHOT));
/** The keys a state has, as this code encodes them (another encoding of the same text is decoded instead). */
const KEYS = [['type', TYPE_KEY] as const, ['value', VALUE_KEY] as const, ['sends', SENDS_KEY] as const];
/** `type: SNAPSHOT, value: ` after a map's header: a state is spliced from these and its value's bytes. */
const TYPE_AND_VALUE_KEY = Uint8Array.from([...TYPE_KEY, ...SNAPSHOT_BYTES, ...VALUE_KEY]);
const FIXMAP = 0x80;

/**
 * Reads a state's outline: its top-level keys, where its value lies (skipped over header by header, never
 * past the end: work bounded by the bytes' length, msgpack-scan.ts), and its sends, decoded (message-codec.ts checks them
 * first). The value is checked when it is decoded, at its entity's creation. Not ok when the bytes are not a
 * snapshot. `chunk`: the packed chunk `bytes` are a view of, kept with the state (HeldState's `chunk`).
 */
export function skimState(bytes: Uint8Array, chunk?: ArrivedChunk): SkimmedState {
  const plain = plainState(bytes, chunk);
  if (plain !== undefined) return { ok: true, held: plain };
  try {
    const map = msgpackMapHeader(bytes, 0);
    if (map === undefined) return { ok: false, reason: 'not an entity snapshot' };
    let isSnapshot = false;
    let value: HeldState['value'];
    let sendsRange: { start: number; end: number } | undefined;
    let pos = map.next;
    // As msgpackr reads a map into an object: a later key wins, keys this code does not write are ignored.
    for (let pair = 0; pair < map.pairs; pair++) {
      const start = valueEnd(bytes, pos);
      const key = keyAt(bytes, pos, start);
      const end = valueEnd(bytes, start);
      pos = end;
      if (key === 'type') isSnapshot = sameText(bytes, start, end, SNAPSHOT_BYTES, SNAPSHOT);
      else if (key === 'value') value = { start, end };
      else if (key === 'sends') sendsRange = { start, end };
    }
    if (!isSnapshot) return { ok: false, reason: 'not an entity snapshot' };
    const sends = sendsRange === undefined ? NO_SENDS : readSends(bytes, sendsRange.start, sendsRange.end);
    if (sends === undefined) return { ok: false, reason: 'malformed processed sends' };
    return { ok: true, held: { bytes, value, sends, chunk } };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}

/** No processed sends: one list for every state that carries none. */
export const NO_SENDS: ReadonlyArray<ProcessedSends> = [];

/** The processed sends in `bytes[start..end)` (read in place: sends-reader.ts; else decoded and checked), or undefined. */
function readSends(bytes: Uint8Array, start: number, end: number): ReadonlyArray<ProcessedSends> | undefined {
  const read = readProcessedSends(bytes, start, end);
  if (read !== undefined) return read;
  const decoded = decodeValue(bytes.subarray(start, end));
  return decoded.ok ? parseProcessedSends(decoded.value) : undefined;
}

/**
 * The outline of the commonest states, a value and the sends the entity processed or none, read by comparisons
 * and one walk of the value's headers: a map of 2 or 3 (as msgpackr writes an object's header, map16, or as
 * reshipState splices one, fixmap), `type: SNAPSHOT, value: `, one value, then `sends: ` and the sends when the
 * map has 3, ending where the bytes end. Undefined for anything else, malformed sends included (the general
 * reading decides); it reads what that reading would, at a fraction of its cost (a thousand states as their
 * chunks arrive, bench S10: with sends, the general reading walked the value twice and compared every key).
 */
function plainState(bytes: Uint8Array, chunk: ArrivedChunk | undefined): HeldState | undefined {
  const header = smallMapHeader(bytes);
  const end = header === 0 ? undefined : plainValueEnd(bytes, header);
  if (end === undefined) return undefined;
  const value = { start: header + TYPE_AND_VALUE_KEY.length, end };
  if (pairsOf(bytes, header) === 2) return end === bytes.length ? { bytes, value, sends: NO_SENDS, chunk } : undefined;
  const sendsAt = end + SENDS_KEY.length;
  if (sendsAt >= bytes.length || !bytesAt(bytes, end, SENDS_KEY)) return undefined;
  // Exactly one value up to the end, or the decoder refuses it.
  const sends = readSends(bytes, sendsAt, bytes.length);
  return sends === undefined ? undefined : { bytes, value, sends, chunk };
}

/**
 * Whether a state is a value alone in the plain form (a map of 2, `type: SNAPSHOT, value: ` and one value up to
 * the end): what plainState reads as a value without sends, told without a single allocation. Such a state is
 * held as the entry it arrived as (HeldEntry) and read again only when its entity wakes or it is packed again.
 */
export function isPlainValue(bytes: Uint8Array): boolean {
  const header = smallMapHeader(bytes);
  return header !== 0 && pairsOf(bytes, header) === 2 && plainValueEnd(bytes, header) === bytes.length;
}

/** Where the value of a state with the plain form's keys after its map's header ends; undefined for another form. */
function plainValueEnd(bytes: Uint8Array, header: number): number | undefined {
  // `length`, not `byteLength`: the getter is a call per use (Node 20), and these loops run for every state.
  const keys = TYPE_AND_VALUE_KEY;
  if (bytes.length <= header + keys.length || !bytesAt(bytes, header, keys)) return undefined;
  const start = header + keys.length;
  const end = textEnd(bytes, start) ?? msgpackValueEnd(bytes, start);
  return typeof end === 'number' ? end : undefined;
}

/**
 * Where a string or binary value at `start` ends, read from its header alone (a state's value most often: S10's
 * is a 1 KiB string); undefined for any other value, or one that runs past the end (the walk then says why).
 */
function textEnd(bytes: Uint8Array, start: number): number | undefined {
  const token = bytes[start] as number;
  let from: number;
  let length: number;
  if (token >= 0xa0 && token < 0xc0) [from, length] = [start + 1, token & 0x1f];
  else if (token === 0xd9 || token === 0xc4) [from, length] = [start + 2, bytes[start + 1] as number];
  else if (token === 0xda || token === 0xc5)
    [from, length] = [start + 3, ((bytes[start + 1] as number) << 8) | (bytes[start + 2] as number)];
  else return undefined;
  const end = from + length;
  return end <= bytes.length ? end : undefined;
}

/** The header's length of a map of 2 or 3 pairs (fixmap, or map16 as msgpackr writes objects), else 0. */
function smallMapHeader(bytes: Uint8Array): number {
  const first = bytes[0];
  if (first === (FIXMAP | 2) || first === (FIXMAP | 3)) return 1;
  const pairs = bytes[2];
  return first === 0xde && bytes[1] === 0 && (pairs === 2 || pairs === 3) ? 3 : 0;
}

/** The pairs of a small map whose header is `header` bytes long (smallMapHeader). */
const pairsOf = (bytes: Uint8Array, header: number): number =>
  header === 1 ? (bytes[0] as number) & 0x0f : (bytes[2] as number);

/**
 * The bytes to ship a held state on with, carrying `sends` (what the dedup table kept of the entity's sends):
 * the bytes as they came when those are the sends they hold, else the value's bytes spliced into a new map.
 * Undefined when there is nothing to ship.
 */
export function reshipState(held: HeldState, sends: ReadonlyArray<ProcessedSends>): Uint8Array | undefined {
  const unchanged = sameSends(sends, held.sends);
  if (held.value === undefined) {
    if (sends.length === 0) return undefined;
    return unchanged ? held.bytes : encodeMessage({ type: SNAPSHOT, sends: [...sends] });
  }
  if (unchanged) return held.bytes;
  const value = held.bytes.subarray(held.value.start, held.value.end);
  // encodeValue's bytes are the result's own: set into `out` as they are.
  const encodedSends = sends.length === 0 ? undefined : encodeValue(sends);
  const tail = encodedSends === undefined ? 0 : SENDS_KEY.byteLength + encodedSends.byteLength;
  const out = new Uint8Array(1 + TYPE_AND_VALUE_KEY.byteLength + value.byteLength + tail);
  out[0] = FIXMAP | (encodedSends === undefined ? 2 : 3);
  let at = 1;
  for (const part of [TYPE_AND_VALUE_KEY, value, ...(encodedSends === undefined ? [] : [SENDS_KEY, encodedSends])]) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

/**
 * An entity's state as a shard holds it: the entry it arrived as, when its state is a value alone in the plain
 * form (isPlainValue: read again when its entity wakes or it is packed again, so a shard of a thousand such
 * states holds no object per state beyond its entry), else its outline.
 */
export type HeldEntry = WireEntityState | HeldState;

/** Whether a held entry is an outline (else the plain entry it arrived as). */
export const isOutline = (entry: HeldEntry): entry is HeldState => 'sends' in entry;

/** Whether a chunk's entry is the one held for its entity (a plain entry itself, or the outline of its bytes). */
export const isEntryOf = (held: HeldEntry | undefined, entry: WireEntityState): boolean =>
  held === entry || (held !== undefined && isOutline(held) && held.bytes === entry.state);

/** A held entry as an outline; `chunk`: the packed chunk a plain entry arrived in, when known. */
export function outlineOf(entry: HeldEntry, chunk?: ArrivedChunk): HeldState {
  if (isOutline(entry)) return entry;
  // A plain entry was read as one when it arrived (isPlainValue): plainState reads it again.
  return plainState(entry.state, chunk) as HeldState;
}

/** A state as read when its chunk arrives: `plain` (isPlainValue: nothing is kept but its entry), or its outline. */
export type ArrivedState = 'plain' | SkimmedState;

/**
 * Reads a state as its chunk arrives: most in a packed chunk are plain (no allocation: the entry is kept, found
 * again from its chunk when the shard moves on), the others, and those of a listed chunk, skimmed (skimState).
 */
export const readArrived = (bytes: Uint8Array, chunk?: ArrivedChunk): ArrivedState =>
  chunk !== undefined && isPlainValue(bytes) ? 'plain' : skimState(bytes, chunk);

/** The states a shard held when it stopped, by entity, and the packed chunks they arrived in, in part order. */
export interface HeldLeft {
  readonly states: ReadonlyMap<string, HeldEntry>;
  readonly chunks: ReadonlyArray<ArrivedChunk>;
  /**
   * The chunks known without a look at their entries: each of them is the state held for its entity but those at
   * the listed indexes (superseded: replaced by a later part at the start, or woken since), so such a chunk goes
   * on as it came without a lookup per entry (reshipped-chunks.ts). Any other chunk's entries are looked up.
   */
  readonly intact: IntactChunks;
  /**
   * The entities whose states carried sends at the start: such a state goes on as it came only while the dedup
   * table keeps the same sends, so it is looked at even in an intact chunk.
   */
  readonly withSends: ReadonlyArray<string>;
}

/** Per chunk known without a look at its entries, the indexes of those that are not held (HeldLeft's `intact`). */
export type IntactChunks = ReadonlyMap<ArrivedChunk, ReadonlyArray<number>>;

/** Wakes a shard tracks for its intact chunks; past this many, none is known intact (each entry is looked up). */
const TRACKED_WAKES = 64;

/** The packed chunk a held entry is a view of, among `chunks`; undefined for one that came listed. */
export function chunkOf(entry: HeldEntry, chunks: ReadonlyArray<ArrivedChunk>): ArrivedChunk | undefined {
  if (isOutline(entry)) return entry.chunk;
  const { buffer, byteOffset } = entry.state;
  return chunks.find(
    ({ packed }) =>
      packed.buffer === buffer && byteOffset >= packed.byteOffset && byteOffset < packed.byteOffset + packed.length,
  );
}

/**
 * The states one shard holds for entities that have had no message since it started here. An entity's state
 * leaves when the entity is created (its value decoded, `ctx.restored`) or when the shard stops (shipped on).
 */
export class HeldStates {
  constructor(
    private states: Map<string, HeldEntry>,
    /** A value that cannot be decoded at the entity's creation: the entity starts fresh. */
    private readonly onUnreadable: (entityId: string, reason: string) => void,
    /** The packed chunks the states arrived in, in the order of their parts (reshipped-chunks.ts reads them). */
    private readonly chunks: ReadonlyArray<ArrivedChunk> = [],
    /** Those of them intact at the start (HeldLeft's `intact`). */
    private intact: IntactChunks = new Map(),
    /** HeldLeft's `withSends`. */
    private readonly withSends: ReadonlyArray<string> = [],
  ) {}

  /** The entries taken out since the start, while few (undefined past TRACKED_WAKES): their chunks are not intact. */
  private woken: HeldEntry[] | undefined = [];

  get size(): number {
    return this.states.size;
  }

  /** Takes the entity's state out: its value, to give it as `ctx.restored`; undefined when it starts fresh. */
  wake(entityId: string): { readonly value: unknown } | undefined {
    const entry = this.states.get(entityId);
    if (entry === undefined) return undefined;
    this.states.delete(entityId);
    if (this.intact.size > 0 && this.woken !== undefined) {
      if (this.woken.length < TRACKED_WAKES) this.woken.push(entry);
      else this.woken = undefined;
    }
    const held = outlineOf(entry);
    if (held.value === undefined) return undefined;
    const decoded = decodeValue(held.bytes.subarray(held.value.start, held.value.end));
    if (decoded.ok) return { value: decoded.value };
    this.onUnreadable(entityId, decoded.reason);
    return undefined;
  }

  /** Takes every state still held out (the shard stops), with the chunks they came in, to be shipped on. */
  drain(): HeldLeft {
    const left = this.now();
    this.states = new Map();
    this.intact = new Map();
    this.woken = [];
    return left;
  }

  /**
   * The states held now, as `drain` would give them, still held: a shard about to move sends the chunks that go
   * as they came ahead of its stop (region-host.ts). Its `states` is this holder's own map: read it at once, before
   * an entity wakes.
   */
  now(): HeldLeft {
    const { states, chunks, woken, withSends } = this;
    const intact = new Map(woken === undefined ? [] : this.intact);
    for (const entry of woken ?? []) {
      const chunk = chunkOf(entry, chunks);
      const superseded = chunk && intact.get(chunk);
      if (chunk === undefined || superseded === undefined) continue;
      const at = chunk.entities.findIndex((arrived) => isEntryOf(entry, arrived));
      if (at < 0) intact.delete(chunk);
      else intact.set(chunk, [...superseded, at]);
    }
    return { states, chunks, intact, withSends };
  }
}

/**
 * Whether `bytes` from `start` to `end` encode the string `text`, whose usual encoding is `encoded`. Compared
 * in place: a view per key of a thousand states costs more than the comparisons.
 */
function sameText(bytes: Uint8Array, start: number, end: number, encoded: Uint8Array, text: string): boolean {
  if (end - start === encoded.length && bytesAt(bytes, start, encoded)) return true;
  // Another encoding of the same string (a str8 header) is still the same string.
  const token = bytes[start];
  if (token !== 0xd9 && token !== 0xda && token !== 0xdb) return false;
  const decoded = decodeValue(bytes.subarray(start, end));
  return decoded.ok && decoded.value === text;
}

const sameNumbers = (x: ReadonlyArray<number>, y: ReadonlyArray<number>): boolean =>
  x.length === y.length && x.every((n, i) => n === y[i]);

/** Whether two lists of processed sends are the same (a state whose sends did not change travels on as it came). */
function sameSends(x: ReadonlyArray<ProcessedSends>, y: ReadonlyArray<ProcessedSends>): boolean {
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) {
    const a = x[i] as ProcessedSends;
    const b = y[i] as ProcessedSends;
    if (a.node !== b.node || a.incarnation !== b.incarnation) return false;
    if (!sameNumbers(a.done, b.done) || !sameNumbers(a.failed, b.failed)) return false;
  }
  return true;
}

/** Where the value at `pos` ends (msgpack-scan.ts walks its headers); throws when it runs past the end. */
function valueEnd(bytes: Uint8Array, pos: number): number {
  const end = msgpackValueEnd(bytes, pos);
  if (typeof end === 'string') throw new Error(end);
  return end;
}

/** Which of a state's keys lies from `start` to `end` (undefined for any other: a long key is none of ours). */
function keyAt(bytes: Uint8Array, start: number, end: number): (typeof KEYS)[number][0] | undefined {
  if (end - start > 16) return undefined;
  for (const [key, encoded] of KEYS) if (sameText(bytes, start, end, encoded, key)) return key;
  return undefined;
}
