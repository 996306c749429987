// Shapes declared once: the helpers every JSON schema of the project (TypeBox) is built with, and the type a
// schema gives its readers. The management API's shapes, the pin record and the wire messages all use these, so
// a shape is written in one place and its TypeScript type and its check both come from it. Imports nothing but
// TypeBox: the console page type-checks against it in the browser's program.
import Type, { type Static, type TSchema } from 'typebox';

/** A shape's type as clients read it: readonly all the way down, so the runtime's readonly values fit it. */
export type Shape<S extends TSchema> = DeepReadonly<Static<S>>;
// Arrays and tuples map to their readonly forms (a tuple keeps its positions), objects field by field.
type DeepReadonly<T> = T extends Uint8Array
  ? T
  : T extends readonly unknown[]
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T extends object
      ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
      : T;

/** `schema` or null. */
export const Nullable = <S extends TSchema>(schema: S) => Type.Union([schema, Type.Null()]);

/**
 * Bytes of at most `maxBytes` (msgpack's bin: a Uint8Array). JSON Schema has no such type, so it is a refinement,
 * checked by the compiled checker like any other keyword.
 */
export const Bytes = (maxBytes: number) =>
  Type.Refine(Type.Unsafe<Uint8Array>({}), (value) => value instanceof Uint8Array && value.byteLength <= maxBytes);
