// Node attributes: `KEY=VALUE` labels a node is started with (zone, rack, region...) and gossips with its
// member record, so placement selectors can match them. One alphabet and one bound for every way in (the
// config, the CLI flag, the gossip parser), so a value accepted anywhere is accepted everywhere.

/** What a key and a value must match. */
export const ATTRIBUTE_TOKEN = /^[A-Za-z0-9_.-]{1,64}$/;
/** How many attributes one node may carry (and gossip may list per member). */
export const MAX_ATTRIBUTES = 32;

export type NodeAttributes = Readonly<Record<string, string>>;

/**
 * Why `value` is not a valid attribute map, or undefined when it is: a plain object of at most
 * MAX_ATTRIBUTES string entries, each key and value matching ATTRIBUTE_TOKEN.
 */
export function attributesProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'attributes must be an object of KEY: VALUE strings';
  // Counted with an early stop before anything else: a hostile peer's map may be huge.
  let count = 0;
  for (const key in value) {
    if (Object.hasOwn(value, key) && ++count > MAX_ATTRIBUTES)
      return `at most ${MAX_ATTRIBUTES} attributes are allowed`;
  }
  for (const [key, item] of Object.entries(value)) {
    if (!ATTRIBUTE_TOKEN.test(key))
      return `attribute key ${JSON.stringify(key.slice(0, 70))} must match [A-Za-z0-9_.-]{1,64}`;
    if (typeof item !== 'string' || !ATTRIBUTE_TOKEN.test(item)) {
      return `value of attribute ${key} must be a string matching [A-Za-z0-9_.-]{1,64}`;
    }
  }
  return undefined;
}

/** A frozen copy with keys in sorted order (so equal maps print and compare alike); assumes a valid map. */
export function normalizeAttributes(value: NodeAttributes): NodeAttributes {
  // fromEntries defines own properties, so a key such as `__proto__` stays a plain entry.
  return Object.freeze(
    Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, value[key] as string]),
    ),
  );
}

/** Parses one `KEY=VALUE` (the CLI's `--attribute`); throws an Error naming the problem. */
export function parseAttributeAssignment(text: string): [string, string] {
  const eq = text.indexOf('=');
  if (eq < 0) throw new Error(`"${text}" is not KEY=VALUE`);
  const key = text.slice(0, eq);
  const value = text.slice(eq + 1);
  if (!ATTRIBUTE_TOKEN.test(key)) throw new Error(`attribute key "${key}" must match [A-Za-z0-9_.-]{1,64}`);
  if (!ATTRIBUTE_TOKEN.test(value))
    throw new Error(`attribute value "${value}" of ${key} must match [A-Za-z0-9_.-]{1,64}`);
  return [key, value];
}
