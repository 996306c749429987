// Turns protocol messages into msgpackr bytes and back. Both transports use it, so a message that cannot
// cross a real socket (a class instance, a function, a BigInt) fails over the in-memory network too.
import { Packr } from 'msgpackr';
import { ActorTsError } from '../errors.js';
import { parseMessage, type ProtocolMessage } from '../protocol.js';

// Records (msgpackr's structure extension) would make a decoder depend on what it decoded before; plain
// maps keep every payload self-describing, which a stream that may drop frames needs.
const packr = new Packr({ useRecords: false, moreTypes: false, copyBuffers: true });

/** Encodes one message; throws `malformed_message` when msgpackr cannot represent it. */
export function encodeMessage(message: ProtocolMessage): Uint8Array {
  try {
    return packr.pack(message);
  } catch (error) {
    throw new ActorTsError('malformed_message', `cannot encode ${describe(message)}: ${errorText(error)}`);
  }
}

/** Decodes untrusted bytes; undefined for anything that is not exactly one valid protocol message. */
export function decodeMessage(bytes: Uint8Array): ProtocolMessage | undefined {
  let value: unknown;
  try {
    value = packr.unpack(bytes);
  } catch {
    return undefined;
  }
  return parseMessage(value);
}

/** Decodes untrusted bytes into a plain value without validating it (for the transports' own frames). */
export function decodeValue(bytes: Uint8Array): { readonly ok: true; readonly value: unknown } | { readonly ok: false } {
  try {
    return { ok: true, value: packr.unpack(bytes) };
  } catch {
    return { ok: false };
  }
}

/** Encodes a transport-level value (handshake frames); throws `malformed_message` if it cannot. */
export function encodeValue(value: unknown): Uint8Array {
  try {
    return packr.pack(value);
  } catch (error) {
    throw new ActorTsError('malformed_message', `cannot encode transport frame: ${errorText(error)}`);
  }
}

function describe(message: ProtocolMessage): string {
  const type: unknown = (message as { type?: unknown }).type;
  return typeof type === 'string' ? `message ${type}` : 'message without a type';
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
