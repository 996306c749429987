// A pin record's shape, declared once as a JSON schema (TypeBox) from which its TypeScript type comes: the
// listing the runtime builds (placement-record.ts), the management API's answers, the CLI and the console page
// all read this one declaration. A leaf on purpose, like text-limits.ts: the console page type-checks against it
// in the browser's program, so it imports nothing but TypeBox and the shape helpers.
import Type from 'typebox';
import { Nullable, type Shape } from '../../shapes.js';

/** A pin's mode: `prefer` (a soft pin) or `require` (a hard one). */
export const PinMode = Type.Enum(['prefer', 'require']);

/** The placement store's timestamp (crdt's Hlc): decides which of two writes wins. */
export const HlcShape = Type.Object({ wallMs: Type.Number(), counter: Type.Integer(), node: Type.String() });

/** A pin as the store holds it, as the API, the CLI and the controller list it. */
export const PinRecord = Type.Object({
  shardId: Type.Integer({ minimum: 0 }),
  /** The canonical target: `system@host:port` or a selector with sorted keys. */
  target: Type.String(),
  mode: PinMode,
  /** ISO-8601 (UTC, milliseconds), or null for a pin that never expires. */
  expiresAt: Nullable(Type.String()),
  reason: Nullable(Type.String()),
  by: Nullable(Type.String()),
  /** The node that wrote it. */
  writer: Type.String(),
  /** The timestamp that decides conflicts. */
  hlc: HlcShape,
  /** Present only in a listing that includes expired pins. */
  expired: Type.Optional(Type.Boolean()),
});
export type PinRecord = Shape<typeof PinRecord>;
