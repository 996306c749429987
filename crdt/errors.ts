// Typed errors of the placement store and the documented input limits they enforce.
// Every rejection happens before any state is touched, so a caught error means "nothing changed".

/** Longest accepted placement target, in UTF-16 code units (an address string is far shorter). */
export const MAX_TARGET_LENGTH = 256;
/** Longest accepted entity type name, in UTF-16 code units. */
export const MAX_TYPE_NAME_LENGTH = 128;
/** Longest accepted node (writer) name, in UTF-16 code units. */
export const MAX_NODE_LENGTH = 256;
/**
 * Most structs (or base slots) one remote update may carry: bounds the work a single frame can cause. A
 * full state holds one struct per write since the last compaction (100,000 by default) plus one base slot
 * per shard; a peer that never compacts can send far more, hence the margin.
 */
export const MAX_UPDATE_STRUCTS = 2_000_000;
/** Largest HLC counter; one more carries into wallMs. */
export const MAX_HLC_COUNTER = 65_535;
/**
 * Latest wallMs a placement timestamp may carry: 2200-01-01T00:00:00Z. Far below 2^53, so the successor of
 * any accepted timestamp is still an exact integer; a value beyond it is never a winner on any replica,
 * and a local write that would need a timestamp beyond it fails with `hlc_out_of_range`.
 */
export const MAX_HLC_WALL_MS = 7_258_118_400_000;

/** Why a store operation or an incoming update was refused; every code is listed with its meaning below. */
export type PlacementStoreErrorCode =
  | 'invalid_shard_id'
  | 'invalid_target'
  | 'invalid_type_name'
  | 'malformed_update'
  | 'invalid_frame'
  | 'malformed_state_vector'
  | 'malformed_digest'
  | 'invalid_hlc'
  | 'hlc_out_of_range'
  | 'implausible_generation'
  | 'shard_out_of_range'
  | 'too_many_slots'
  | 'clock_skew'
  | 'invalid_option';

/** An Error that says what went wrong as a `code` callers can switch on; each subclass names itself. */
export abstract class CodedError<Code extends string> extends Error {
  readonly code: Code;
  constructor(code: Code, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * Thrown by the placement store for bad input (local or from a peer); `code` says which rule it broke, and the store
 * is unchanged.
 */
export class PlacementStoreError extends CodedError<PlacementStoreErrorCode> {
  override readonly name = 'PlacementStoreError';
}

// Control characters would make keys and log lines ambiguous (the slot key uses U+0000 as separator).
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Why `text` is not an acceptable name of at most `max` code units, or null when it is. */
export function nameProblem(text: unknown, max: number): string | null {
  if (typeof text !== 'string') return `expected a string, got ${describe(text)}`;
  if (text.length === 0) return 'must not be empty';
  if (text.length > max) return `is ${text.length} characters long, the limit is ${max}`;
  if (CONTROL.test(text)) return 'must not contain control characters';
  return null;
}

/** A short, safe rendering of a rejected value for error messages; exported for src/ to reuse. */
export function describe(value: unknown): string {
  if (typeof value === 'string') {
    const shown = value.length > 40 ? `${value.slice(0, 40)}...` : value;
    return JSON.stringify(shown);
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}
