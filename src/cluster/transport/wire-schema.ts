// Wire messages declared once: a family is a table from message type to a JSON schema (TypeBox) of its fields,
// and the family's TypeScript union and its parse gate both come from that table. The parse gate checks a
// decoded frame against its type's compiled schema (bounds included: lengths, ranges, sizes of bytes, so no
// work proportional to an unchecked size is done), keeps only the declared fields (a tolerant reader: a newer
// peer's extra fields are dropped, never passed on), then runs the message's own rule, if it has one, for what
// a schema cannot say (two lists disjoint, one number below another) or to read an older peer's form.
import Type, { type TObject, type TProperties, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import type { Shape } from '../../shapes.js';
import type { MessageFamily, RawMessage } from './wire-message.js';

/** Each message type of a family and the schema of its fields (without `type`). */
export type MessageSchemas = Readonly<Record<string, TObject>>;

/** The message a schema declares: its fields, read-only, and its `type`. */
export type DeclaredMessage<S extends MessageSchemas, T extends keyof S & string> = Shape<S[T]> & {
  readonly type: T;
};

/** The union of every message a table declares. */
export type MessagesOf<S extends MessageSchemas> = { [T in keyof S & string]: DeclaredMessage<S, T> }[keyof S & string];

/** Per message type, a rule beyond the schema: the message as it is to be delivered, or undefined to drop it. */
export type MessageRules<S extends MessageSchemas> = {
  readonly [T in keyof S & string]?: (message: DeclaredMessage<S, T>) => DeclaredMessage<S, T> | undefined;
};

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
  const gates = new Map<string, Gate>();
  for (const [type, fields] of Object.entries(schemas)) {
    const schema: TObject = withType(type, fields.properties);
    const compiled = Compile(schema);
    const rule = (rules as Record<string, ((message: never) => unknown) | undefined>)[type];
    gates.set(type, { check: (value) => compiled.Check(value), pick: pickerOf(schema), rule });
  }
  return {
    name,
    types: new Set(gates.keys()),
    parse: (raw) => parseDeclared(gates, raw) as MessagesOf<S> | undefined,
  };
}

function withType(type: string, properties: TProperties): TObject {
  return Type.Object({ type: Type.Literal(type), ...properties });
}

function parseDeclared(gates: ReadonlyMap<string, Gate>, raw: RawMessage): unknown {
  const gate = gates.get(raw.type);
  if (gate === undefined || !gate.check(raw)) return undefined;
  const message = gate.pick(raw) as never;
  return gate.rule === undefined ? message : gate.rule(message);
}

/**
 * How to copy a value that passed `schema`'s check keeping only declared fields: objects field by field, arrays
 * item by item, a union by the first member the value passes; anything else (numbers, strings, bytes) as it is.
 * A copy, not a clean in place: the caller's value is never changed.
 */
function pickerOf(schema: TSchema): Pick {
  const shape = schema as { properties?: TProperties; items?: TSchema; anyOf?: TSchema[] };
  if (shape.properties !== undefined) {
    const fields = Object.entries(shape.properties).map(([key, field]) => [key, pickerOf(field)] as const);
    return (value) => {
      const source = value as Record<string, unknown>;
      const copy: Record<string, unknown> = {};
      for (const [key, pick] of fields) if (source[key] !== undefined) copy[key] = pick(source[key]);
      return copy;
    };
  }
  if (shape.items !== undefined) {
    const pick = pickerOf(shape.items);
    return (value) => (value as unknown[]).map(pick);
  }
  if (shape.anyOf !== undefined) {
    const members = shape.anyOf.map((member) => ({ check: Compile(member), pick: pickerOf(member) }));
    return (value) => (members.find((member) => member.check.Check(value))?.pick ?? identity)(value);
  }
  return identity;
}

const identity: Pick = (value) => value;
