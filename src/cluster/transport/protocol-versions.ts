// Which protocol versions a node speaks, and how two nodes agree on one per connection. A node speaks a range
// [min, max]; in the handshake the dialler announces its range and the acceptor answers with the highest version
// both speak (or refuses, naming both ranges). Handshake frames themselves always carry the frozen header byte
// HANDSHAKE_FRAME_VERSION, so any two releases can read each other's handshake and learn they do not fit;
// message frames carry the version agreed on their connection. The compatibility rule (docs/design.md, "Protocol
// versions"): release N speaks release N-1's protocol; a new field is optional and decoders ignore fields they do
// not know; a new message type goes only to a peer whose agreed version has it (MESSAGE_TYPES_SINCE).
import { ActorTsError } from '../../errors.js';
import { PROTOCOL_VERSION } from './wire-message.js';

/**
 * The header byte of every handshake frame, forever: the version releases before negotiation (protocol 7) wrote
 * and required, so they still read a newer node's Hello (its range travels in fields they ignore).
 */
export const HANDSHAKE_FRAME_VERSION = 7;

/** The oldest version any release that negotiates speaks: what a Hello without a range means. */
export const PROTOCOL_FLOOR = 7;

/** A closed range of protocol versions, each an integer in 1..255. */
export interface ProtocolRange {
  readonly min: number;
  readonly max: number;
}

/** The versions this release speaks: max is PROTOCOL_VERSION; min is the previous release's max, at least. */
export const PROTOCOL_RANGE: ProtocolRange = { min: PROTOCOL_FLOOR, max: PROTOCOL_VERSION };

/** A peer that announces no range (a release before negotiation) speaks exactly the floor. */
export const LEGACY_RANGE: ProtocolRange = { min: PROTOCOL_FLOOR, max: PROTOCOL_FLOOR };

/**
 * The version that introduced each message type sent after PROTOCOL_FLOOR; a type not listed exists at the floor.
 * A message of a type listed here is sent only on connections whose agreed version is at least its entry.
 */
export const MESSAGE_TYPES_SINCE: ReadonlyMap<string, number> = new Map<string, number>();

/** The version a message type needs on a connection. */
export function versionNeededFor(type: string): number {
  return MESSAGE_TYPES_SINCE.get(type) ?? PROTOCOL_FLOOR;
}

/** Whether `range` is well-formed: integers in 1..255 with min <= max. */
export function isProtocolRange(range: { readonly min: unknown; readonly max: unknown }): range is ProtocolRange {
  const { min, max } = range;
  return isVersion(min) && isVersion(max) && min <= max;
}

function isVersion(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 255;
}

/** The highest version both ranges contain, or undefined when they do not meet. */
export function negotiateVersion(own: ProtocolRange, peer: ProtocolRange): number | undefined {
  const highest = Math.min(own.max, peer.max);
  return highest >= Math.max(own.min, peer.min) ? highest : undefined;
}

/** `[7, 9]`: how ranges are named in logs, refusals and health. */
export function describeRange(range: ProtocolRange): string {
  return `[${range.min}, ${range.max}]`;
}

/**
 * Why a connection was refused for want of a common version, naming both nodes and their ranges (the text travels
 * to the other side in the refusal, so it names nobody as "this node").
 */
export function noCommonVersion(
  own: { readonly node: string; readonly range: ProtocolRange },
  peer: { readonly node: string; readonly range: ProtocolRange },
): string {
  return (
    `no common protocol version: ${own.node} speaks ${describeRange(own.range)}, ` +
    `${peer.node} speaks ${describeRange(peer.range)}`
  );
}

/**
 * Parses `min-max` (or a single version), as ACTOR_TS_PROTOCOL_RANGE gives it; `invalid_argument` otherwise.
 * Meant for tests that fake a node of another release.
 */
export function parseProtocolRange(text: string): ProtocolRange {
  const match = /^\s*(\d{1,3})\s*(?:-\s*(\d{1,3}))?\s*$/.exec(text);
  const range = match ? { min: Number(match[1]), max: Number(match[2] ?? match[1]) } : undefined;
  if (range === undefined || !isProtocolRange(range)) {
    throw new ActorTsError(
      'invalid_argument',
      `protocol range "${text}" must be "min-max" with integers 1 <= min <= max <= 255 (e.g. "7-8")`,
    );
  }
  return range;
}
