// The doc-comment check `npm test` runs over the package's entry points: it finds exactly the exports without
// a doc comment (re-exported, aliased, type-only or merged alike), and the real entry points have none.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { undocumentedExports } from '../../scripts/check-doc-comments.js';
import { ROOT } from './packed-install.js';

const dir = mkdtempSync(join(tmpdir(), 'doc-comments-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('check-doc-comments', () => {
  it('lists every export without a doc comment, wherever it is declared, and no other', () => {
    writeFileSync(
      join(dir, 'parts.ts'),
      [
        '/** Documented where it is declared. */',
        'export const documented = 1;',
        'export const bare = 2;',
        '// A line comment is not a doc comment.',
        'export function lineCommented(): void {}',
        '/** A class. */',
        'export class Documented {}',
        'export interface Bare {}',
        'export type BareAlias = string;',
        '/** An alias with its reason. */',
        'export type DocumentedAlias = number;',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'index.ts'),
      "export { documented, bare as renamed, lineCommented, Documented, type Bare, type BareAlias, type DocumentedAlias } from './parts.js';\n",
    );
    const missing = undocumentedExports(dir, ['index.ts']);
    expect(missing.map((m) => m.name)).toEqual(['Bare', 'BareAlias', 'lineCommented', 'renamed']);
    expect(missing.find((m) => m.name === 'renamed')?.at).toBe('parts.ts:3');
  });

  it('finds none in the package entry points `.` and `./crdt`', () => {
    expect(undocumentedExports(ROOT, ['src/index.ts', 'crdt/index.ts'])).toEqual([]);
  }, 60_000);
});
