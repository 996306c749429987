// The gossiped reachability table: for each observer, the members it currently observes as unreachable,
// stamped with a version only that observer increments (Pekko's Reachability, one row per observer). Rows
// merge by version, so the table converges like the member records whatever order, loss or duplication
// gossip meets; the leader decides downing from the merged table (split-brain-decision.ts), not from its
// own view. A row is replaced whole: an observer that sees a member reachable again writes a newer row
// without it. Rows and subjects of members no longer in the gossip are dropped on the wire (indexes into the
// gossip's member list), so the table never outlives the records it speaks of.

/** One observer's row: the subjects it observes as unreachable, as of its `version`. */
export interface ObserverRow {
  readonly version: number;
  readonly subjects: ReadonlySet<string>;
}

/** By observer member key. */
export type ReachabilityTable = ReadonlyMap<string, ObserverRow>;

export const EMPTY_TABLE: ReachabilityTable = new Map();

/** One unreachability observation between two live members. */
export interface UnreachableEdge {
  readonly observer: string;
  readonly subject: string;
}

/** On the wire: [observer index, version, subject indexes], indexes into the gossip's `members`. */
export type WireReachabilityRow = readonly [number, number, ReadonlyArray<number>];

/**
 * The newer version wins. Equal versions normally carry equal rows (one writer); if not (a hostile or
 * broken peer), the union keeps the merge commutative and idempotent.
 */
export function mergeRows(a: ObserverRow, b: ObserverRow): ObserverRow {
  if (a.version !== b.version) return a.version > b.version ? a : b;
  if (sameSubjects(a.subjects, b.subjects)) return a;
  return { version: a.version, subjects: new Set([...a.subjects, ...b.subjects]) };
}

export function mergeTables(a: ReachabilityTable, b: ReachabilityTable): ReachabilityTable {
  if (b.size === 0) return a;
  if (a.size === 0) return b;
  // Copy on write: an unchanged table keeps its identity, and with it its cached digest.
  let merged: Map<string, ObserverRow> | undefined;
  for (const [observer, row] of b) {
    const existing = (merged ?? a).get(observer);
    const next = existing ? mergeRows(existing, row) : row;
    if (next === existing) continue;
    merged ??= new Map(a);
    merged.set(observer, next);
  }
  return merged ?? a;
}

/** The table with `observer`'s row saying exactly `subjects`; the same table when it already does. */
export function withOwnRow(
  table: ReachabilityTable,
  observer: string,
  subjects: ReadonlySet<string>,
): ReachabilityTable {
  const current = table.get(observer);
  if (current ? sameSubjects(current.subjects, subjects) : subjects.size === 0) return table;
  const next = new Map(table);
  next.set(observer, { version: (current?.version ?? 0) + 1, subjects: new Set(subjects) });
  return next;
}

/** Drops rows of observers, and subjects, that `known` rejects (members pruned from the gossip). */
export function retainKnown(table: ReachabilityTable, known: (key: string) => boolean): ReachabilityTable {
  let changed = false;
  const next = new Map<string, ObserverRow>();
  for (const [observer, row] of table) {
    if (!known(observer)) {
      changed = true;
      continue;
    }
    const subjects = [...row.subjects].filter(known);
    if (subjects.length === row.subjects.size) next.set(observer, row);
    else {
      changed = true;
      next.set(observer, { version: row.version, subjects: new Set(subjects) });
    }
  }
  return changed ? next : table;
}

/** The observations between distinct members that `live` accepts, sorted (observer, then subject). */
export function liveEdges(table: ReachabilityTable, live: (key: string) => boolean): UnreachableEdge[] {
  const edges: UnreachableEdge[] = [];
  for (const [observer, row] of table) {
    if (!live(observer)) continue;
    for (const subject of row.subjects) if (subject !== observer && live(subject)) edges.push({ observer, subject });
  }
  return edges.sort((x, y) => compareText(x.observer, y.observer) || compareText(x.subject, y.subject));
}

/** Subjects of the edges: members some live observer sees as unreachable. */
export function unreachableSubjects(edges: ReadonlyArray<UnreachableEdge>): Set<string> {
  return new Set(edges.map((e) => e.subject));
}

/** A canonical text of the table: equal texts, equal tables. */
export function tableDigest(table: ReachabilityTable): string {
  return [...table.entries()]
    .sort(([a], [b]) => compareText(a, b))
    .map(([observer, row]) => `${observer}@${row.version}>${[...row.subjects].sort(compareText).join(',')}`)
    .join('\n');
}

/** Rows whose observer is in `indexOf`, with the subjects that are; empty rows travel (they carry the version). */
export function tableToWire(table: ReachabilityTable, indexOf: ReadonlyMap<string, number>): WireReachabilityRow[] {
  const rows: WireReachabilityRow[] = [];
  for (const [observer, row] of table) {
    const index = indexOf.get(observer);
    if (index === undefined) continue;
    const subjects: number[] = [];
    for (const subject of row.subjects) {
      const s = indexOf.get(subject);
      if (s !== undefined) subjects.push(s);
    }
    rows.push([index, row.version, subjects]);
  }
  return rows;
}

/** From validated wire rows (messages.ts checked every index against `keys`); duplicate observers merge. */
export function tableFromWire(
  rows: ReadonlyArray<WireReachabilityRow>,
  keys: ReadonlyArray<string | undefined>,
): ReachabilityTable {
  const table = new Map<string, ObserverRow>();
  for (const [index, version, subjectIndexes] of rows) {
    const observer = keys[index];
    if (observer === undefined) continue;
    const subjects = new Set<string>();
    for (const s of subjectIndexes) {
      const subject = keys[s];
      if (subject !== undefined) subjects.add(subject);
    }
    const row: ObserverRow = { version, subjects };
    const existing = table.get(observer);
    table.set(observer, existing ? mergeRows(existing, row) : row);
  }
  return table;
}

/** The same rows: by identity, else row by row (cheaper than comparing digests). */
export function sameTable(a: ReachabilityTable, b: ReachabilityTable): boolean {
  if (a === b) return true;
  if (a.size !== b.size) return false;
  for (const [observer, row] of a) {
    const other = b.get(observer);
    if (other === undefined || !sameRow(row, other)) return false;
  }
  return true;
}

/** The same version and the same subjects. */
export function sameRow(a: ObserverRow, b: ObserverRow): boolean {
  return a === b || (a.version === b.version && sameSubjects(a.subjects, b.subjects));
}

function sameSubjects(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  for (const s of a) if (!b.has(s)) return false;
  return true;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
