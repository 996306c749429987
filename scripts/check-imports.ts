// Checks the import graph of the sources against the room table: every module lives in exactly one room, a room
// imports only the rooms its row lists (and itself), no two rooms list each other (the rooms are layers), and no
// two modules import each other, directly or through others. Type-only imports count as edges: a type is a dependency a reader must follow like any other. Run by
// `npm test` after the build; exits 1 with every violation listed.
//
// A newcomer reads ROOMS and MAY_IMPORT below to learn which room a file belongs to and what it may touch.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, posix, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * Every room of the tree, lowest first, with the test that says which room a source file is in: the first row
 * whose test matches its path (relative to the root, `.ts`).
 */
export const ROOMS = [
  ['base', (p) => p === 'src/errors.ts' || p === 'src/logging.ts' || p === 'src/shapes.ts'],
  // A node's TLS material (PEM files checked, followed for changes): every TLS listener of a node reads it.
  ['tls', (p) => p.startsWith('src/tls/')],
  ['crdt/surface', (p) => p === 'crdt/index.ts'],
  ['crdt/persistence', (p) => p.startsWith('crdt/persistence/')],
  ['crdt', (p) => p.startsWith('crdt/')],
  // The member facts every layer reads: addresses, member records and statuses, their order and attributes;
  // and the scheduler and randomness the cluster's parts are driven by (injected, so tests control time).
  ['cluster/vocabulary', (p) => /^src\/cluster\/[^/]+\.ts$/.test(p)],
  // Bytes between nodes: frames, message codecs, handshakes, TCP connections, probes. Knows no membership.
  ['cluster/transport', (p) => p.startsWith('src/cluster/transport/')],
  // Who is in the cluster: gossip, failure detection, reachability, downing, the leader's actions, the clock.
  ['cluster/membership', (p) => p.startsWith('src/cluster/membership/')],
  // Durable entity rows and the per-shard epoch that fences old writers: lmdb or PostgreSQL, no sharding concept.
  ['entity-store', (p) => p.startsWith('src/entity-store/')],
  ['placement-replication', (p) => p.startsWith('src/placement-replication/')],
  // The sharding runtime's foundation: settings, the context regions and coordinators run in, shard ids, the
  // entity API an application implements. Everything of sharding builds on it; it builds on none of them.
  ['sharding/core', (p) => p.startsWith('src/sharding/core/')],
  ['sharding/placements', (p) => p.startsWith('src/sharding/placements/')],
  ['sharding/strategies', (p) => p.startsWith('src/sharding/strategies/')],
  ['sharding/protocol', (p) => p.startsWith('src/sharding/protocol/')],
  ['sharding/region', (p) => p.startsWith('src/sharding/region/')],
  ['sharding/coordinator', (p) => p.startsWith('src/sharding/coordinator/')],
  // Above the runtime: the placement controller and the explain / dry-run requests, which drive a ClusterSharding,
  // and the sharding barrel (index.ts), which exports them with the runtime.
  ['sharding/api', (p) => p.startsWith('src/sharding/api/') || p === 'src/sharding/index.ts'],
  ['sharding', (p) => /^src\/sharding\/[^/]+\.ts$/.test(p)],
  // The management API's JSON shapes: read by the routes, the CLI's client and the console page (for types only).
  ['management/shapes', (p) => p === 'src/management/api-shapes.ts'],
  ['management/console', (p) => p.startsWith('src/management/console/')],
  ['management', (p) => p.startsWith('src/management/')],
  ['node', (p) => p.startsWith('src/node/')],
  ['cli', (p) => p.startsWith('src/cli/')],
  ['surface', (p) => ['src/index.ts', 'src/protocol.ts', 'src/demo.ts'].includes(p)],
  ['bench', (p) => p.startsWith('bench/')],
  ['scripts', (p) => p.startsWith('scripts/')],
  ['examples', (p) => p.startsWith('examples/')],
] as const satisfies ReadonlyArray<readonly [string, (path: string) => boolean]>;
export type Room = (typeof ROOMS)[number][0];

