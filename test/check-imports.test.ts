// The import-graph check that `npm test` runs over the sources: the room table's rules, type-only imports
// counted as edges, cycles, the flat layout it replaced, and the real tree.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  MAY_IMPORT,
  checkGraph,
  findCycles,
  importGraph,
  roomMayImport,
  roomOf,
  twoWayPairs,
} from '../scripts/check-imports.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const trees: string[] = [];
afterEach(() => {
  for (const tree of trees.splice(0)) rmSync(tree, { recursive: true, force: true });
});

/** A source tree of the given files (path -> text) in a temporary directory; returns its problems. */
function problemsOf(files: Record<string, string>): string[] {
  const root = mkdtempSync(join(tmpdir(), 'check-imports-'));
  trees.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return checkGraph(importGraph(root));
}

describe('check-imports', () => {
  it('puts each module in one room by its path', () => {
    expect(roomOf('crdt/store.ts')).toBe('crdt');
    expect(roomOf('crdt/persistence/durable-store.ts')).toBe('crdt/persistence');
    expect(roomOf('crdt/index.ts')).toBe('crdt/surface');
    expect(roomOf('src/cluster/address.ts')).toBe('cluster/vocabulary');
    expect(roomOf('src/cluster/scheduler.ts')).toBe('cluster/vocabulary');
    expect(roomOf('src/cluster/membership/gossip.ts')).toBe('cluster/membership');
    expect(roomOf('src/cluster/transport/tcp-transport.ts')).toBe('cluster/transport');
    expect(roomOf('src/sharding/region/shard-region.ts')).toBe('sharding/region');
    expect(roomOf('src/sharding/cluster-sharding.ts')).toBe('sharding');
    expect(roomOf('src/sharding/core/config.ts')).toBe('sharding/core');
    expect(roomOf('src/sharding/api/external-allocation-controller.ts')).toBe('sharding/api');
    expect(roomOf('src/sharding/index.ts')).toBe('sharding/api');
    expect(roomOf('src/sharding/strategies/hash.ts')).toBe('sharding/strategies');
    expect(roomOf('src/logging.ts')).toBe('base');
    expect(roomOf('src/cli/main.ts')).toBe('cli');
    expect(roomOf('src/unplaced.ts')).toBeUndefined();
  });

  it('holds the rules folders cannot express', () => {
    // strategies read the member vocabulary of the cluster, never its runtime
    expect(roomMayImport('sharding/strategies', 'cluster/vocabulary')).toBe(true);
    expect(roomMayImport('sharding/strategies', 'cluster/membership')).toBe(false);
    expect(roomMayImport('sharding/strategies', 'cluster/transport')).toBe(false);
    // the transport carries bytes between nodes and knows nothing of who is in the cluster
    expect(roomMayImport('cluster/transport', 'cluster/membership')).toBe(false);
    expect(roomMayImport('cluster/membership', 'cluster/transport')).toBe(true);
    // crdt imports nothing of src
    expect(roomMayImport('crdt', 'base')).toBe(false);
    expect(roomMayImport('crdt/persistence', 'crdt')).toBe(true);
    // the runtime imports nothing of management
    for (const runtime of [
      'cluster/transport',
      'cluster/membership',
      'sharding',
      'sharding/coordinator',
      'sharding/region',
      'placement-replication',
    ] as const) {
      expect(roomMayImport(runtime, 'management')).toBe(false);
      expect(roomMayImport(runtime, 'node')).toBe(false);
    }
    expect(roomMayImport('node', 'management')).toBe(true);
    // the foundation of sharding builds on none of its rooms; the controller sits above the runtime
    for (const above of ['sharding', 'sharding/region', 'sharding/coordinator', 'sharding/api'] as const)
      expect(roomMayImport('sharding/core', above)).toBe(false);
    expect(roomMayImport('sharding/placements', 'sharding')).toBe(false);
    expect(roomMayImport('sharding/api', 'sharding')).toBe(true);
  });

  it('refuses a table in which two rooms may import each other: the rooms are layers', () => {
    expect(twoWayPairs(MAY_IMPORT)).toEqual([]);
    const table = { low: [], mid: ['low', 'high'], high: ['mid', 'low'] };
    expect(twoWayPairs(table)).toEqual([['mid', 'high']]);
    expect(twoWayPairs({ low: [], high: ['low'] })).toEqual([]);
  });

  it('counts a type-only import as an edge', () => {
    const problems = problemsOf({
      'src/cluster/membership/gossip.ts': 'export interface Gossip { readonly members: number }\n',
      'src/sharding/strategies/ring.ts':
        "import type { Gossip } from '../../cluster/membership/gossip.js';\nexport type G = Gossip;\n",
    });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(
      'src/sharding/strategies/ring.ts (sharding/strategies) imports src/cluster/membership/gossip.ts (cluster/membership)',
    );
  });

  it('finds a type-only cycle', () => {
    const problems = problemsOf({
      'src/sharding/coordinator/insight.ts':
        "import { judge } from './operator-requests.js';\nexport type Request = { readonly id: number };\nexport const j = judge;\n",
      'src/sharding/coordinator/operator-requests.ts':
        "import type { Request } from './insight.js';\nexport const judge = (r: Request): number => r.id;\n",
    });
    expect(problems).toEqual([
      'cycle: src/sharding/coordinator/insight.ts -> src/sharding/coordinator/operator-requests.ts -> src/sharding/coordinator/insight.ts',
    ]);
  });

  it('refuses the flat layout it replaced, and modules in no room', () => {
    const problems = problemsOf({
      'src/sharding/placement-target.ts': 'export const parse = (s: string): string => s;\n',
      'src/sharding/strategies/pin-matching.ts':
        "import { parse } from '../placement-target.js';\nexport const p = parse;\n",
      'src/stray.ts': 'export const x = 1;\n',
    });
    expect(problems).toContain('room: src/stray.ts is in no room (add it to ROOMS in scripts/check-imports.ts)');
    expect(
      problems.some((p) =>
        p.startsWith(
          'room: src/sharding/strategies/pin-matching.ts (sharding/strategies) imports src/sharding/placement-target.ts (sharding)',
        ),
      ),
    ).toBe(true);
  });

  it('keeps examples to the published package', () => {
    const problems = problemsOf({
      'src/index.ts': 'export const x = 1;\n',
      'examples/app/node.ts': "import { x } from '../../src/index.js';\nexport const y = x;\n",
    });
    expect(problems).toEqual([
      'room: examples/app/node.ts (examples) imports src/index.ts (surface): examples may import nothing outside itself',
    ]);
  });

  it('finds every cycle once, and none in a DAG', () => {
    expect(
      findCycles(
        new Map([
          ['a', ['b', 'c']],
          ['b', ['c']],
          ['c', []],
        ]),
      ),
    ).toEqual([]);
    expect(
      findCycles(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', ['a', 'd']],
          ['d', ['d']],
        ]),
      ),
    ).toEqual([['a', 'b', 'c'], ['d']]);
  });

  it('passes on this tree', () => {
    expect(checkGraph(importGraph(ROOT))).toEqual([]);
  });
});
