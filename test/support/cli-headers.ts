// Test helper for the CLI tests: the header row of a printed table as its column names, and the columns the
// listings print, written once so that every test of a listing checks the same header.

/** `placements ls`. */
export const PLACEMENT_COLUMNS = ['shard', 'target', 'mode', 'expires', 'reason', 'by', 'writer', 'hlc'];
/** `members`. */
export const MEMBER_COLUMNS = [
  'address',
  'status',
  'reachable',
  'upNumber',
  'appVersion',
  'release',
  'protocol',
  'attributes',
  'cordoned',
];

/** The column names of a printed table (its first line, split on whitespace). */
export function headerOf(lines: readonly string[]): string[] | undefined {
  return lines[0]?.split(/\s+/);
}
