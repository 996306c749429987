// The console page's pure derivations: which types to show, where the coordinator is, shards per node, where a
// pinned shard stands, and the dry run shown before a pin.
import { describe, expect, it } from 'vitest';
import {
  coordinatorOf,
  pinState,
  shardCounts,
  typesToShow,
  type MemberJson,
} from '../../src/management/console/page/model.js';
import { dryRunLines, isWaiting, movesBetween } from '../../src/management/console/page/insight.js';
import { healthAnswer, memberJson, pinRecord } from './answers.js';

const members: MemberJson[] = [
  memberJson({ address: 'app@127.0.0.1:2553', upNumber: 2 }),
  memberJson({ address: 'app@127.0.0.1:2552', upNumber: 1 }),
  memberJson({ address: 'app@127.0.0.1:2554', status: 'down', upNumber: 3 }),
];

describe('console model', () => {
  it('shows the query string types, what health lists, else Counter', () => {
    expect(typesToShow('', undefined)).toEqual(['Counter']);
    expect(typesToShow('?type=A,B&type=C', undefined)).toEqual(['A', 'B', 'C']);
    const listing = (...names: string[]) =>
      healthAnswer({ entityTypes: names.map((typeName) => ({ typeName, numberOfShards: 10 })) });
    expect(typesToShow('?type=A', listing('B', 'C'))).toEqual(['A', 'B', 'C']);
    expect(typesToShow('', listing('D'))).toEqual(['D']);
    expect(typesToShow('', listing())).toEqual(['Counter']);
  });

  it('marks the coordinator: the oldest Up member', () => {
    expect(coordinatorOf(members)).toBe('app@127.0.0.1:2552');
    // Without upNumbers (0 before a member is Up) the lowest address wins, port compared as a number.
    expect(coordinatorOf([memberJson({ address: 'a@h:10000' }), memberJson({ address: 'a@h:9999' })])).toBe('a@h:9999');
    expect(coordinatorOf([memberJson({ address: 'a@h:1', status: 'joining' })])).toBeUndefined();
  });

  it('counts shards per node over every type, and places pins relative to hosts', () => {
    const views = [
      { typeName: 'A', locations: { regions: [{ address: 'x', shards: [0, 1] }], handingOff: [] } },
      {
        typeName: 'B',
        locations: {
          regions: [
            { address: 'x', shards: [0] },
            { address: 'y', shards: [1, 2] },
          ],
          handingOff: [],
        },
      },
    ];
    expect(shardCounts(views)).toEqual(
      new Map([
        ['x', 3],
        ['y', 2],
      ]),
    );
    const hostOf = new Map([[1, 'y']]);
    expect(pinState(pinRecord({ shardId: 1, target: 'y' }), hostOf)).toBe('on-target');
    expect(pinState(pinRecord({ shardId: 1, target: 'x' }), hostOf)).toBe('elsewhere');
    expect(pinState(pinRecord({ shardId: 9, target: 'x' }), hostOf)).toBe('not-allocated');
    // A selector pin is on target on any member whose attributes match it (the docs' console.png showed
    // zone=eu-west pins on the eu-west node as hosted elsewhere).
    const members = [memberJson({ address: 'x' }), memberJson({ address: 'y', attributes: { zone: 'eu-west' } })];
    expect(pinState(pinRecord({ shardId: 1, target: 'zone=eu-west' }), hostOf, members)).toBe('on-target');
    expect(pinState(pinRecord({ shardId: 1, target: 'zone=us-east' }), hostOf, members)).toBe('elsewhere');
  });

  it("dry-runs a pin from the server's answer: where the shard is, the pin it replaces, the moves it starts now", () => {
    const view = {
      typeName: 'Counter',
      locations: { regions: [{ address: 'app@127.0.0.1:2552', shards: [5] }], handingOff: [] },
      placements: [pinRecord({ shardId: 5, target: 'app@127.0.0.1:2553' })],
    };
    const moving = dryRunLines(view, 5, 'app@127.0.0.1:2553', {
      dryRun: true,
      moves: [{ shardId: 5, from: 'app@127.0.0.1:2552', to: 'app@127.0.0.1:2553' }],
      waiting: [],
      withoutHome: [],
      warnings: [],
    });
    expect(moving.map((line) => line.text)).toEqual([
      'Shard 5 of Counter is on app@127.0.0.1:2552.',
      'It is already pinned to app@127.0.0.1:2553: the pin is rewritten.',
      'Shard 5 moves now from app@127.0.0.1:2552 to app@127.0.0.1:2553.',
    ]);
    const waiting = dryRunLines(view, 5, 'zone=mars', {
      dryRun: true,
      moves: [{ shardId: 5, from: 'app@127.0.0.1:2552', to: null }],
      waiting: [5],
      withoutHome: [5],
      warnings: [{ shardId: null, message: 'w' }],
    });
    expect(waiting.filter((line) => line.warning).map((line) => line.text)).toEqual([
      'It is pinned to app@127.0.0.1:2553: this pin replaces it.',
      'Shard 5 would leave app@127.0.0.1:2552 now and have no home: asks to it fail until a matching node joins.',
      'w',
    ]);
    // No answer (the dry run itself failed): only what the page knows.
    expect(dryRunLines(undefined, 3, 'app@127.0.0.1:2553', undefined).map((line) => line.text)).toEqual([
      'Shard 3 of ? is not allocated.',
      'Nothing moves now: the shard is not allocated yet; its first message starts it where the pin says.',
    ]);
  });

  it('tells a require pin nobody satisfies (waiting) from an unallocated shard, and records moves between reads', () => {
    const pin = pinRecord({ shardId: 7, target: 'zone=mars', mode: 'require' });
    const up = [memberJson({ address: 'app@h:1', attributes: { zone: 'earth' } })];
    expect(isWaiting(pin, new Map(), up)).toBe(true);
    expect(isWaiting({ ...pin, mode: 'prefer' }, new Map(), up)).toBe(false);
    expect(isWaiting(pin, new Map(), [memberJson({ address: 'app@h:2', attributes: { zone: 'mars' } })])).toBe(false);
    expect(
      isWaiting(pin, new Map(), [memberJson({ address: 'app@h:2', attributes: { zone: 'mars' }, cordoned: true })]),
    ).toBe(true);
    expect(isWaiting(pin, new Map([[7, 'app@h:1']]), up)).toBe(false);
    const at = (host: string) => [
      { typeName: 'T', locations: { regions: [{ address: host, shards: [1] }], handingOff: [] } },
    ];
    expect(movesBetween(at('a@h:1'), at('a@h:2'), 5)).toEqual([
      { typeName: 'T', shardId: 1, from: 'a@h:1', to: 'a@h:2', at: 5 },
    ]);
    expect(movesBetween(at('a@h:1'), at('a@h:1'), 5)).toEqual([]);
  });
});
