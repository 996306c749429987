// Shared strategy helpers: numeric app-version order, the allocation ordering and the rebalance gate.
import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  compareAppVersions,
  describeRegions,
  isGoodTimeToRebalance,
  membersByAddress,
  mostSuitable,
} from '../../src/sharding/strategies/allocation-strategy.js';
import { node, shardMap, TestView } from './fixtures.js';

describe('compareAppVersions', () => {
  it.each([
    ['1.10.0', '1.9.0', 1],
    ['1.9.0', '1.10.0', -1],
    ['2.0.0', '10.0.0', -1],
    ['1.2', '1.2.0', 0],
    ['1.2.1', '1.2', 1],
    ['1.0.0-RC1', '1.0.0', -1],
    ['1.0.0-RC2', '1.0.0-RC1', 1],
    ['01.2', '1.2', 0],
    ['', '0', 0],
    ['123456789012345678901', '123456789012345678900', 1],
  ])('compare(%j, %j) = %i', (a, b, expected) => {
    expect(compareAppVersions(a, b)).toBe(expected);
  });

  it('is antisymmetric and matches numeric order on plain x.y.z versions', () => {
    const part = fc.nat({ max: 30 });
    const version = fc.tuple(part, part, part);
    fc.assert(
      fc.property(version, version, (a, b) => {
        const text = (v: readonly number[]): string => v.join('.');
        const numeric = Math.sign(a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
        expect(compareAppVersions(text(a), text(b))).toBe(numeric);
        expect(compareAppVersions(text(b), text(a))).toBe(numeric === 0 ? 0 : -numeric);
      }),
      { numRuns: 300 },
    );
  });
});

describe('allocation ordering', () => {
  const [a, b, c] = [node(1), node(2), node(3)];

  it('without a view ranks by shard count, then address', () => {
    const regions = describeRegions(
      [c, b, a],
      shardMap([
        [a, [1, 2]],
        [b, [3]],
        [c, [4]],
      ]),
      undefined,
    );
    expect(mostSuitable(regions).address).toBe(b);
  });

  it('counts a candidate missing from the map as holding no shards', () => {
    const regions = describeRegions([a, b], shardMap([[a, [1]]]), undefined);
    expect(regions.map((r) => r.shards.size)).toEqual([1, 0]);
    expect(mostSuitable(regions).address).toBe(b);
  });

  it('drops duplicate candidates', () => {
    expect(describeRegions([a, node(1), b], new Map(), undefined).map((r) => r.key)).toEqual([
      a.toString(),
      b.toString(),
    ]);
  });

  it('ranks a candidate the view does not know below known reachable members', () => {
    const view = new TestView([{ address: b }]);
    const regions = describeRegions([a, b], shardMap([[b, [1, 2, 3]]]), membersByAddress(view));
    expect(regions[0]?.known).toBe(false);
    expect(mostSuitable(regions).address).toBe(b);
  });
});

describe('isGoodTimeToRebalance', () => {
  const [a, b] = [node(1), node(2)];
  const regionsFor = (view: TestView) => describeRegions([a, b], new Map(), membersByAddress(view));

  it('is false without regions', () => {
    expect(isGoodTimeToRebalance([], undefined)).toBe(false);
  });

  it('is true for healthy members on one version, and for equal versions written differently', () => {
    const view = new TestView([
      { address: a, appVersion: '1.2' },
      { address: b, appVersion: '1.2.0' },
    ]);
    expect(isGoodTimeToRebalance(regionsFor(view), view)).toBe(true);
  });

  it('ignores removed members but not down ones that are unreachable', () => {
    const c = node(3);
    const removed = new TestView([{ address: a }, { address: b }, { address: c, status: 'removed', reachable: false }]);
    expect(isGoodTimeToRebalance(regionsFor(removed), removed)).toBe(true);
    const down = new TestView([{ address: a }, { address: b }, { address: c, status: 'down', reachable: false }]);
    expect(isGoodTimeToRebalance(regionsFor(down), down)).toBe(false);
  });
});
