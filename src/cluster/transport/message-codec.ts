// Turns wire messages into msgpack bytes and back. Both transports use it, so a message that cannot cross a
// real socket (a class instance, a function, a BigInt, a Set) fails over the in-memory network too. Decoding
// is the first thing untrusted bytes meet: they are pre-scanned against a budget (msgpack-scan.ts) before
// msgpackr materialises anything, and msgpackr runs with every extension the protocol does not use off.
// Messages are immutable values: once a message object has been handed to a transport nobody changes it, so
// its encoding is computed once per object (`encodeMessageOnce`) and reused when the same object is sent again
// (one gossip state goes to many peers). An encoding is a whole message frame (header, then the message), so
// the TCP transport writes it as it is. The cached bytes never reach a receiver as a value: every delivery
// decodes them into fresh objects, and msgpackr copies binary fields out of them (only bytes a socket delivered,
// which nothing else holds, are decoded into views: `decodeFrameValue`). A small message is kept by the codec
// only while it is among the last few sent: most are sent once, and a weak map entry each made the garbage
// collector promote them (it cost a small message twice its encoding).
import { Packr, RESERVE_START_SPACE } from 'msgpackr';
import { ActorTsError } from '../../errors.js';
import { describeValue } from '../../logging.js';
import { FRAME_HEADER_BYTES, writeFrameHeader } from './frame-codec.js';
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
 * a little over four times a message that did not fit, so a hand-off's state chunks, 250 KiB each in a buffer of
 * about 1 MiB, are the frames this saves copying; the buffer then lives as long as one of them is cached).
 */
function encodeMessageFrame(message: WireMessage): Buffer {
  let packed: Buffer;
  try {
    packed = packr.pack(message, RESERVE_START_SPACE | FRAME_HEADER_BYTES) as Buffer;
  } catch (error) {
    throw new ActorTsError('malformed_message', `cannot encode ${describeValue(message, 120)}: ${errorText(error)}`);
  }
  counters.encodes++;
  const kept =
    packed.byteLength >= LARGE_ENCODING_BYTES && packed.byteLength * MAX_KEPT_RATIO >= packed.buffer.byteLength;
  const frame = kept ? packed : Buffer.allocUnsafeSlow(packed.byteLength);
  if (!kept) frame.set(packed);
  writeFrameHeader(frame, 'message', PROTOCOL_VERSION);
  return frame;
}

interface Encoding {
  /** The message as a message frame of this release's newest protocol version: header, then `bytes`. */
  readonly frame: Buffer;
  readonly bytes: Uint8Array;
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
  return encodingOf(message).bytes;
}

/**
 * Like `encodeMessageOnce`, as a whole message frame stamped with this release's newest protocol version
 * (`frameAtVersion` restamps a copy for an older connection). Shared likewise: callers must not modify it.
 */
export function encodeMessageFrameOnce<M extends WireMessage>(message: M): Buffer {
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
  if (encoding.parsedBy?.has(registry) === true) return { ok: true, bytes: encoding.bytes };
  counters.checks++;
  if (decodeMessage(encoding.bytes, registry) === undefined) return { ok: false };
  (encoding.parsedBy ??= new WeakSet()).add(registry);
  return { ok: true, bytes: encoding.bytes };
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
  const encoding: Encoding = { frame, bytes: frame.subarray(FRAME_HEADER_BYTES), parsedBy: undefined };
  if (!cacheable) return encoding;
  if (encoding.bytes.byteLength > SMALL_ENCODING_BYTES) {
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
 * Like `decodeValue`, for a frame's payload that nothing else will use (what the TCP transport received): when
 * the payload spans at least half of its memory, its binary fields are views of it rather than copies (a hand-off
 * chunk's states are not copied again), which keeps at most twice their bytes alive; otherwise (a small frame
 * within a larger read) they are copied, as `decodeValue` does.
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
  try {
    return packr.pack(value);
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
