// Settings a library does not know must not pass silently: `startNode({ httpPort: 9000 })` used to start on 8551
// (the field is `http.port`). Each key of the input is checked against the known ones; an unknown key is refused
// with `invalid_argument` naming it and the nearest known setting (nested ones included, as `http.port`).
import { ActorTsError } from '../errors.js';

/** Throws `invalid_argument` for the first key of `input` (or of a nested object in `nested`) not known. */
export function refuseUnknownKeys(
  input: object,
  known: readonly string[],
  nested: Readonly<Record<string, readonly string[]>>,
  what = 'startNode',
): void {
  const paths = [...known, ...Object.entries(nested).flatMap(([key, inner]) => inner.map((k) => `${key}.${k}`))];
  for (const key of Object.keys(input)) {
    if (!known.includes(key)) throw unknownKey(key, paths, what);
    const inner = nested[key];
    const value = (input as Record<string, unknown>)[key];
    if (inner === undefined || typeof value !== 'object' || value === null) continue;
    for (const innerKey of Object.keys(value)) {
      if (!inner.includes(innerKey)) throw unknownKey(`${key}.${innerKey}`, paths, what);
    }
  }
}

function unknownKey(key: string, paths: readonly string[], what: string): ActorTsError {
  const nearest = nearestOf(key, paths);
  const hint = nearest === undefined ? '' : `; did you mean "${nearest}"?`;
  return new ActorTsError('invalid_argument', `${what} has no setting "${key}"${hint}`);
}

/** The known path closest to `key` (case and dots aside), if any is close enough to be a likely typo. */
function nearestOf(key: string, paths: readonly string[]): string | undefined {
  const plain = (text: string): string => text.toLowerCase().replace(/[._-]/g, '');
  let best: { path: string; distance: number } | undefined;
  for (const path of paths) {
    const [a, b] = [plain(key), plain(path)];
    // One name inside the other (`dataDirectory` for `dataDir`) is a likelier slip than its edit distance says.
    const inside = a !== b && (a.startsWith(b) || b.startsWith(a));
    const distance = Math.min(editDistance(a, b), inside ? Math.ceil(Math.abs(a.length - b.length) / 2) + 1 : Infinity);
    if (best === undefined || distance < best.distance) best = { path, distance };
  }
  return best !== undefined && best.distance <= Math.max(2, Math.floor(plain(key).length / 3)) ? best.path : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length]!;
}
