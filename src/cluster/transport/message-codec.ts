// Turns wire messages into msgpack bytes and back. Both transports use it, so a message that cannot cross a
// real socket (a class instance, a function, a BigInt, a Set) fails over the in-memory network too. Decoding
// is the first thing untrusted bytes meet: they are pre-scanned against a budget (msgpack-scan.ts) before
// msgpackr materialises anything, and msgpackr runs with every extension the protocol does not use off.
// Messages are immutable values: once a message object has been handed to a transport nobody changes it, so
// its encoding is computed once per object (`encodeMessageOnce`) and reused when the same object is sent again
// (one gossip state goes to many peers). An encoding is a whole message frame (header, then the message), so
// the TCP transport writes it as it is; a message ending with a large binary (a hand-off's state chunk) is
// framed as the rest, then that binary's own bytes, written together (never copied into the encoding). The cached bytes never reach a receiver as a value: every delivery
// decodes them into fresh objects, and msgpackr copies binary fields out of them (only bytes a socket delivered,
// which nothing else holds, are decoded into views: `decodeFrameValue`). A small message is kept by the codec
// only while it is among the last few sent: most are sent once, and a weak map entry each made the garbage
// collector promote them (it cost a small message twice its encoding).
import { Packr, RESERVE_START_SPACE, RESET_BUFFER_MODE } from 'msgpackr';
import { ActorTsError } from '../../errors.js';
import { describeValue } from '../../logging.js';
import { FRAME_HEADER_BYTES, messageBytes, writeFrameHeader, type OutgoingFrame } from './frame-codec.js';
import { DEFAULT_DECODE_LIMITS, scanMsgpack, type DecodeConfig } from './msgpack-scan.js';
import { PROTOCOL_VERSION, type FamilyRegistry, type WireMessage } from './wire-message.js';

export { DEFAULT_DECODE_LIMITS, type DecodeConfig } from './msgpack-scan.js';

// Records would make a decoder depend on what it decoded before (a stream that may drop frames cannot), and
// structured clone turns a few hundred bytes of back-references into millions of leaves. The pre-scan refuses
// their extension bytes anyway (msgpackr honours registered extensions whatever these options say); the
// options keep the encoder from producing them. int64 decodes to a number, so no BigInt reaches a message.
const PACKR_OPTIONS = {
  useRecords: false,
  structuredClone: false,
  moreTypes: false,
  mapsAsObjects: true,
  bundleStrings: false,
  int64AsType: 'number',
} as const;
const packr = new Packr({ ...PACKR_OPTIONS, copyBuffers: true });

// Decodes a payload that owns its memory (a frame the decoder assembled, or most of a socket's read): a binary
// field becomes a view of it instead of a copy, since nothing else uses those bytes and a view keeps at most
// twice its own size alive (see `decodeFrameValue`).
const viewingUnpackr = new Packr({ ...PACKR_OPTIONS, copyBuffers: false });

/** Encodes one message into bytes of its own; throws `malformed_message` when msgpackr cannot represent it. */
export function encodeMessage<M extends WireMessage>(message: M): Uint8Array {
  let packed: Uint8Array;
  try {
    packed = packr.pack(message);
  } catch (error) {
    throw new ActorTsError('malformed_message', `cannot encode ${describeValue(message, 120)}: ${errorText(error)}`);
  }
  counters.encodes++;
  // msgpackr returns a view into its (possibly megabytes large) working buffer; a cached view would keep that
  // whole buffer alive as long as the message lives. A copy of exactly the message's size costs less than the
  // encoding it saves.
  const bytes = new Uint8Array(packed.byteLength);
  bytes.set(packed);
  return bytes;
}

/** An encoding at least this large is kept where msgpackr wrote it when that buffer is not much larger. */
const LARGE_ENCODING_BYTES = 64 * 1024;
/** How many times its own size a kept encoding may keep alive of msgpackr's working buffer. */
const MAX_KEPT_RATIO = 8;

