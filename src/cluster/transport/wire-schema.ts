// Wire messages declared once: a family is a table from message type to a JSON schema (TypeBox) of its fields,
// and the family's TypeScript union and its parse gate both come from that table. The parse gate checks a
// decoded frame against its type's compiled schema (bounds included: lengths, ranges, sizes of bytes, so no
// work proportional to an unchecked size is done), keeps only the declared fields (a tolerant reader: a newer
// peer's extra fields are dropped, never passed on), then runs the message's own rule, if it has one, for what
// a schema cannot say (two lists disjoint, one number below another) or to read an older peer's form.
import Type, { type Static, type TObject, type TOptional, type TProperties, type TSchema, type TUnion } from 'typebox';
import { Compile } from 'typebox/compile';
import type { Shape } from '../../shapes.js';
import type { MessageFamily } from './wire-message.js';

/**
 * Each message type of a family and the schema of its fields (without `type`): an object, or a union of objects
 * for a message with more than one form (an answer that is a value or an error).
 */
export type MessageSchemas = Readonly<Record<string, TObject | TUnion<TObject[]>>>;

/** The message a schema declares: its fields, read-only, and its discriminator `K` (`type` on the wire). */
export type DeclaredBy<S extends MessageSchemas, T extends keyof S & string, K extends string> = Shape<S[T]> & {
  readonly [P in K]: T;
};
/** A message of a family: its fields and its `type`. */
export type DeclaredMessage<S extends MessageSchemas, T extends keyof S & string> = DeclaredBy<S, T, 'type'>;

/** The union of every message a table declares, discriminated by `K`. */
export type MessagesBy<S extends MessageSchemas, K extends string> = {
  [T in keyof S & string]: DeclaredBy<S, T, K>;
}[keyof S & string];
/** The union of every message a family's table declares. */
export type MessagesOf<S extends MessageSchemas> = MessagesBy<S, 'type'>;

/** Per message type, a rule beyond the schema: the message as it is to be delivered, or undefined to drop it. */
export type RulesBy<S extends MessageSchemas, K extends string> = {
  readonly [T in keyof S & string]?: (message: DeclaredBy<S, T, K>) => DeclaredBy<S, T, K> | undefined;
};
/** A family's rules. */
export type MessageRules<S extends MessageSchemas> = RulesBy<S, 'type'>;

interface Gate {
  readonly check: (value: unknown) => boolean;
  readonly pick: Pick;
  readonly rule: ((message: never) => unknown) | undefined;
}

/** A copy of a checked value with only what its schema declares. */
type Pick = (value: unknown) => unknown;

/**
 * A message family from its one declaration: `schemas` names every type and its fields, `rules` adds the checks
 * a schema cannot express. The family's `parse` returns the message checked and cleaned, or undefined (drop).
 */
export function declareFamily<S extends MessageSchemas>(
  name: string,
  schemas: S,
  rules: MessageRules<S> = {},
): MessageFamily<MessagesOf<S>> {
  const parse = declareParser('type', schemas, rules);
  return { name, types: new Set(Object.keys(schemas)), parse: (raw) => parse(raw) };
}

/**
 * The parse gate of a table whose messages are told apart by `key` (a family's `type`; the handshake's `t`): an
 * untrusted decoded value in, the message checked and copied (then its rule run) or undefined out.
 */
export function declareParser<S extends MessageSchemas, K extends string>(
  key: K,
  schemas: S,
  rules: RulesBy<S, K> = {},
): (value: unknown) => MessagesBy<S, K> | undefined {
  const gates = new Map<string, Gate>();
  for (const [name, fields] of Object.entries(schemas)) {
    const schema = withDiscriminator(key, name, fields);
    const compiled = Compile(schema);
    const rule = (rules as Record<string, ((message: never) => unknown) | undefined>)[name];
    gates.set(name, { check: (value) => compiled.Check(value), pick: pickerOf(schema), rule });
  }
  return (value) => {
    if (typeof value !== 'object' || value === null) return undefined;
    const name = (value as Record<string, unknown>)[key];
    const gate = typeof name === 'string' ? gates.get(name) : undefined;
    if (gate === undefined || !gate.check(value)) return undefined;
    const message = gate.pick(value) as never;
    return (gate.rule === undefined ? message : gate.rule(message)) as MessagesBy<S, K> | undefined;
  };
}

function withDiscriminator(key: string, name: string, fields: TObject | TUnion<TObject[]>): TSchema {
  const named = (properties: TProperties): TObject => Type.Object({ [key]: Type.Literal(name), ...properties });
  return 'anyOf' in fields ? Type.Union(fields.anyOf.map((form) => named(form.properties))) : named(fields.properties);
}

/**
 * How to copy a value that passed `schema`'s check keeping only declared fields: objects field by field, arrays
 * item by item, a union by the first member the value passes; anything else (numbers, strings, bytes) as it is.
 * A copy, not a clean in place: the caller's value is never changed.
 */
