// Checks that no function of the product's code (src, crdt, scripts, examples) is longer than 80 lines: the
// house rule that a function is read at once. Functions, methods, constructors, accessors, arrow functions and
// function expressions are measured from their first to their last line, after formatting; a function nested in
// another counts for both. Tests and benchmarks are not checked: a `describe` block is a list, not a function to
// read at once. Run by `npm test` beside the file-length check; exits 1 with every long function listed.
//
// The functions that were longer when the check came in are listed below with their length then: a ratchet.
// Each may shrink, never grow; one that fits the limit must leave the list (a stale entry fails too), and a
// function not listed must fit. The list is reviewed like code; it only ever gets shorter.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { listTypeScript } from './check-file-lines.js';

export const MAX_FUNCTION_LINES = 80;
export const FUNCTION_CHECKED_DIRS = ['src', 'crdt', 'scripts', 'examples'] as const;

/** Functions over the limit when the check came in (`path#name` -> lines then), each to be split. */
export const KNOWN_LONG_FUNCTIONS: Readonly<Record<string, number>> = {};

/** A function over the limit: where it starts, what it is called, and its line count. */
export interface LongFunction {
  readonly path: string;
  readonly line: number;
  readonly name: string;
  readonly lines: number;
}

/** The functions of one source text longer than `max` lines, in source order. */
export function longFunctionsIn(path: string, text: string, max: number = MAX_FUNCTION_LINES): LongFunction[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: LongFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > max) found.push({ path, line: first + 1, name: nameOf(node), lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every function over `max` lines under the checked folders of `root`. */
export function longFunctions(root: string, max: number = MAX_FUNCTION_LINES): LongFunction[] {
  return FUNCTION_CHECKED_DIRS.flatMap((dir) => listTypeScript(root, dir)).flatMap((path) =>
    longFunctionsIn(path, readFileSync(join(root, path), 'utf8'), max),
  );
}

/**
 * What the check reports: the long functions not allowed by `known` (not listed, or longer than listed), and
 * the listed ones that are stale (gone, or within the limit now: take them off the list).
 */
export function judgeFunctions(
  long: ReadonlyArray<LongFunction>,
  known: Readonly<Record<string, number>> = KNOWN_LONG_FUNCTIONS,
): { readonly refused: LongFunction[]; readonly stale: string[] } {
  const seen = new Set<string>();
  const refused = long.filter((f) => {
    const key = `${f.path}#${f.name}`;
    seen.add(key);
    const allowed = known[key];
    return allowed === undefined || f.lines > allowed;
  });
  return { refused, stale: Object.keys(known).filter((key) => !seen.has(key)) };
}

function nameOf(node: ts.SignatureDeclaration): string {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (node.name !== undefined) return node.name.getText();
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return parent.name.getText();
  return '(anonymous)';
}

function main(): void {
  // Compiled to dist/scripts/check-function-lines.js: the project root is two levels up.
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const { refused, stale } = judgeFunctions(longFunctions(root));
  for (const { path, line, name, lines } of refused)
    console.error(`  ${path}:${line} ${name}: ${lines} lines (limit ${MAX_FUNCTION_LINES}; split it by concern)`);
  for (const key of stale) console.error(`  ${key}: listed in KNOWN_LONG_FUNCTIONS but no longer over the limit`);
  if (refused.length + stale.length > 0) {
    console.error(`check-function-lines: ${refused.length} function(s) too long, ${stale.length} stale list entries`);
    process.exit(1);
  }
  const listed = Object.keys(KNOWN_LONG_FUNCTIONS).length;
  const but = listed === 0 ? '' : `, but ${listed} listed to be split`;
  console.log(
    `check-function-lines: every function under ${FUNCTION_CHECKED_DIRS.join(', ')} is at most ${MAX_FUNCTION_LINES} lines${but}`,
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
