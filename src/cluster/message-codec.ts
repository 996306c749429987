// Turns wire messages into msgpack bytes and back. Both transports use it, so a message that cannot cross a
// real socket (a class instance, a function, a BigInt, a Set) fails over the in-memory network too. Decoding
// is the first thing untrusted bytes meet: they are pre-scanned against a budget (msgpack-scan.ts) before
// msgpackr materialises anything, and msgpackr runs with every extension the protocol does not use off.
import { Packr } from 'msgpackr';
import { ActorTsError } from '../errors.js';
import { describeValue } from '../logging.js';
import { DEFAULT_DECODE_LIMITS, scanMsgpack, type DecodeLimits } from './msgpack-scan.js';
import type { FamilyRegistry, WireMessage } from './wire-message.js';

export { DEFAULT_DECODE_LIMITS, type DecodeLimits } from './msgpack-scan.js';

// Records would make a decoder depend on what it decoded before (a stream that may drop frames cannot), and
// structured clone turns a few hundred bytes of back-references into millions of leaves. The pre-scan refuses
// their extension bytes anyway (msgpackr honours registered extensions whatever these options say); the
// options keep the encoder from producing them. int64 decodes to a number, so no BigInt reaches a message.
const packr = new Packr({
  useRecords: false,
  structuredClone: false,
  moreTypes: false,
  mapsAsObjects: true,
  bundleStrings: false,
  int64AsType: 'number',
  copyBuffers: true,
});

/** Encodes one message; throws `malformed_message` when msgpackr cannot represent it. */
export function encodeMessage<M extends WireMessage>(message: M): Uint8Array {
  try {
    return packr.pack(message);
  } catch (error) {
    throw new ActorTsError('malformed_message', `cannot encode ${describeValue(message, 120)}: ${errorText(error)}`);
  }
}

export type DecodeResult = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: string };

/** Decodes untrusted bytes into a plain value within `limits`, without validating its shape. Never throws. */
export function decodeValue(bytes: Uint8Array, limits: DecodeLimits = DEFAULT_DECODE_LIMITS): DecodeResult {
  const refused = scanMsgpack(bytes, limits);
  if (refused !== undefined) return { ok: false, reason: refused };
  try {
    return { ok: true, value: packr.unpack(bytes) };
  } catch (error) {
    return { ok: false, reason: errorText(error) };
  }
}

/** Decodes untrusted bytes; undefined for anything that is not exactly one message a registered family accepts. */
export function decodeMessage(
  bytes: Uint8Array,
  registry: FamilyRegistry,
  limits: DecodeLimits = DEFAULT_DECODE_LIMITS,
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