function pickerOf(schema: TSchema): Pick {
  const read = READERS.get(schema);
  if (read !== undefined) return read;
  const shape = schema as { properties?: TProperties; items?: TSchema; anyOf?: TSchema[] };
  if (shape.properties !== undefined) return objectPicker(shape.properties);
  if (shape.items !== undefined) {
    const pick = pickerOf(shape.items);
    // A list of plain values is the decoded frame's own: kept as it is, as the value itself is.
    return pick === identity ? identity : (value) => (value as unknown[]).map(pick);
  }
  if (shape.anyOf !== undefined) return unionPicker(shape.anyOf);
  return identity;
}

/**
 * An object's picker, generated once per schema (its keys are the schema's, never the network's): one object
 * literal of the required fields, then each optional field present (one read by a reader of its own stays out
 * when the reader gives nothing: ignoredIfInvalid, absentOrNull).
 * Built like a hand-written copy, so every copy of one message type has the same shape (a hand-rolled loop that
 * added keys one by one cost ten times as much on the hot path: an entity envelope).
 */
function objectPicker(properties: TProperties): Pick {
  const fields = Object.entries(properties).map(([key, field], index) => ({
    at: `v[${JSON.stringify(key)}]`,
    key: JSON.stringify(key),
    pick: pickerOf(field),
    index,
    optional: Type.IsOptional(field),
    read: READERS.has(field),
  }));
  const copy = (field: (typeof fields)[number]): string =>
    field.pick === identity ? field.at : `p[${field.index}](${field.at})`;
  const required = fields.filter((field) => !field.optional).map((field) => `${field.key}: ${copy(field)}`);
  const optional = fields
    .filter((field) => field.optional)
    .map((field) => {
      const present = `${field.at} !== undefined`;
      if (field.read) return `if (${present}) { const x = ${copy(field)}; if (x !== undefined) o[${field.key}] = x; }`;
      return `if (${present}) o[${field.key}] = ${copy(field)};`;
    });
  const body = `const o = { ${required.join(', ')} }; ${optional.join(' ')} return o;`;
  const make = new Function('p', `return (v) => { ${body} };`) as (picks: Pick[]) => Pick;
  return make(fields.map((field) => field.pick));
}

/**
 * A union's picker: the first member the value passes decides. When every member but one is a primitive (an
 * object or null, say), the value's kind decides without a second check.
 */
function unionPicker(members: readonly TSchema[]): Pick {
  const picks = members.map((member) => ({ member, check: Compile(member), pick: pickerOf(member) }));
  const structured = picks.filter(({ pick }) => pick !== identity);
  if (structured.length === 0) return identity;
  const primitive = (member: TSchema): boolean => PRIMITIVE_TYPES.has((member as { type?: unknown }).type as string);
  const only = structured[0];
  if (structured.length === 1 && only !== undefined && picks.every((p) => p === only || primitive(p.member)))
    return (value) => (typeof value === 'object' && value !== null ? only.pick(value) : value);
  return (value) => (picks.find(({ check }) => check.Check(value))?.pick ?? identity)(value);
}

const PRIMITIVE_TYPES: ReadonlySet<string> = new Set(['null', 'string', 'number', 'integer', 'boolean']);

/**
 * The fields read by a function of their own (readAs, ignoredIfInvalid, absentOrNull) instead of copied by their
 * schema; an optional one whose reader gives undefined is left out.
 */
const READERS = new WeakMap<TSchema, Pick>();

/**
 * A field checked by `schema` and read by `read` (a normal form: sorted keys, frozen), where a copy of its
 * declared parts is not what the reader wants.
 */
export function readAs<S extends TSchema>(schema: S, read: (value: Static<S>) => Static<S>): S {
  const field = Type.Refine(schema, () => true) as unknown as S;
  READERS.set(field, read as Pick);
  return field;
}

/**
 * An optional field whose value is kept only when `schema` accepts it: an invalid one is left out, never a reason
 * to drop the message (a clock reading, say, whose only use is a sample that is then not taken).
 */
export function ignoredIfInvalid<S extends TSchema>(schema: S): TOptional<S> {
  const field = Type.Optional(Type.Unknown());
  const check = Compile(schema);
  READERS.set(field, (value) => (check.Check(value) ? value : undefined));
  return field as unknown as TOptional<S>;
}

/**
 * An optional field that may also come as null, read as absent (an encoder that writes undefined as nil): the
 * check accepts null, the copy leaves the field out, and the field's type is plain optional.
 */
export function absentOrNull<S extends TSchema>(schema: S): TOptional<S> {
  const field = Type.Optional(Type.Union([schema, Type.Null()]));
  const pick = pickerOf(schema);
  READERS.set(field, (value) => (value === null ? undefined : pick(value)));
  return field as unknown as TOptional<S>;
}

const identity: Pick = (value) => value;
