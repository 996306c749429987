// Turns wire messages into msgpack bytes and back. Both transports use it, so a message that cannot cross a
// real socket (a class instance, a function, a BigInt, a Set) fails over the in-memory network too. Decoding
// is the first thing untrusted bytes meet: they are pre-scanned against a budget (msgpack-scan.ts) before
// msgpackr materialises anything, and msgpackr runs with every extension the protocol does not use off.
// Messages are immutable values: once a message object has been handed to a transport nobody changes it, so
// its encoding is computed once per object (`encodeMessageOnce`) and reused when the same object is sent again
// (one gossip state goes to many peers). The cached bytes never reach a receiver: every delivery decodes them
// into fresh objects (and msgpackr copies binary fields out of them), and frames copy them.
import { Packr } from 'msgpackr';
import { ActorTsError } from '../errors.js';
import { describeValue } from '../logging.js';
import { DEFAULT_DECODE_LIMITS, scanMsgpack } from './msgpack-scan.js';
export { DEFAULT_DECODE_LIMITS } from './msgpack-scan.js';
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
/** Encodes one message into bytes of its own; throws `malformed_message` when msgpackr cannot represent it. */
export function encodeMessage(message) {
    let packed;
    try {
        packed = packr.pack(message);
    }
    catch (error) {
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
/** By message object: sending the same (immutable) object again reuses its bytes. Weak: entries go with messages. */
const encodings = new WeakMap();
const counters = { encodes: 0, reused: 0, checks: 0 };
export function messageCodecStats() {
    return { ...counters };
}
/**
 * The bytes of `message`, encoded at most once per message object (see the file header: messages are
 * immutable). The bytes are shared by every send of the object: callers must not modify them. Throws
 * `malformed_message` (every time, nothing is cached) when the message cannot be encoded.
 */
export function encodeMessageOnce(message) {
    return encodingOf(message).bytes;
}
/**
 * Like `encodeMessageOnce`, and whether the bytes pass `registry`'s parse, as they must to be accepted by a
 * receiver speaking the same families. A pass is remembered per message object and registry, so the check
 * runs once however often the object is sent; a failure is not, so the same object fails on every send.
 */
export function encodeCheckedMessage(message, registry) {
    const encoding = encodingOf(message);
    if (encoding.parsedBy.has(registry))
        return { ok: true, bytes: encoding.bytes };
    counters.checks++;
    if (decodeMessage(encoding.bytes, registry) === undefined)
        return { ok: false };
    encoding.parsedBy.add(registry);
    return { ok: true, bytes: encoding.bytes };
}
function encodingOf(message) {
    // Only objects can key a WeakMap; a non-object "message" is still encoded (and refused by any parse).
    const cacheable = typeof message === 'object' && message !== null;
    const known = cacheable ? encodings.get(message) : undefined;
    if (known !== undefined) {
        counters.reused++;
        return known;
    }
    const encoding = { bytes: encodeMessage(message), parsedBy: new WeakSet() };
    if (cacheable)
        encodings.set(message, encoding);
    return encoding;
}
/** Decodes untrusted bytes into a plain value within `limits`, without validating its shape. Never throws. */
export function decodeValue(bytes, limits = DEFAULT_DECODE_LIMITS) {
    const refused = scanMsgpack(bytes, limits);
    if (refused !== undefined)
        return { ok: false, reason: refused };
    try {
        return { ok: true, value: packr.unpack(bytes) };
    }
    catch (error) {
        return { ok: false, reason: errorText(error) };
    }
}
/** Decodes untrusted bytes; undefined for anything that is not exactly one message a registered family accepts. */
export function decodeMessage(bytes, registry, limits = DEFAULT_DECODE_LIMITS) {
    const decoded = decodeValue(bytes, limits);
    return decoded.ok ? registry.parse(decoded.value) : undefined;
}
/** Encodes a transport-level value (handshake frames); throws `malformed_message` if it cannot. */
export function encodeValue(value) {
    try {
        return packr.pack(value);
    }
    catch (error) {
        throw new ActorTsError('malformed_message', `cannot encode transport frame: ${errorText(error)}`);
    }
}
/** An error's message, bounded: errors may quote what they failed on. */
export function errorText(error) {
    try {
        const text = error instanceof Error ? error.message : String(error);
        return text.length > 300 ? `${text.slice(0, 300)}...(${text.length} chars)` : text;
    }
    catch {
        return Object.prototype.toString.call(error);
    }
}
//# sourceMappingURL=message-codec.js.map