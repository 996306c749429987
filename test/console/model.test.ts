// The console page's pure derivations: which types to show, where the coordinator is, shards per node, where a
// pinned shard stands, and the dry run shown before a pin.
import { describe, expect, it } from 'vitest';
import { coordinatorOf, dryRun, honoured, pinState, shardCounts, typesToShow, type MemberJson } from '../../src/management/console/page/model.js';

const members: MemberJson[] = [
  { address: 'app@127.0.0.1:2553', status: 'up', upNumber: 2 },
  { address: 'app@127.0.0.1:2552', status: 'up', upNumber: 1 },
  { address: 'app@127.0.0.1:2554', status: 'down', upNumber: 3 },
];

describe('console model', () => {
  it('shows the query string types, what health lists, else Counter', () => {
    expect(typesToShow('', undefined)).toEqual(['Counter']);
    expect(typesToShow('?type=A,B&type=C', undefined)).toEqual(['A', 'B', 'C']);
    expect(typesToShow('?type=A', { entityTypes: ['B', { typeName: 'C' }] })).toEqual(['A', 'B', 'C']);
    expect(typesToShow('', { entityTypes: { D: { numberOfShards: 10 } } })).toEqual(['D']);
  });

  it('marks the coordinator: the stated one, else the oldest Up member', () => {
    expect(coordinatorOf(members)).toBe('app@127.0.0.1:2552');
    expect(coordinatorOf(members, undefined, 'app@127.0.0.1:2553')).toBe('app@127.0.0.1:2553');
    // Without upNumbers the lowest address wins, port compared as a number.
    expect(coordinatorOf([{ address: 'a@h:10000', status: 'up' }, { address: 'a@h:9999', status: 'up' }])).toBe('a@h:9999');
    expect(coordinatorOf([{ address: 'a@h:1', status: 'joining' }])).toBeUndefined();
  });

  it('counts shards per node over every type, and places pins relative to hosts', () => {
    const views = [
      { typeName: 'A', locations: { regions: [{ address: 'x', shards: [0, 1] }], handingOff: [] } },
      { typeName: 'B', locations: { regions: [{ address: 'x', shards: [0] }, { address: 'y', shards: [1, 2] }], handingOff: [] } },
    ];
    expect(shardCounts(views)).toEqual(new Map([['x', 3], ['y', 2]]));
    const hostOf = new Map([[1, 'y']]);
    expect(pinState({ shardId: 1, target: 'y' }, hostOf)).toBe('on-target');
    expect(pinState({ shardId: 1, target: 'x' }, hostOf)).toBe('elsewhere');
    expect(pinState({ shardId: 9, target: 'x' }, hostOf)).toBe('not-allocated');
    expect(honoured({ shardId: 1, target: 'x', explain: { honoured: false } })).toBe(false);
    expect(honoured({ shardId: 1, target: 'x' })).toBeUndefined();
  });

  it('dry-runs a pin: where the shard is, the pin it replaces, and a warning for a target that is not a member', () => {
    const view = {
      typeName: 'Counter',
      locations: { regions: [{ address: 'app@127.0.0.1:2552', shards: [5] }], handingOff: [] },
      placements: [{ shardId: 5, target: 'app@127.0.0.1:2553' }],
    };
    const toDown = dryRun(view, members, 5, 'app@127.0.0.1:2554');
    expect(toDown.map((line) => line.text)).toEqual([
      'Shard 5 of Counter is on app@127.0.0.1:2552.',
      'It is pinned to app@127.0.0.1:2553: this pin replaces it.',
      'app@127.0.0.1:2554 is not a current member: the shard stays with the fallback strategy until that node joins.',
    ]);
    expect(toDown.filter((line) => line.warning)).toHaveLength(2);
    const inPlace = dryRun(view, members, 5, 'app@127.0.0.1:2552');
    expect(inPlace.at(-1)?.text).toBe('Nothing moves: app@127.0.0.1:2552 already hosts it.');
    expect(dryRun(undefined, members, 3, 'app@127.0.0.1:2553')[0]?.text).toBe('Shard 3 of ? is not allocated.');
  });
});
