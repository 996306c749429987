// One error base (issue 34): every error class of the product's code extends CodedError, so every typed error
// carries a `code` and the management API's one table (src/management/errors.ts statusOf) can answer it. The one
// exception is the console page's ApiError: the page runs in the browser and loads no server module.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { listTypeScript } from '../scripts/check-file-lines.js';
import { CodedError } from '../crdt/errors.js';
import { ActorTsError } from '../src/errors.js';
import { CoordinatorInvariantError } from '../src/sharding/coordinator/state.js';
import { LocalClusterError } from '../src/cli/local-cluster-checks.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const BROWSER_ONLY = new Set(['src/management/console/page/api.ts#ApiError']);

/** `path#Class` of every class in `text` that extends a class named `Error` directly. */
function plainErrorClasses(path: string, text: string): string[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isClassDeclaration(node)) {
      const base = node.heritageClauses?.find((clause) => clause.token === ts.SyntaxKind.ExtendsKeyword)?.types[0];
      if (base !== undefined && base.expression.getText(source) === 'Error')
        found.push(`${path}#${node.name?.text ?? '(anonymous)'}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('one error base', () => {
  it('finds a class that extends Error directly (the check can fail)', () => {
    expect(plainErrorClasses('x.ts', 'class A extends Error {}\nclass B extends CodedError<"c"> {}')).toEqual([
      'x.ts#A',
    ]);
  });

  it('every error class of src and crdt extends CodedError, but the browser page', () => {
    const direct = ['src', 'crdt']
      .flatMap((dir) => listTypeScript(root, dir))
      .flatMap((path) => plainErrorClasses(path, readFileSync(join(root, path), 'utf8')))
      .filter((name) => !BROWSER_ONLY.has(name));
    expect(direct).toEqual(['crdt/errors.ts#CodedError']);
  });

  it('errors that were plain carry a code now', () => {
    const errors = [
      new CoordinatorInvariantError('two homes'),
      new LocalClusterError('held'),
      new ActorTsError('timeout', 'late'),
    ];
    for (const error of errors) expect(error).toBeInstanceOf(CodedError);
    expect(errors.map((error) => error.code)).toEqual(['coordinator_invariant', 'local_cluster_refused', 'timeout']);
  });
});