/** The runtime and its public surfaces: what node wiring, the package surface and bench may build on. */
/** The cluster layer's rooms above its vocabulary: what the runtime above it may read. */
const CLUSTER: readonly Room[] = ['cluster/transport', 'cluster/membership'];
const RUNTIME: readonly Room[] = [
  'base',
  'tls',
  'crdt/surface',
  'cluster/vocabulary',
  ...CLUSTER,
  'placement-replication',
  'entity-store',
  'sharding',
];
/** The sharding runtime's rooms below its top (cluster-sharding.ts), and the api above it. */
const SHARDING_ROOMS: readonly Room[] = [
  'sharding/core',
  'sharding/placements',
  'sharding/strategies',
  'sharding/protocol',
  'sharding/region',
  'sharding/coordinator',
];
const ABOVE_RUNTIME: readonly Room[] = ['sharding', ...SHARDING_ROOMS, 'sharding/api'];

/**
 * Who may import whom (a room may always import itself). The rules folders alone cannot say: crdt imports
 * nothing of src; strategies read only the member vocabulary of the cluster, never its runtime; the runtime
 * (cluster, replication, sharding) imports nothing of management, node or cli; examples import only the
 * published package (no relative import leaves examples/).
 */
export const MAY_IMPORT = {
  // Only for crdt/errors.ts's CodedError, the one base of every typed error; crdt imports nothing of src.
  base: ['crdt'],
  crdt: [],
  'crdt/persistence': ['crdt'],
  'crdt/surface': ['crdt', 'crdt/persistence'],
  tls: ['base'],
  'cluster/vocabulary': ['base'],
  'cluster/transport': ['base', 'tls', 'cluster/vocabulary'],
  'cluster/membership': ['base', 'tls', 'cluster/vocabulary', 'cluster/transport'],
  'placement-replication': ['base', 'crdt/surface', 'cluster/vocabulary', ...CLUSTER],
  // crdt/surface for the durable lmdb settings only (one definition of "fsynced before it resolves").
  'entity-store': ['base', 'crdt/surface'],
  'sharding/core': [
    'base',
    'cluster/vocabulary',
    ...CLUSTER,
    'entity-store',
    'sharding/protocol',
    'sharding/strategies',
  ],
  'sharding/placements': ['base', 'crdt/surface', 'cluster/vocabulary'],
  'sharding/strategies': ['base', 'cluster/vocabulary', 'sharding/placements'],
  'sharding/protocol': ['base', 'cluster/vocabulary', ...CLUSTER, 'sharding/placements'],
  'sharding/region': ['base', 'cluster/vocabulary', ...CLUSTER, 'entity-store', 'sharding/core', 'sharding/protocol'],
  'sharding/coordinator': [
    'base',
    'cluster/vocabulary',
    ...CLUSTER,
    'sharding/core',
    'sharding/placements',
    'sharding/protocol',
    'sharding/strategies',
  ],
  sharding: ['base', 'crdt/surface', 'cluster/vocabulary', ...CLUSTER, 'placement-replication', ...SHARDING_ROOMS],
  'sharding/api': ['base', 'crdt/surface', 'cluster/vocabulary', 'sharding', ...SHARDING_ROOMS],
  // The text limits of a pin (a leaf of sharding/placements) bound the request shapes.
  'management/shapes': ['base', 'sharding/placements'],
  'management/console': ['base', 'management/shapes'],
  management: [
    'base',
    'tls',
    'crdt/surface',
    'cluster/vocabulary',
    'sharding',
    'sharding/core',
    'sharding/api',
    'sharding/placements',
    'sharding/strategies',
    'management/shapes',
    'management/console',
  ],
  node: [...RUNTIME, ...ABOVE_RUNTIME, 'management', 'management/shapes', 'management/console'],
  cli: [
    'base',
    'tls',
    'crdt/surface',
    'cluster/vocabulary',
    ...CLUSTER,
    'entity-store',
    'sharding',
    'sharding/core',
    'sharding/placements',
    'sharding/strategies',
    'management',
    'management/shapes',
    'node',
  ],
  surface: [...RUNTIME, ...ABOVE_RUNTIME, 'management', 'management/shapes', 'management/console', 'node', 'cli'],
  bench: [
    ...RUNTIME,
    ...ABOVE_RUNTIME,
    'crdt',
    'crdt/persistence',
    'management',
    'management/shapes',
    'management/console',
    'node',
    'cli',
    'surface',
  ],
  scripts: [],
  examples: [],
} satisfies Record<Room, readonly Room[]>;

