// The frames that open a TCP connection, before any protocol message may flow. They are transport-internal
// (never reach a message family) and are validated here as strictly as protocol messages, within a decode
// budget sized for them: they arrive before the peer is authenticated. The Challenge goes to a peer that has
// proved nothing yet, so it says no more than the handshake needs: a nonce and the negotiation (it used to carry
// the acceptor's incarnation, half of the member key gossip names it by; the release waits for the Accepted).
//   dialer -> acceptor  Hello     { from, to, incarnation, nonce, protocolMin?, protocolMax?, release? }
//   acceptor -> dialer  Challenge { nonce, version?, protocolMin?, protocolMax? }             (or Refused)
//   dialer -> acceptor  Proof     { proof? }   HMAC(secret, client role, both addresses, both nonces)
//   acceptor -> dialer  Accepted  { proof?, release? }   the same HMAC with the server role (or Refused)
// The range and release are optional so releases before negotiation (which pick the keys they know) still read a
// Hello, and a Hello or Challenge without them means the legacy range (protocol-versions.ts). `version` is the one
// the acceptor chose for the connection. The acceptor names its release only in Accepted, once the dialler proved
// itself. Refused may carry a `code` (`protocol_version`) beside its reason.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { encodeFrame, type Frame } from './frame-codec.js';
import { decodeValue, encodeValue } from './message-codec.js';
import type { DecodeConfig } from './msgpack-scan.js';
import { HANDSHAKE_FRAME_VERSION, isProtocolRange, type ProtocolRange } from './protocol-versions.js';

/** What a side says of itself in the handshake: the versions it speaks and its release (package version). */
export interface Announcement {
  readonly protocolMin?: number;
  readonly protocolMax?: number;
  readonly release?: string;
}

export type Handshake =
  | ({
      readonly t: 'Hello';
      readonly from: string;
      readonly to: string;
      readonly incarnation: string;
      readonly nonce: Uint8Array;
    } & Announcement)
  | ({ readonly t: 'Challenge'; readonly nonce: Uint8Array; readonly version?: number } & Announcement)
  | { readonly t: 'Proof'; readonly proof?: Uint8Array }
  | { readonly t: 'Accepted'; readonly proof?: Uint8Array; readonly release?: string }
  | { readonly t: 'Refused'; readonly reason: string; readonly code?: 'protocol_version' };

const NONCE_BYTES = 16;
const MAX_TEXT = 512;
const MAX_RELEASE = 64;

/**
 * A handshake is one flat map of at most eight short fields (16 elements, keys and values). Releases before
 * negotiation refuse more than 16: a Hello must never grow beyond its eight fields, or they could not read it.
 */
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
      const announcement = parseAnnouncement(raw);
      return announcement && { t: 'Hello', from, to, incarnation, nonce, ...announcement };
    }
    case 'Challenge': {
      const { nonce, version } = raw;
      if (!isNonce(nonce)) return undefined;
      if (version !== undefined && !isProtocolRange({ min: version, max: version })) return undefined;
      const announcement = parseAnnouncement(raw);
      const chosen = version === undefined ? {} : { version: version as number };
      return announcement && { t: 'Challenge', nonce, ...chosen, ...announcement };
    }
    case 'Proof':
    case 'Accepted': {
      const proof = raw['proof'];
      const announcement = raw['t'] === 'Accepted' ? parseAnnouncement({ release: raw['release'] }) : {};
      if (announcement === undefined) return undefined;
      if (proof === undefined || proof === null) return { t: raw['t'], ...announcement };
      if (!(proof instanceof Uint8Array) || proof.byteLength !== 32) return undefined;
      return { t: raw['t'], proof, ...announcement };
    }
    case 'Refused': {
      const reason = raw['reason'];
      if (!isText(reason)) return undefined;
      return raw['code'] === 'protocol_version'
        ? { t: 'Refused', reason, code: 'protocol_version' }
        : { t: 'Refused', reason };
    }
    default:
      return undefined;
  }
}

/**
 * The optional range and release; undefined (a malformed handshake) for a range that is half given or absurd
 * (max < min, beyond 255, not integers) or a release that is not a short text.
 */
function parseAnnouncement(raw: Readonly<Record<string, unknown>>): Announcement | undefined {
  const { protocolMin, protocolMax, release } = raw;
  if (release !== undefined && (!isText(release) || release.length > MAX_RELEASE)) return undefined;
  const withRelease = release === undefined ? {} : { release };
  if (protocolMin === undefined && protocolMax === undefined) return withRelease;
  if (!isProtocolRange({ min: protocolMin, max: protocolMax })) return undefined;
  return { protocolMin: protocolMin as number, protocolMax: protocolMax as number, ...withRelease };
}

/** The range an announcement names; undefined when it names none (a release before negotiation). */
export function announcedRange(announcement: Announcement): ProtocolRange | undefined {
  const { protocolMin: min, protocolMax: max } = announcement;
  return min === undefined || max === undefined ? undefined : { min, max };
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
  return encodeFrame('handshake', encodeValue(handshake), undefined, HANDSHAKE_FRAME_VERSION);
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
