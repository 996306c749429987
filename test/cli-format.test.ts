import { describe, expect, it } from 'vitest';
import { shardRanges, table } from '../src/cli/format.js';

describe('operator output formatting', () => {
  it('compresses shard ids into ranges and marks pinned shards', () => {
    expect(shardRanges([7, 1, 2, 3])).toBe('1-3,7');
    expect(shardRanges([])).toBe('');
    expect(shardRanges([1, 2, 3, 4], new Set([3]))).toBe('1-2,3*,4');
  });

  it('pads columns to the widest cell', () => {
    expect(
      table(
        ['node', 'shards'],
        [
          ['a@h:1', '3'],
          ['app@host:7701', '10'],
        ],
      ).split('\n'),
    ).toEqual(['node           shards', '-------------  ------', 'a@h:1          3', 'app@host:7701  10']);
  });
});
