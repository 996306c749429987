// The import-graph check that `npm test` runs over dist/: its layer rule and cycle search on small graphs.
import { describe, expect, it } from 'vitest';
import { findCycles, layerOf, mayImport } from '../scripts/check-imports.js';

describe('check-imports', () => {
  it('places modules in layers by path', () => {
    expect(layerOf('crdt/store.js')).toBe('crdt');
    expect(layerOf('src/cluster/cluster.js')).toBe('cluster');
    expect(layerOf('src/sharding/shard-region.js')).toBe('sharding');
    expect(layerOf('src/protocol.js')).toBe('node');
    expect(layerOf('src/logging.js')).toBe('base');
    expect(layerOf('src/cli/main.js')).toBe('top');
  });

  it('lets a layer import itself and below, never above; crdt imports only crdt', () => {
    expect(mayImport('src/sharding/shard-region.js', 'src/cluster/address.js')).toBe(true);
    expect(mayImport('src/cluster/cluster.js', 'src/protocol.js')).toBe(false);
    expect(mayImport('src/cluster/cluster.js', 'src/sharding/messages.js')).toBe(false);
    expect(mayImport('src/cluster/cluster.js', 'src/logging.js')).toBe(true);
    expect(mayImport('crdt/store.js', 'src/errors.js')).toBe(false);
    expect(mayImport('src/management/server.js', 'src/node/node.js')).toBe(false);
  });

  it('finds every cycle once, and none in a DAG', () => {
    const dag = new Map([
      ['a', ['b', 'c']],
      ['b', ['c']],
      ['c', []],
    ]);
    expect(findCycles(dag)).toEqual([]);
    const cyclic = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', ['d']],
    ]);
    expect(findCycles(cyclic)).toEqual([['a', 'b', 'c'], ['d']]);
  });
});