export type ImportGraph = ReadonlyMap<string, readonly string[]>;

/** The room of a module by its path relative to the root (forward slashes, `.ts`), or undefined for none. */
export function roomOf(path: string): Room | undefined {
  for (const [room, test] of ROOMS) if (test(path)) return room;
  return undefined;
}

/** Whether a module in room `from` may import one in room `to`. */
export function roomMayImport(from: Room, to: Room): boolean {
  const row: readonly Room[] = MAY_IMPORT[from];
  return from === to || row.includes(to);
}

const SOURCE_DIRS = ['crdt', 'src', 'bench', 'scripts', 'examples'];

function listSources(root: string, dir: string): string[] {
  const full = join(root, dir);
  if (!existsSync(full)) return [];
  const out: string[] = [];
  for (const name of readdirSync(full)) {
    const path = posix.join(dir, name);
    if (statSync(join(root, path)).isDirectory()) {
      if (name !== 'node_modules' && name !== 'static') out.push(...listSources(root, path));
    } else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/**
 * The relative imports of every source module under `root` (type-only ones included), as paths relative to the
 * root. A specifier names the compiled `.js`; the edge goes to the `.ts` it is compiled from.
 */
export function importGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const from of SOURCE_DIRS.flatMap((dir) => listSources(root, dir))) {
    const { importedFiles } = ts.preProcessFile(readFileSync(join(root, from), 'utf8'), true, true);
    const targets = new Set<string>();
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) continue;
      targets.add(posix.normalize(posix.join(posix.dirname(from), fileName)).replace(/\.js$/, '.ts'));
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

/**
 * The pairs of rooms that may import each other: the rooms are layers, so the table must be a tree of them
 * (no room lists a room that lists it back). Each pair once, in table order.
 */
export function twoWayPairs(table: Readonly<Record<string, readonly string[]>>): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  const rooms = Object.keys(table);
  for (const [i, a] of rooms.entries())
    for (const b of rooms.slice(i + 1)) if (table[a]?.includes(b) && table[b]?.includes(a)) pairs.push([a, b]);
  return pairs;
}

/** Every violation of the room table and every cycle in `graph`, one line each; a two-way pair in the table too. */
export function checkGraph(graph: ImportGraph): string[] {
  const problems: string[] = twoWayPairs(MAY_IMPORT).map(
    ([a, b]) => `table: ${a} and ${b} may import each other; rooms are layers, one of them must not list the other`,
  );
  for (const [from, targets] of graph) {
    const a = roomOf(from);
    if (a === undefined) {
      problems.push(`room: ${from} is in no room (add it to ROOMS in scripts/check-imports.ts)`);
      continue;
    }
    for (const to of targets) {
      const b = roomOf(to);
      if (b === undefined) {
        if (a === 'examples')
          problems.push(`room: ${from} (examples) imports ${to}: an example imports only the package`);
        else if (graph.has(to)) problems.push(`room: ${from} imports ${to}, which is in no room`);
        continue;
      }
      if (!roomMayImport(a, b))
        problems.push(`room: ${from} (${a}) imports ${to} (${b}): ${a} may import ${describeRow(a)}`);
    }
  }
  for (const cycle of findCycles(graph)) problems.push(`cycle: ${[...cycle, cycle[0]].join(' -> ')}`);
  return problems;
}

function describeRow(room: Room): string {
  const row: readonly Room[] = MAY_IMPORT[room];
  return row.length === 0 ? 'nothing outside itself' : `only ${row.join(', ')}`;
}

function main(): void {
  // Compiled to dist/scripts/check-imports.js: the project root is two levels up.
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const graph = importGraph(root);
  const problems = checkGraph(graph);
  if (problems.length > 0) {
    console.error(`check-imports: ${problems.length} problem(s) in the import graph:`);
    for (const line of problems) console.error(`  ${line}`);
    process.exit(1);
  }
  const rooms = new Set([...graph.keys()].map((path) => roomOf(path)));
  console.log(
    `check-imports: ${graph.size} modules in ${rooms.size} rooms, no cycle, every import allowed by the room table`,
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