/**
 * Encodes one message as a whole message frame (header, then the message's bytes), encoded straight behind the
 * room msgpackr reserves for the header: one copy out of msgpackr's working buffer makes the frame, instead of
 * one for the message and one more for its frame. A large encoding is not even copied when the working buffer
 * is at most MAX_KEPT_RATIO times its size (msgpackr never writes over bytes it returned, and grows its buffer to
 * a little over four times a message that did not fit; the buffer then lives as long as one of them is cached).
 * A message whose last field is a binary of LARGE_ENCODING_BYTES or more is split: see `splitFrame`.
 */
function encodeMessageFrame(message: WireMessage): OutgoingFrame {
  const split = splitFrame(message);
  if (split !== undefined) return split;
  const packed = packFrame(message);
  const kept =
    packed.byteLength >= LARGE_ENCODING_BYTES && packed.byteLength * MAX_KEPT_RATIO >= packed.buffer.byteLength;
  const head = kept ? packed : Buffer.allocUnsafeSlow(packed.byteLength);
  if (!kept) head.set(packed);
  writeFrameHeader(head, 'message', PROTOCOL_VERSION);
  return { head, tail: undefined, byteLength: head.byteLength };
}

/** msgpackr's encoding of `message` behind FRAME_HEADER_BYTES of room, a view of its working buffer. */
function packFrame(message: unknown): Buffer {
  try {
    const packed = packr.pack(message, RESERVE_START_SPACE | FRAME_HEADER_BYTES) as Buffer;
    counters.encodes++;
    return packed;
  } catch (error) {
    throw new ActorTsError('malformed_message', `cannot encode ${describeValue(message, 120)}: ${errorText(error)}`);
  }
}

const EMPTY_BINARY = new Uint8Array(0);
/** msgpack's bin8 of no bytes, and the bin32 header that stands for it before a large binary's bytes. */
const EMPTY_BIN8 = [0xc4, 0x00] as const;
const BIN32_HEADER_BYTES = 5;

/**
 * The frame of a message whose last field (in the order msgpackr writes them) is a binary of at least
 * LARGE_ENCODING_BYTES, as its head (everything else, the binary's bin32 header last) and the binary's own
 * bytes as its tail: a hand-off's chunk of 250 KiB is not copied into msgpackr's buffer, nor that buffer kept.
 * The same bytes as the message encoded whole: the head is the encoding of the message with that field empty,
 * which ends in the empty binary's two bytes (checked), replaced by the header of the real one. Undefined for
 * any other message.
 */
function splitFrame(message: WireMessage): OutgoingFrame | undefined {
  if (typeof message !== 'object' || message === null || Object.getPrototypeOf(message) !== Object.prototype) {
    return undefined;
  }
  let last: string | undefined;
  for (const key in message) last = key;
  if (last === undefined || !Object.hasOwn(message, last)) return undefined;
  const tail = (message as unknown as Record<string, unknown>)[last];
  if (!(tail instanceof Uint8Array) || tail.length < LARGE_ENCODING_BYTES) return undefined;
  const packed = packFrame({ ...message, [last]: EMPTY_BINARY });
  const end = packed.length;
  if (packed[end - 2] !== EMPTY_BIN8[0] || packed[end - 1] !== EMPTY_BIN8[1]) return undefined;
  const head = Buffer.allocUnsafeSlow(end - EMPTY_BIN8.length + BIN32_HEADER_BYTES);
  head.set(packed.subarray(0, end - EMPTY_BIN8.length));
  head.writeUInt8(0xc6, end - EMPTY_BIN8.length);
  head.writeUInt32BE(tail.length, end - EMPTY_BIN8.length + 1);
  const byteLength = head.length + tail.length;
  writeFrameHeader(head, 'message', PROTOCOL_VERSION, byteLength);
  return { head, tail, byteLength };
}

interface Encoding {
  /** The message as a message frame of this release's newest protocol version: header, then its bytes. */
  readonly frame: OutgoingFrame;
  /** The message's bytes in one buffer: a view of the frame's head, or made on first use for a split frame. */
  bytes: Uint8Array | undefined;
  /**
   * Registries whose parse accepted `bytes`: that cannot change, since a registered family is never replaced.
   * Made at the first check: only the in-memory network checks, and one set per message cost a TCP send more
   * than its encoding.
   */
  parsedBy: WeakSet<FamilyRegistry> | undefined;
}

