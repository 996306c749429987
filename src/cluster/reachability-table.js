// The gossiped reachability table: for each observer, the members it currently observes as unreachable,
// stamped with a version only that observer increments (Pekko's Reachability, one row per observer). Rows
// merge by version, so the table converges like the member records whatever order, loss or duplication
// gossip meets; the leader decides downing from the merged table (split-brain-decision.ts), not from its
// own view. A row is replaced whole: an observer that sees a member reachable again writes a newer row
// without it. Rows and subjects of members no longer in the gossip are dropped on the wire (indexes into the
// gossip's member list), so the table never outlives the records it speaks of.
export const EMPTY_TABLE = new Map();
/**
 * The newer version wins. Equal versions normally carry equal rows (one writer); if not (a hostile or
 * broken peer), the union keeps the merge commutative and idempotent.
 */
export function mergeRows(a, b) {
    if (a.version !== b.version)
        return a.version > b.version ? a : b;
    if (sameSubjects(a.subjects, b.subjects))
        return a;
    return { version: a.version, subjects: new Set([...a.subjects, ...b.subjects]) };
}
export function mergeTables(a, b) {
    if (b.size === 0)
        return a;
    if (a.size === 0)
        return b;
    // Copy on write: an unchanged table keeps its identity, and with it its cached digest.
    let merged;
    for (const [observer, row] of b) {
        const existing = (merged ?? a).get(observer);
        const next = existing ? mergeRows(existing, row) : row;
        if (next === existing)
            continue;
        merged ??= new Map(a);
        merged.set(observer, next);
    }
    return merged ?? a;
}
/** The table with `observer`'s row saying exactly `subjects`; the same table when it already does. */
export function withOwnRow(table, observer, subjects) {
    const current = table.get(observer);
    if (current ? sameSubjects(current.subjects, subjects) : subjects.size === 0)
        return table;
    const next = new Map(table);
    next.set(observer, { version: (current?.version ?? 0) + 1, subjects: new Set(subjects) });
    return next;
}
/** Drops rows of observers, and subjects, that `known` rejects (members pruned from the gossip). */
export function retainKnown(table, known) {
    let changed = false;
    const next = new Map();
    for (const [observer, row] of table) {
        if (!known(observer)) {
            changed = true;
            continue;
        }
        const subjects = [...row.subjects].filter(known);
        if (subjects.length === row.subjects.size)
            next.set(observer, row);
        else {
            changed = true;
            next.set(observer, { version: row.version, subjects: new Set(subjects) });
        }
    }
    return changed ? next : table;
}
/** The observations between distinct members that `live` accepts, sorted (observer, then subject). */
export function liveEdges(table, live) {
    const edges = [];
    for (const [observer, row] of table) {
        if (!live(observer))
            continue;
        for (const subject of row.subjects)
            if (subject !== observer && live(subject))
                edges.push({ observer, subject });
    }
    return edges.sort((x, y) => compareText(x.observer, y.observer) || compareText(x.subject, y.subject));
}
/** Subjects of the edges: members some live observer sees as unreachable. */
export function unreachableSubjects(edges) {
    return new Set(edges.map((e) => e.subject));
}
/** A canonical text of the table: equal texts, equal tables. */
export function tableDigest(table) {
    return [...table.entries()]
        .sort(([a], [b]) => compareText(a, b))
        .map(([observer, row]) => `${observer}@${row.version}>${[...row.subjects].sort(compareText).join(',')}`)
        .join('\n');
}
/** Rows whose observer is in `indexOf`, with the subjects that are; empty rows travel (they carry the version). */
export function tableToWire(table, indexOf) {
    const rows = [];
    for (const [observer, row] of table) {
        const index = indexOf.get(observer);
        if (index === undefined)
            continue;
        const subjects = [];
        for (const subject of row.subjects) {
            const s = indexOf.get(subject);
            if (s !== undefined)
                subjects.push(s);
        }
        rows.push([index, row.version, subjects]);
    }
    return rows;
}
/** From validated wire rows (messages.ts checked every index against `keys`); duplicate observers merge. */
export function tableFromWire(rows, keys) {
    const table = new Map();
    for (const [index, version, subjectIndexes] of rows) {
        const observer = keys[index];
        if (observer === undefined)
            continue;
        const subjects = new Set();
        for (const s of subjectIndexes) {
            const subject = keys[s];
            if (subject !== undefined)
                subjects.add(subject);
        }
        const row = { version, subjects };
        const existing = table.get(observer);
        table.set(observer, existing ? mergeRows(existing, row) : row);
    }
    return table;
}
/** The same rows: by identity, else row by row (cheaper than comparing digests). */
export function sameTable(a, b) {
    if (a === b)
        return true;
    if (a.size !== b.size)
        return false;
    for (const [observer, row] of a) {
        const other = b.get(observer);
        if (other === undefined || !sameRow(row, other))
            return false;
    }
    return true;
}
/** The same version and the same subjects. */
export function sameRow(a, b) {
    return a === b || (a.version === b.version && sameSubjects(a.subjects, b.subjects));
}
function sameSubjects(a, b) {
    if (a.size !== b.size)
        return false;
    for (const s of a)
        if (!b.has(s))
            return false;
    return true;
}
function compareText(a, b) {
    return a < b ? -1 : a > b ? 1 : 0;
}
//# sourceMappingURL=reachability-table.js.map