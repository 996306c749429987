// The file-length check that `npm test` runs over the tree: it counts lines as an editor does, finds a file
// over the limit in any checked folder (and only there), and reports each one with its count.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_FILE_LINES, lineCount, lineRuleBreaches, longFiles } from '../scripts/check-file-lines.js';

const trees: string[] = [];
afterEach(() => {
  for (const tree of trees.splice(0)) rmSync(tree, { recursive: true, force: true });
});

/** A tree of the given files (path -> text) in a temporary directory; returns its root. */
function treeOf(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'check-file-lines-'));
  trees.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const linesOf = (count: number): string => 'export const x = 1;\n'.repeat(count);

describe('check-file-lines', () => {
  it('counts lines as an editor numbers them', () => {
    expect(['', 'a', 'a\n', 'a\nb', 'a\n\n'].map((text) => lineCount(text))).toEqual([0, 1, 1, 2, 2]);
  });

  it('fails on a file one line over the limit, and passes one at the limit', () => {
    const root = treeOf({
      'src/at-limit.ts': linesOf(MAX_FILE_LINES),
      'test/sharding/over.test.ts': linesOf(MAX_FILE_LINES + 1),
    });
    expect(longFiles(root)).toEqual([{ path: 'test/sharding/over.test.ts', lines: MAX_FILE_LINES + 1 }]);
  });

  it('looks in every checked folder and only at .ts files there', () => {
    const long = linesOf(MAX_FILE_LINES + 5);
    const root = treeOf({
      'crdt/a.ts': long,
      'bench/lib/b.ts': long,
      'examples/app/c.ts': long,
      'scripts/d.ts': long,
      'src/e.md': long,
      'docs/f.ts': long,
      'src/node_modules/g.ts': long,
    });
    expect(longFiles(root).map(({ path }) => path)).toEqual([
      'bench/lib/b.ts',
      'crdt/a.ts',
      'examples/app/c.ts',
      'scripts/d.ts',
    ]);
  });

  it('lets a reviewed file exceed the limit up to its ceiling, and refuses stale or outgrown entries', () => {
    const root = treeOf({
      'src/reviewed.ts': linesOf(MAX_FILE_LINES + 50),
      'src/outgrown.ts': linesOf(MAX_FILE_LINES + 51),
      'src/short.ts': linesOf(10),
      'src/unreviewed.ts': linesOf(MAX_FILE_LINES + 1),
    });
    const ceiling = MAX_FILE_LINES + 50;
    const breaches = lineRuleBreaches(root, {
      'src/reviewed.ts': { ceiling, why: 'one concept' },
      'src/outgrown.ts': { ceiling, why: 'one concept' },
      'src/short.ts': { ceiling, why: 'was long once' },
    });
    expect(breaches).toEqual([
      `src/outgrown.ts: ${MAX_FILE_LINES + 51} lines (over its reviewed ceiling ${ceiling})`,
      `src/short.ts: listed as reviewed but not over ${MAX_FILE_LINES} lines (remove it)`,
      `src/unreviewed.ts: ${MAX_FILE_LINES + 1} lines (over ${MAX_FILE_LINES}: split it by concern)`,
    ]);
  });

  it('holds on this repository: every long file is reviewed and within its ceiling', () => {
    expect(lineRuleBreaches(join(dirname(new URL(import.meta.url).pathname), '..'))).toEqual([]);
  });
});
