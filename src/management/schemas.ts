// JSON schemas of the management routes: Fastify validates every request against them before a handler
// runs, so a handler only sees well-shaped input (range checks that need runtime state stay in handlers).

/** Upper bound of one target string, as the placement store accepts it. */
import { MAX_BY_LENGTH, MAX_REASON_LENGTH } from '../sharding/placements/placement-options.js';
import { MAX_PLACEMENT_TARGET_LENGTH } from '../sharding/placements/placement-target.js';
export { MAX_PLACEMENT_TARGET_LENGTH as MAX_TARGET_LENGTH };
/** Longest path parameter any route's schema accepts (an entity id), in characters. */
export const MAX_PARAM_CHARS = 256;
/**
 * The router's limit on one raw (percent-encoded) path parameter: a character takes at most 9 encoded
 * characters (3 UTF-8 bytes as %XX), so every parameter the schemas accept fits and the schema decides.
 */
export const MAX_PARAM_LENGTH = MAX_PARAM_CHARS * 9;
/** How many placements one bulk request may carry. */
export const MAX_BULK_PLACEMENTS = 10_000;

const shardId = { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER } as const;
// JSON types and the target's length here; what a target or an option may be is judged by the placement
// validators (placement-target.ts, placement-options.ts), so the API answers invalid_target /
// invalid_placement with the same message the CLI and the controller give. The body limit bounds the rest.
const placement = {
  type: 'object',
  additionalProperties: false,
  required: ['shardId', 'target'],
  properties: {
    shardId,
    target: { type: 'string', minLength: 1, maxLength: MAX_PLACEMENT_TARGET_LENGTH },
    mode: { type: 'string' },
    ttlMs: { type: 'number' },
    expiresAt: { type: 'string' },
    reason: { type: 'string' },
    by: { type: 'string' },
    allowUnknownTarget: { type: 'boolean' },
  },
} as const;

export const typeNameParams = {
  type: 'object',
  required: ['typeName'],
  properties: { typeName: { type: 'string', minLength: 1, maxLength: 128 } },
} as const;

export const shardParams = {
  type: 'object',
  required: ['typeName', 'shardId'],
  properties: { ...typeNameParams.properties, shardId: { type: 'string', pattern: '^[0-9]{1,15}$' } },
} as const;

// if/then/else rather than oneOf: a rejected body is reported against the form it was meant to be (bulk when
// it has `placements`), not as a list of every branch's failures.
export const setPlacementsBody = {
  type: 'object',
  if: { required: ['placements'] },
  then: {
    additionalProperties: false,
    required: ['placements'],
    properties: {
      placements: { type: 'array', minItems: 1, maxItems: MAX_BULK_PLACEMENTS, items: placement },
      // For the whole write: pins to targets no current member matches are written (planned nodes).
      allowUnknownTarget: { type: 'boolean' },
    },
  },
  else: placement,
} as const;

export const placementsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { includeExpired: { type: 'string', enum: ['true', 'false'] } },
} as const;

/** Who made a write and why, as the audit records it: optional, bounded like a pin's. */
export const provenanceProperties = {
  by: { type: 'string', minLength: 1, maxLength: MAX_BY_LENGTH },
  reason: { type: 'string', minLength: 1, maxLength: MAX_REASON_LENGTH },
} as const;

export const provenanceQuery = {
  type: 'object',
  additionalProperties: false,
  properties: provenanceProperties,
} as const;

export const rebalanceBody = {
  type: 'object',
  additionalProperties: false,
  required: ['shardIds'],
  properties: {
    shardIds: { type: 'array', minItems: 1, maxItems: MAX_BULK_PLACEMENTS, items: shardId },
    ...provenanceProperties,
  },
} as const;

/** One placement as the API takes it: the target and the rule options (see PlacementOptions). */
export interface PinRequestBody {
  readonly shardId: number;
  readonly target: string;
  readonly mode?: string;
  readonly ttlMs?: number;
  readonly expiresAt?: string;
  readonly reason?: string;
  readonly by?: string;
  /** Write it even when no current member matches the target; refused with 409 unknown_target otherwise. */
  readonly allowUnknownTarget?: boolean;
}
export interface PlacementsQuery {
  readonly includeExpired?: 'true' | 'false';
}
export type SetPlacementsBody =
  PinRequestBody | { readonly placements: readonly PinRequestBody[]; readonly allowUnknownTarget?: boolean };
export interface RebalanceBody {
  readonly shardIds: readonly number[];
  readonly by?: string;
  readonly reason?: string;
}
export interface ProvenanceQuery {
  readonly by?: string;
  readonly reason?: string;
}
