// Checks that every public export of the package (the entry points `.` and `./crdt`) has a doc comment: the
// API reference (`npm run docs:api`) and editors' hovers are built from them, and an export without one is a
// contract nobody wrote down. Run by `npm test` after the build; exits 1 listing every export without one.
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** An export with no doc comment on any of its declarations. */
export interface Undocumented {
  /** The entry point it is exported from, relative to the project root. */
  readonly entry: string;
  readonly name: string;
  /** Where it is declared, `path:line`, relative to the project root. */
  readonly at: string;
}

/** The exports of each entry point (TypeScript sources) that lack a doc comment, in entry and name order. */
export function undocumentedExports(root: string, entries: readonly string[]): Undocumented[] {
  const files = entries.map((entry) => join(root, entry));
  const program = ts.createProgram(files, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
  });
  const checker = program.getTypeChecker();
  const missing: Undocumented[] = [];
  for (const [i, file] of files.entries()) {
    const source = program.getSourceFile(file);
    const module = source === undefined ? undefined : checker.getSymbolAtLocation(source);
    if (module === undefined) throw new Error(`${file}: not a module the compiler could read`);
    for (const exported of checker.getExportsOfModule(module)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      if (hasDocComment(symbol, checker)) continue;
      const declaration = symbol.declarations?.[0];
      const at =
        declaration === undefined
          ? '?'
          : `${relative(root, declaration.getSourceFile().fileName)}:${declaration.getSourceFile().getLineAndCharacterOfPosition(declaration.getStart()).line + 1}`;
      missing.push({ entry: entries[i] ?? '', name: exported.getName(), at });
    }
  }
  return missing.sort((a, b) => (a.entry === b.entry ? (a.name < b.name ? -1 : 1) : a.entry < b.entry ? -1 : 1));
}

/** A doc comment with text on any declaration (a class merged with an interface needs it on one of them). */
function hasDocComment(symbol: ts.Symbol, checker: ts.TypeChecker): boolean {
  if (ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim() !== '') return true;
  // `export const X = ...` keeps its comment on the variable statement, which the symbol already reads;
  // tags alone (`@deprecated` with text) also say something.
  return symbol.getJsDocTags(checker).some((tag) => ts.displayPartsToString(tag.text).trim() !== '');
}

const isMain = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  // Compiled to dist/scripts/check-doc-comments.js: the project root is two levels up.
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const missing = undocumentedExports(root, ['src/index.ts', 'crdt/index.ts']);
  if (missing.length > 0) {
    console.error(`${missing.length} public export(s) without a doc comment:`);
    for (const { entry, name, at } of missing) console.error(`  ${entry}: ${name} (${at})`);
    process.exitCode = 1;
  } else {
    console.log('check-doc-comments: every public export of src/index.ts and crdt/index.ts has a doc comment');
  }
}