/**
 * By message object: sending the same (immutable) object again reuses its bytes. Weak: entries go with messages.
 * Holds a large encoding from its first send, a small one from its second (found among the recent ones).
 */
const encodings = new WeakMap<WireMessage, Encoding>();

/** Encodings up to this size wait among the recent ones before the weak map takes them. */
const SMALL_ENCODING_BYTES = 4096;
/** How many small encodings are kept strongly, the latest ones: a broadcast sends one object in a row. */
const RECENT = 8;
const recentMessages: Array<WireMessage | undefined> = new Array<WireMessage | undefined>(RECENT).fill(undefined);
const recentEncodings: Array<Encoding | undefined> = new Array<Encoding | undefined>(RECENT).fill(undefined);
let nextRecent = 0;

interface MutableCodecStats {
  encodes: number;
  reused: number;
  checks: number;
}

const counters: MutableCodecStats = { encodes: 0, reused: 0, checks: 0 };

/** Process-wide counts since start, for tests and profiling; they only grow. */
export interface MessageCodecStats {
  /** Messages msgpackr actually encoded. */
  readonly encodes: number;
  /** Sends that reused the encoding of a message object encoded before. */
  readonly reused: number;
  /** Encodings decoded and parsed to check a sender's message (`encodeCheckedMessage`). */
  readonly checks: number;
}

export function messageCodecStats(): MessageCodecStats {
  return { ...counters };
}

/**
 * The bytes of `message`, encoded once per message object that is sent again (see the file header: messages
 * are immutable), unless it is small and its next send comes after RECENT other messages' (then it is encoded
 * again). The bytes are shared by every send of the object: callers must not modify them. Throws
 * `malformed_message` (every time, nothing is cached) when the message cannot be encoded.
 */
export function encodeMessageOnce<M extends WireMessage>(message: M): Uint8Array {
  return bytesOf(encodingOf(message));
}

/** The encoding's message bytes in one buffer; a split frame's are joined once, on first use (not on TCP). */
function bytesOf(encoding: Encoding): Uint8Array {
  encoding.bytes ??= messageBytes(encoding.frame);
  return encoding.bytes;
}

/**
 * Like `encodeMessageOnce`, as a whole message frame stamped with this release's newest protocol version
 * (`outgoingAtVersion` restamps a copy of its head for an older connection), in two parts when the message ends
 * with a large binary. Shared likewise: callers must not modify it.
 */
export function encodeMessageFrameOnce<M extends WireMessage>(message: M): OutgoingFrame {
  return encodingOf(message).frame;
}

export type CheckedEncoding = { readonly ok: true; readonly bytes: Uint8Array } | { readonly ok: false };

/**
 * Like `encodeMessageOnce`, and whether the bytes pass `registry`'s parse, as they must to be accepted by a
 * receiver speaking the same families. A pass is remembered per message object and registry, so the check
 * runs once however often the object is sent; a failure is not, so the same object fails on every send.
 */
export function encodeCheckedMessage<M extends WireMessage>(message: M, registry: FamilyRegistry): CheckedEncoding {
  const encoding = encodingOf(message);
  const bytes = bytesOf(encoding);
  if (encoding.parsedBy?.has(registry) === true) return { ok: true, bytes };
  counters.checks++;
  if (decodeMessage(bytes, registry) === undefined) return { ok: false };
  (encoding.parsedBy ??= new WeakSet()).add(registry);
  return { ok: true, bytes };
}

