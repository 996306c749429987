// The optional small record a slot may carry next to its target (slot value `[target, wallMs, counter,
// meta]`): the layer above decides what it means; the store only bounds its size, keeps it canonical (keys
// sorted) and replicates it with the target. Values from the network are checked here before they count.
import { PlacementStoreError, describe } from './errors.js';

/** String or integer fields; see the limits below. Always frozen, keys in code-unit order. */
export type SlotMeta = Readonly<Record<string, string | number>>;

/** Most fields one meta record may hold. */
export const MAX_META_FIELDS = 8;
/** Longest string field value, in UTF-16 code units (room for a 500-character reason and then some). */
export const MAX_META_STRING_LENGTH = 1024;
// A letter first: rules out `__proto__` and friends, so a parsed record can never reach a prototype.
const META_KEY = /^[A-Za-z][A-Za-z0-9_]{0,31}$/;

/** Why `meta` cannot be stored, or null when it can. Bounded work: at most MAX_META_FIELDS + 1 keys are looked at. */
export function metaProblem(meta: unknown): string | null {
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta))
    return `must be a plain object, got ${describe(meta)}`;
  const proto: unknown = Object.getPrototypeOf(meta);
  if (proto !== Object.prototype && proto !== null) return 'must be a plain object';
  let fields = 0;
  for (const key in meta) {
    if (!Object.hasOwn(meta, key)) return `has an inherited field ${JSON.stringify(key.slice(0, 40))}`;
    if (++fields > MAX_META_FIELDS) return `has more than ${MAX_META_FIELDS} fields`;
    if (!META_KEY.test(key)) return `field name ${JSON.stringify(key.slice(0, 40))} is not [A-Za-z][A-Za-z0-9_]{0,31}`;
    const value: unknown = (meta as Record<string, unknown>)[key];
    if (typeof value === 'number') {
      if (!Number.isSafeInteger(value)) return `field ${key} must be a safe integer, got ${describe(value)}`;
    } else if (typeof value === 'string') {
      if (value.length > MAX_META_STRING_LENGTH)
        return `field ${key} is longer than ${MAX_META_STRING_LENGTH} characters`;
    } else {
      return `field ${key} must be a string or an integer, got ${describe(value)}`;
    }
  }
  if (fields === 0) return 'must have at least one field (leave it out instead)';
  return null;
}

export function assertMeta(meta: unknown): asserts meta is SlotMeta {
  const problem = metaProblem(meta);
  if (problem !== null) throw new PlacementStoreError('invalid_option', `meta ${problem}`);
}

/** A frozen copy with sorted keys: equal records encode and compare equally on every replica. */
export function canonicalMeta(meta: SlotMeta): SlotMeta {
  const out: Record<string, string | number> = {};
  for (const key of Object.keys(meta).sort()) out[key] = meta[key] as string | number;
  return Object.freeze(out);
}

/** A total order on optional meta records (absent lowest), the same on every replica. */
export function compareMeta(a: SlotMeta | undefined, b: SlotMeta | undefined): number {
  if (a === b) return 0;
  if (a === undefined || b === undefined) return a === undefined ? -1 : 1;
  const left = metaKey(a);
  const right = metaKey(b);
  return left < right ? -1 : left > right ? 1 : 0;
}

export function sameMeta(a: SlotMeta | undefined, b: SlotMeta | undefined): boolean {
  return compareMeta(a, b) === 0;
}

/** The canonical text of a record: its entries in key order, as JSON. */
export function metaKey(meta: SlotMeta): string {
  return JSON.stringify(
    Object.keys(meta)
      .sort()
      .map((key) => [key, meta[key]]),
  );
}
