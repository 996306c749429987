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
// itself. Refused may carry a `code` (`protocol_version`) beside its reason. Declared once like every message
// (wire-schema.ts), within the handshake's own decode budget.
import { createHmac, timingSafeEqual } from 'node:crypto';
import Type from 'typebox';
import { Bytes } from '../../shapes.js';
import { encodeFrame, type Frame } from './frame-codec.js';
import { decodeValue, encodeValue } from './message-codec.js';
import type { DecodeConfig } from './msgpack-scan.js';
import { HANDSHAKE_FRAME_VERSION, isProtocolRange, type ProtocolRange } from './protocol-versions.js';
import { absentOrNull, declareParser, ignoredIfInvalid, type MessagesBy } from './wire-schema.js';

const NONCE_BYTES = 16;
const PROOF_BYTES = 32;
const MAX_TEXT = 512;
const MAX_RELEASE = 64;

const Text = Type.String({ minLength: 1, maxLength: MAX_TEXT });
const Nonce = Type.Refine(Bytes(NONCE_BYTES), (nonce) => nonce.byteLength === NONCE_BYTES);
const Proof = Type.Refine(Bytes(PROOF_BYTES), (proof) => proof.byteLength === PROOF_BYTES);
const Version = Type.Integer({ minimum: 1, maximum: 255 });

/** What a side says of itself in the handshake: the versions it speaks and its release (package version). */
const announcement = {
  protocolMin: Type.Optional(Version),
  protocolMax: Type.Optional(Version),
  release: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_RELEASE })),
};

/** The handshake's steps, declared once (wire-schema.ts), told apart by `t`. */
const HANDSHAKE_SCHEMAS = {
  Hello: Type.Object({ from: Text, to: Text, incarnation: Text, nonce: Nonce, ...announcement }),
  /** `version`: the one the acceptor chose for the connection. */
  Challenge: Type.Object({ nonce: Nonce, version: Type.Optional(Version), ...announcement }),
  /** Null is read as absent: no secret, no proof. */
  Proof: Type.Object({ proof: absentOrNull(Proof) }),
  Accepted: Type.Object({ proof: absentOrNull(Proof), release: announcement.release }),
  /** A code this release does not know is left out: the refusal stands, without its reason's kind. */
  Refused: Type.Object({ reason: Text, code: ignoredIfInvalid(Type.Literal('protocol_version')) }),
};

/** One handshake step. */
export type Handshake = MessagesBy<typeof HANDSHAKE_SCHEMAS, 't'>;
/** What a side says of itself in the handshake: the versions it speaks and its release (package version). */
export type Announcement = Pick<Extract<Handshake, { t: 'Hello' }>, 'protocolMin' | 'protocolMax' | 'release'>;

/** A range half given or absurd (max < min) makes the handshake malformed: the rule the schemas cannot state. */
function wholeRange<M extends Announcement>(message: M): M | undefined {
  const { protocolMin: min, protocolMax: max } = message;
  if (min === undefined && max === undefined) return message;
  return isProtocolRange({ min, max }) ? message : undefined;
}

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
export const parseHandshake: (value: unknown) => Handshake | undefined = declareParser('t', HANDSHAKE_SCHEMAS, {
  Hello: wholeRange,
  Challenge: wholeRange,
});

/** The range an announcement names; undefined when it names none (a release before negotiation). */
export function announcedRange(announcement: Announcement): ProtocolRange | undefined {
  const { protocolMin: min, protocolMax: max } = announcement;
  return min === undefined || max === undefined ? undefined : { min, max };
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
