// Checks that every TypeScript file of the tree (src, crdt, test, bench, examples, scripts) is at most 400 lines:
// the house rule that keeps a module to one job, measured after formatting so that it cannot be met by squeezing.
// Run by `npm test` after the format check; exits 1 with every file over the limit listed.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, posix, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const MAX_FILE_LINES = 400;
export const CHECKED_DIRS = ['src', 'crdt', 'test', 'bench', 'examples', 'scripts'] as const;

/** A file over the limit: its path relative to the root (forward slashes) and its line count. */
export interface LongFile {
  readonly path: string;
  readonly lines: number;
}

/** The number of lines of a text, as an editor numbers them (a final newline does not start another). */
export function lineCount(text: string): number {
  if (text.length === 0) return 0;
  const breaks = text.split('\n').length - 1;
  return text.endsWith('\n') ? breaks : breaks + 1;
}

/** The .ts files under `dir` of `root` (node_modules skipped), as forward-slash paths relative to `root`, sorted. */
export function listTypeScript(root: string, dir: string): string[] {
  const full = join(root, dir);
  if (!existsSync(full)) return [];
  const out: string[] = [];
  for (const name of readdirSync(full).sort()) {
    const path = posix.join(dir, name);
    if (statSync(join(root, path)).isDirectory()) {
      if (name !== 'node_modules') out.push(...listTypeScript(root, path));
    } else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

/** Every .ts file under the checked folders of `root` with more than `max` lines, in path order. */
export function longFiles(root: string, max: number = MAX_FILE_LINES): LongFile[] {
  return CHECKED_DIRS.flatMap((dir) => listTypeScript(root, dir))
    .map((path) => ({ path, lines: lineCount(readFileSync(join(root, path), 'utf8')) }))
    .filter(({ lines }) => lines > max)
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function main(): void {
  // Compiled to dist/scripts/check-file-lines.js: the project root is two levels up.
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const long = longFiles(root);
  if (long.length > 0) {
    console.error(`check-file-lines: ${long.length} file(s) over ${MAX_FILE_LINES} lines (split them by concern):`);
    for (const { path, lines } of long) console.error(`  ${path}: ${lines} lines`);
    process.exit(1);
  }
  console.log(`check-file-lines: every .ts file under ${CHECKED_DIRS.join(', ')} is at most ${MAX_FILE_LINES} lines`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
