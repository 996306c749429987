// A pin record's shape, declared once as a JSON schema (TypeBox) from which its TypeScript type comes: the
// listing the runtime builds (placement-record.ts), the management API's answers, the CLI, the console page and
// the explain answer on the wire all read this one declaration, bounds included. A leaf on purpose, like
// text-limits.ts: the console page type-checks against it in the browser's program, so it imports nothing but
// TypeBox, the shape helpers and the text limits.
import Type from 'typebox';
import { Nullable, type Shape } from '../../shapes.js';
import { MAX_BY_LENGTH, MAX_PLACEMENT_TARGET_LENGTH, MAX_REASON_LENGTH } from './text-limits.js';

/** Longest node name (a writer, an HLC's node) a pin record carries. */
const MAX_NODE_NAME_LENGTH = 512;

/** A pin's mode: `prefer` (a soft pin) or `require` (a hard one). */
export const PinMode = Type.Enum(['prefer', 'require']);

/** The placement store's timestamp (crdt's Hlc): decides which of two writes wins. */
export const HlcShape = Type.Object({
  wallMs: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
  counter: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
  node: Type.String({ maxLength: MAX_NODE_NAME_LENGTH }),
});

/** A pin as the store holds it, as the API, the CLI and the controller list it. */
export const PinRecord = Type.Object({
  shardId: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
  /** The canonical target: `system@host:port` or a selector with sorted keys. */
  target: Type.String({ maxLength: MAX_PLACEMENT_TARGET_LENGTH }),
  mode: PinMode,
  /** ISO-8601 (UTC, milliseconds), or null for a pin that never expires. */
  expiresAt: Nullable(Type.String({ maxLength: 64 })),
  reason: Nullable(Type.String({ maxLength: MAX_REASON_LENGTH })),
  by: Nullable(Type.String({ maxLength: MAX_BY_LENGTH })),
  /** The node that wrote it. */
  writer: Type.String({ maxLength: MAX_NODE_NAME_LENGTH }),
  /** The timestamp that decides conflicts. */
  hlc: HlcShape,
  /** Present only in a listing that includes expired pins. */
  expired: Type.Optional(Type.Boolean()),
});
export type PinRecord = Shape<typeof PinRecord>;
