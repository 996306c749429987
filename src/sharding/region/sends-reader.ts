// The processed sends an entity's state carries (dedup-table.ts's ProcessedSends), read straight from the
// msgpack this code writes for them: a new home reads those of a thousand entities as a hand-off's chunks arrive,
// and msgpackr's unpack of each small list, with the scan before it and the checks after, cost more than the
// rest of the state's outline (bench S10). It reads only what decodeValue then parseProcessedSends accept and
// gives the same value; anything else (another key order, an extra key, an encoding msgpackr does not write for
// these values, a check that fails) it leaves to them: undefined, and the general reading decides.
import { DEFAULT_DECODE_LIMITS, bytesAt } from '../../cluster/transport/msgpack-scan.js';
import { isAddress, isRequestId } from '../protocol/wire-values.js';
import { MAX_SENDERS_PER_ENTITY, MAX_SENDS_PER_ENTITY, type ProcessedSends } from './dedup-table.js';

/** The keys of one sender's entry, in the order msgpackr writes them from a ProcessedSends object. */
const KEYS = ['node', 'incarnation', 'done', 'failed'].map((key) => Uint8Array.from(Buffer.from(key)));

/** A reading position over one value's bytes; `at` moves past what is read. */
interface Cursor {
  readonly bytes: Uint8Array;
  at: number;
  readonly end: number;
  /** Array items plus map keys and values so far, as the general reading's scan counts them. */
  elements: number;
}

/** The last sender read, by its bytes: a shard's entities mostly name the same few senders. */
let lastNode: { bytes: Uint8Array; text: string } | undefined;

/** The sends encoded in `bytes[start..end)`, or undefined when the general reading must decide. */
export function readProcessedSends(bytes: Uint8Array, start: number, end: number): ProcessedSends[] | undefined {
  const cursor: Cursor = { bytes, at: start, end, elements: 0 };
  const parsed = list(cursor, MAX_SENDERS_PER_ENTITY, readSender);
  const withinBudget = cursor.elements <= DEFAULT_DECODE_LIMITS.maxElements;
  return cursor.at === end && withinBudget ? parsed : undefined;
}

function readSender(cursor: Cursor): ProcessedSends | undefined {
  if (containerLength(cursor, MAP) !== KEYS.length) return undefined;
  if (!key(cursor, 0)) return undefined;
  const node = address(cursor);
  if (node === undefined || !key(cursor, 1)) return undefined;
  const incarnation = requestId(cursor);
  if (incarnation === undefined || !key(cursor, 2)) return undefined;
  const done = sequences(cursor);
  if (done === undefined || !key(cursor, 3)) return undefined;
  const failed = sequences(cursor);
  return failed === undefined ? undefined : { node, incarnation, done, failed };
}

/** The container headers read: arrays (fixarray, array16, array32) and maps (fixmap, map16: msgpackr's objects). */
type Container = { readonly fix: number; readonly x16: number; readonly x32?: number; readonly elements: number };
const ARRAY: Container = { fix: 0x90, x16: 0xdc, x32: 0xdd, elements: 1 };
const MAP: Container = { fix: 0x80, x16: 0xde, elements: 2 };

/** A container header of `kind`: its items (an array's) or pairs (a map's), counted as the general scan does. */
function containerLength(cursor: Cursor, kind: Container): number | undefined {
  const { bytes, at, end } = cursor;
  const token = at < end ? (bytes[at] as number) : -1;
  let length: number;
  if (token >= kind.fix && token <= kind.fix + 0x0f) [length, cursor.at] = [token & 0x0f, at + 1];
  else if (token === kind.x16 && at + 3 <= end) [length, cursor.at] = [uint(bytes, at + 1, 2), at + 3];
  else if (token === kind.x32 && at + 5 <= end) [length, cursor.at] = [uint(bytes, at + 1, 4), at + 5];
  else return undefined;
  cursor.elements += kind.elements * length;
  return length;
}

/** Whether the key KEYS[index] comes next as a fixstr, and then past it. */
function key(cursor: Cursor, index: number): boolean {
  const expected = KEYS[index] as Uint8Array;
  const { bytes, at, end } = cursor;
  if (at >= end || bytes[at] !== (0xa0 | expected.length) || at + 1 + expected.length > end) return false;
  if (!bytesAt(bytes, at + 1, expected)) return false;
  cursor.at = at + 1 + expected.length;
  return true;
}

/** A node address as an ASCII fixstr or str8 (ASCII: the one text whose decoding cannot differ). */
function address(cursor: Cursor): string | undefined {
  const { bytes, at, end } = cursor;
  const token = at < end ? (bytes[at] as number) : -1;
  let from: number;
  let length: number;
  if (token >= 0xa0 && token <= 0xbf) [from, length] = [at + 1, token & 0x1f];
  else if (token === 0xd9 && at + 2 <= end) [from, length] = [at + 2, bytes[at + 1] as number];
  else return undefined;
  if (from + length > end) return undefined;
  cursor.at = from + length;
  if (lastNode !== undefined && lastNode.bytes.length === length && bytesAt(bytes, from, lastNode.bytes)) {
    return lastNode.text;
  }
  const view = bytes.subarray(from, from + length);
  for (const byte of view) if (byte >= 0x80) return undefined;
  const text = String.fromCharCode(...view);
  if (!isAddress(text)) return undefined;
  lastNode = { bytes: view.slice(), text };
  return text;
}

/** A list of request ids (sequence numbers), at most MAX_SENDS_PER_ENTITY. */
function sequences(cursor: Cursor): number[] | undefined {
  return list(cursor, MAX_SENDS_PER_ENTITY, requestId);
}

/** A list of at most `max` items, each read by `read`; undefined when its header or any item is not readable. */
function list<T>(cursor: Cursor, max: number, read: (cursor: Cursor) => T | undefined): T[] | undefined {
  const length = containerLength(cursor, ARRAY);
  if (length === undefined || length > max) return undefined;
  const items: T[] = [];
  for (let i = 0; i < length; i++) {
    const item = read(cursor);
    if (item === undefined) return undefined;
    items.push(item);
  }
  return items;
}

/** A request id as msgpackr writes a positive safe integer: fixint, uint8/16/32, or float64 above 32 bits. */
function requestId(cursor: Cursor): number | undefined {
  const { bytes, at, end } = cursor;
  const token = at < end ? (bytes[at] as number) : -1;
  let value: number;
  if (token >= 0 && token < 0x80) [value, cursor.at] = [token, at + 1];
  else if (token >= 0xcc && token <= 0xce) {
    const size = 1 << (token - 0xcc);
    if (at + 1 + size > end) return undefined;
    [value, cursor.at] = [uint(bytes, at + 1, size), at + 1 + size];
  } else if (token === 0xcb && at + 9 <= end) {
    [value, cursor.at] = [Buffer.from(bytes.buffer, bytes.byteOffset + at + 1, 8).readDoubleBE(0), at + 9];
  } else return undefined;
  return isRequestId(value) ? value : undefined;
}

/** The big-endian unsigned integer of `size` bytes (1, 2 or 4) at `at`. */
function uint(bytes: Uint8Array, at: number, size: number): number {
  let value = 0;
  for (let i = 0; i < size; i++) value = value * 256 + (bytes[at + i] as number);
  return value;
}
