// Checks the import graph of the built package (dist/): no import cycle between modules, and no layer importing one
// above it. Run by `npm test` after the build; exits 1 with every violation listed.
//
// Layers, lowest first. A module may import its own layer and any layer below, never one above:
//   base      src/errors.ts, src/logging.ts
//   crdt      crdt/                (also independent of base: it is a reusable building block)
//   cluster   src/cluster/         (membership and transport know nothing of what rides on them)
//   sharding  src/sharding/, src/placement-replication/ (if present)
//   api       src/management/
//   node      src/node/, src/protocol.ts
//   top       src/cli/, src/index.ts, src/demo.ts, bench/, scripts/
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// Compiled to dist/scripts/check-imports.js: the project root is two levels up.
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = join(root, 'dist');

const LAYERS = ['base', 'crdt', 'cluster', 'sharding', 'api', 'node', 'top'] as const;
export type Layer = (typeof LAYERS)[number];
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

/** The layer of a module, by its path relative to dist/ (forward slashes, .js). */
export function layerOf(path: string): Layer {
  if (path === 'src/errors.js' || path === 'src/logging.js') return 'base';
  if (path.startsWith('crdt/')) return 'crdt';
  if (path.startsWith('src/cluster/')) return 'cluster';
  if (path.startsWith('src/sharding/') || path.startsWith('src/placement-replication/')) return 'sharding';
  if (path.startsWith('src/management/')) return 'api';
  if (path.startsWith('src/node/') || path === 'src/protocol.js') return 'node';
  return 'top';
}

/** Whether `from` may import `to`. crdt/ imports nothing outside itself. */
export function mayImport(from: string, to: string): boolean {
  const a = layerOf(from);
  const b = layerOf(to);
  if (a === 'crdt') return b === 'crdt';
  return LAYERS.indexOf(b) <= LAYERS.indexOf(a);
}

// Static `import ... from '...'`, `export ... from '...'`, side-effect `import '...'` and dynamic `import('...')`.
const IMPORT = /(?:^|[;\n])\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|(?:^|[;\n])\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

function listModules(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...listModules(full));
    else if (name.endsWith('.js')) out.push(full);
  }
  return out;
}

/** The relative imports of each module, as paths relative to dist/. */
export function importGraph(distDir: string, sourceRoot: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of listModules(distDir)) {
    const from = relative(distDir, file).split('\\').join('/');
    // A module whose source is gone is a stale build output, not part of the package.
    if (!existsSync(join(sourceRoot, from.replace(/\.js$/, '.ts')))) continue;
    const text = readFileSync(file, 'utf8');
    const targets = new Set<string>();
    for (const match of text.matchAll(IMPORT)) {
      const spec = match[1] ?? match[2] ?? match[3];
      if (spec === undefined || !spec.startsWith('.')) continue;
      targets.add(relative(distDir, resolve(dirname(file), spec)).split('\\').join('/'));
    }
    graph.set(from, [...targets].sort());
  }
  return graph;
}

/** Every elementary cycle found by a depth-first search (each reported once, starting at its smallest module). */
export function findCycles(graph: ImportGraph): string[][] {
  const cycles = new Map<string, string[]>();
  const state = new Map<string, 1 | 2>(); // 1 = on the stack, 2 = done
  const stack: string[] = [];
  const visit = (node: string): void => {
    state.set(node, 1);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === 1) {
        const cycle = stack.slice(stack.indexOf(next));
        const start = cycle.indexOf([...cycle].sort()[0] ?? next);
        const canonical = [...cycle.slice(start), ...cycle.slice(0, start)];
        cycles.set(canonical.join(' -> '), canonical);
      } else if (state.get(next) === undefined) {
        visit(next);
      }
    }
    stack.pop();
    state.set(node, 2);
  };
  for (const node of [...graph.keys()].sort()) if (state.get(node) === undefined) visit(node);
  return [...cycles.values()];
}

function main(): void {
  let graph: Map<string, string[]>;
  try {
    graph = importGraph(dist, root);
  } catch (error) {
    console.error(`check-imports: cannot read ${dist} (run the build first): ${String(error)}`);
    process.exit(1);
  }
  const problems: string[] = [];
  for (const [from, targets] of graph) {
    for (const to of targets) {
      if (!mayImport(from, to)) problems.push(`layer: ${from} (${layerOf(from)}) imports ${to} (${layerOf(to)})`);
    }
  }
  for (const cycle of findCycles(graph)) problems.push(`cycle: ${[...cycle, cycle[0]].join(' -> ')}`);
  if (problems.length > 0) {
    console.error(`check-imports: ${problems.length} problem(s) in the import graph of dist/:`);
    for (const line of problems) console.error(`  ${line}`);
    process.exit(1);
  }
  console.log(`check-imports: ${graph.size} modules, no cycle, every import goes to the same layer or below`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
