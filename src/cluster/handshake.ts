// The frames that open a TCP connection, before any protocol message may flow. They are transport-internal
// (never reach a message family) and are validated here as strictly as protocol messages, within a decode
// budget sized for them: they arrive before the peer is authenticated. The Challenge carries nothing but a
// nonce: it goes to a peer that has proved nothing yet, so it must say nothing an address does not (it
// used to carry the acceptor's incarnation, half of the member key gossip names it by).
//   dialer -> acceptor  Hello     { from, to, incarnation, nonce }
//   acceptor -> dialer  Challenge { nonce }                         (or Refused)
//   dialer -> acceptor  Proof     { proof? }   HMAC(secret, client role, both addresses, both nonces)
//   acceptor -> dialer  Accepted  { proof? }   the same HMAC with the server role (or Refused)
import { createHmac, timingSafeEqual } from 'node:crypto';
import { encodeFrame, type Frame } from './frame-codec.js';
import { decodeValue, encodeValue } from './message-codec.js';
import type { DecodeConfig } from './msgpack-scan.js';

export type Handshake =
  | {
      readonly t: 'Hello';
      readonly from: string;
      readonly to: string;
      readonly incarnation: string;
      readonly nonce: Uint8Array;
    }
  | { readonly t: 'Challenge'; readonly nonce: Uint8Array }
  | { readonly t: 'Proof'; readonly proof?: Uint8Array }
  | { readonly t: 'Accepted'; readonly proof?: Uint8Array }
  | { readonly t: 'Refused'; readonly reason: string };

const NONCE_BYTES = 16;
const MAX_TEXT = 512;

/** A handshake is one flat map of at most five short fields. */
const HANDSHAKE_LIMITS: DecodeConfig = {
  maxDepth: 1,
  maxElements: 16,
  maxStringBytes: MAX_TEXT * 4,
  maxBinaryBytes: 64,
};

/** Validates an untrusted decoded value; undefined for anything that is not a well-formed handshake frame. */
export function parseHandshake(value: unknown): Handshake | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const raw = value as Readonly<Record<string, unknown>>;
  switch (raw['t']) {
    case 'Hello': {
      const { from, to, incarnation, nonce } = raw;
      if (!isText(from) || !isText(to) || !isText(incarnation) || !isNonce(nonce)) return undefined;
      return { t: 'Hello', from, to, incarnation, nonce };
    }
    case 'Challenge': {
      const { nonce } = raw;
      return isNonce(nonce) ? { t: 'Challenge', nonce } : undefined;
    }
    case 'Proof':
    case 'Accepted': {
      const proof = raw['proof'];
      if (proof === undefined || proof === null) return { t: raw['t'] };
      if (!(proof instanceof Uint8Array) || proof.byteLength !== 32) return undefined;
      return { t: raw['t'], proof };
    }
    case 'Refused': {
      const reason = raw['reason'];
      return isText(reason) ? { t: 'Refused', reason } : undefined;
    }
    default:
      return undefined;
  }
}

function isText(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_TEXT;
}

function isNonce(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array && value.byteLength === NONCE_BYTES;
}

/** Decodes and validates a handshake frame; undefined for anything else. */
export function readHandshake(frame: Frame): Handshake | undefined {
  const decoded = decodeValue(frame.payload, HANDSHAKE_LIMITS);
  return decoded.ok ? parseHandshake(decoded.value) : undefined;
}

/** The frame carrying one handshake step (both ends of a connection, and test peers, build them here). */
export function handshakeFrame(handshake: Handshake): Buffer {
  return encodeFrame('handshake', encodeValue(handshake));
}

/**
 * The proof one side sends: an HMAC over its role, both addresses and both nonces, so a proof cannot be
 * replayed on another connection or reflected back by the other side.
 */
export function handshakeProof(
  secret: Buffer,
  role: 'client' | 'server',
  client: string,
  server: string,
  serverNonce: Uint8Array,
  clientNonce: Uint8Array,
): Buffer {
  return createHmac('sha256', secret)
    .update(`actor-ts/${role}\u0000${client}\u0000${server}\u0000`)
    .update(serverNonce)
    .update(clientNonce)
    .digest();
}

/** Constant-time comparison of a received proof with the expected one. */
export function sameProof(expected: Buffer, actual: Uint8Array): boolean {
  return expected.byteLength === actual.byteLength && timingSafeEqual(expected, actual);
}