function encodingOf(message: WireMessage): Encoding {
  // Only objects can key a WeakMap; a non-object "message" is still encoded (and refused by any parse).
  const cacheable = typeof message === 'object' && message !== null;
  const known = cacheable ? (recentEncoding(message) ?? encodings.get(message)) : undefined;
  if (known !== undefined) {
    counters.reused++;
    return known;
  }
  const frame = encodeMessageFrame(message);
  const encoding: Encoding = {
    frame,
    bytes: frame.tail === undefined ? messageBytes(frame) : undefined,
    parsedBy: undefined,
  };
  if (!cacheable) return encoding;
  if (frame.byteLength - FRAME_HEADER_BYTES > SMALL_ENCODING_BYTES) {
    encodings.set(message, encoding);
  } else {
    recentMessages[nextRecent] = message;
    recentEncodings[nextRecent] = encoding;
    nextRecent = (nextRecent + 1) % RECENT;
  }
  return encoding;
}

/** The encoding of `message` if it is among the recent ones, then kept in the weak map too: it is sent again. */
function recentEncoding(message: WireMessage): Encoding | undefined {
  for (let i = 0; i < RECENT; i++) {
    if (recentMessages[i] !== message) continue;
    const encoding = recentEncodings[i] as Encoding;
    encodings.set(message, encoding);
    return encoding;
  }
  return undefined;
}

export type DecodeResult =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: string };

/** Decodes untrusted bytes into a plain value within `limits`, without validating its shape. Never throws. */
export function decodeValue(bytes: Uint8Array, limits: DecodeConfig = DEFAULT_DECODE_LIMITS): DecodeResult {
  return decodeWith(packr, bytes, limits);
}

/**
 * Like `decodeValue`, for bytes that nothing else will use (a frame's payload the TCP transport received, a row
 * the entity store just read): when the payload spans at least half of its memory, its binary fields are views of
 * it rather than copies (a hand-off chunk's states are not copied again), which keeps at most twice their bytes
 * alive; otherwise (a small frame within a larger read) they are copied, as `decodeValue` does.
 */
export function decodeFrameValue(payload: Uint8Array, limits: DecodeConfig = DEFAULT_DECODE_LIMITS): DecodeResult {
  const owned = payload.byteLength * 2 >= payload.buffer.byteLength;
  return decodeWith(owned ? viewingUnpackr : packr, payload, limits);
}

function decodeWith(unpackr: Packr, bytes: Uint8Array, limits: DecodeConfig): DecodeResult {
  const refused = scanMsgpack(bytes, limits);
  if (refused !== undefined) return { ok: false, reason: refused };
  try {
    return { ok: true, value: unpackr.unpack(bytes) };
  } catch (error) {
    return { ok: false, reason: errorText(error) };
  }
}

/** Decodes untrusted bytes; undefined for anything that is not exactly one message a registered family accepts. */
export function decodeMessage(
  bytes: Uint8Array,
  registry: FamilyRegistry,
  limits: DecodeConfig = DEFAULT_DECODE_LIMITS,
): WireMessage | undefined {
  const decoded = decodeValue(bytes, limits);
  return decoded.ok ? registry.parse(decoded.value) : undefined;
}

/** Encodes a transport-level value (handshake frames); throws `malformed_message` if it cannot. */
export function encodeValue(value: unknown): Uint8Array {
  return packed(value, 0);
}

/**
 * encodeValue into the codec's scratch space: the bytes are valid only until the next encoding, and the caller
 * copies them at once. Nothing is allocated per call, where each result of encodeValue keeps its own bytes and
 * a run of them allocates a buffer every few kilobytes (a hand-off packs a thousand snapshots, bench S10).
 */
export function encodeValueScratch(value: unknown): Uint8Array {
  return packed(value, RESET_BUFFER_MODE);
}

function packed(value: unknown, mode: number): Uint8Array {
  try {
    return packr.pack(value, mode);
  } catch (error) {
    throw new ActorTsError('malformed_message', `cannot encode transport frame: ${errorText(error)}`);
  }
}

/** An error's message, bounded: errors may quote what they failed on. */
export function errorText(error: unknown): string {
  try {
    const text = error instanceof Error ? error.message : String(error);
    return text.length > 300 ? `${text.slice(0, 300)}...(${text.length} chars)` : text;
  } catch {
    return Object.prototype.toString.call(error);
  }
}
