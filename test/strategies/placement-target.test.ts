// Placement targets: parsing (addresses and selectors), the canonical form, the typed errors, and matching
// a target against a member's address, roles and attributes.
import { describe, expect, it } from 'vitest';
import * as fc from 'fast-check';
import { NodeAddress } from '../../src/cluster/address.js';
import { ActorTsError } from '../../src/errors.js';
import {
  PlacementRuleError,
  canonicalPlacementTarget,
  parsePlacementTarget,
  printPlacementTarget,
  targetMatches,
  tryParsePlacementTarget,
  type PlacementNode,
} from '../../src/sharding/placements/placement-target.js';

const A = NodeAddress.parse('app@10.0.0.1:7700');

function nodeWith(
  attributes: Record<string, string> | undefined,
  roles: string[] | ReadonlySet<string> = [],
): PlacementNode {
  return attributes === undefined ? { address: A, roles } : { address: A, roles, attributes };
}

function rejection(input: unknown): PlacementRuleError {
  try {
    parsePlacementTarget(input);
  } catch (error) {
    if (error instanceof PlacementRuleError) return error;
    throw error;
  }
  throw new Error(`${String(input)} was accepted`);
}

describe('parsePlacementTarget', () => {
  it('reads a string with @ as an address, with or without the scheme, and a NodeAddress as itself', () => {
    for (const input of ['app@10.0.0.1:7700', 'actor-ts://app@10.0.0.1:7700', A]) {
      const target = parsePlacementTarget(input);
      expect(target.kind).toBe('address');
      expect(printPlacementTarget(target)).toBe('app@10.0.0.1:7700');
    }
    expect(() => parsePlacementTarget('app@')).toThrow(ActorTsError);
    expect(() => parsePlacementTarget('zone=a@b')).toThrow(expect.objectContaining({ code: 'invalid_address' }));
  });

  it('reads a string with = as a selector, canonical with keys sorted and duplicates dropped', () => {
    expect(canonicalPlacementTarget('zone=b')).toBe('zone=b');
    expect(canonicalPlacementTarget('zone=b,rack=r1')).toBe('rack=r1,zone=b');
    expect(canonicalPlacementTarget('rack=r1,zone=b,rack=r1')).toBe('rack=r1,zone=b');
    expect(canonicalPlacementTarget('role=web,role=api')).toBe('role=api,role=web');
    const target = parsePlacementTarget('zone=b,role=web');
    expect(target.kind === 'selector' && target.terms).toEqual([
      { key: 'role', value: 'web' },
      { key: 'zone', value: 'b' },
    ]);
  });

  it.each<[string, unknown, RegExp]>([
    ['an empty string', '', /target is empty/],
    ['neither an address nor a selector', 'node-1', /neither an address nor a selector/],
    ['an empty selector term', 'zone=a,', /empty term/],
    ['a lone comma with a term', ',zone=a', /empty term/],
    ['a term without =', 'zone=a,rack', /is not KEY=VALUE/],
    ['an empty value', 'zone=', /"zone=" has an empty value/],
    ['an empty key', '=b', /"=b" has an empty key/],
    ['a key outside the alphabet', 'zo ne=b', /key "zo ne" must match/],
    ['a value outside the alphabet', 'zone=b/c', /value "b\/c" of zone must match/],
    ['a second = in a term', 'zone=a=b', /value "a=b" of zone must match/],
    ['a key over 64 characters', `${'k'.repeat(65)}=v`, /must match \[A-Za-z0-9_.-\]\{1,64\}/],
    ['an unsatisfiable selector', 'zone=a,zone=b', /can never match: zone is given two different values/],
    [
      'a target over 256 characters',
      Array.from({ length: 5 }, (_, i) => `k${i}${'x'.repeat(55)}=v`).join(','),
      /longer than 256/,
    ],
    ['a number', 42, /must be a string/],
    ['null', null, /must be a string/],
  ])('rejects %s with invalid_target', (_, input, message) => {
    const error = rejection(input);
    expect(error.code).toBe('invalid_target');
    expect(error.message).toMatch(message);
    expect(tryParsePlacementTarget(input as string)).toBeUndefined();
  });

  it('gives every order and repetition of the same terms one canonical form, which parses to itself', () => {
    const token = fc.stringMatching(/^[A-Za-z0-9_.-]{1,8}$/);
    const terms = fc.uniqueArray(fc.tuple(token, token), { minLength: 1, maxLength: 5, selector: ([key]) => key });
    fc.assert(
      fc.property(terms, fc.nat(), (pairs, seed) => {
        const written = pairs.map(([key, value]) => `${key}=${value}`);
        const shuffled = [...written, ...written.slice(0, seed % (written.length + 1))].reverse();
        const canonical = canonicalPlacementTarget(written.join(','));
        expect(canonicalPlacementTarget(shuffled.join(','))).toBe(canonical);
        expect(canonicalPlacementTarget(canonical)).toBe(canonical);
        const keys = canonical.split(',').map((term) => term.split('=')[0] as string);
        expect(keys).toEqual([...keys].sort());
      }),
      { numRuns: 200 },
    );
  });
});

describe('targetMatches', () => {
  it('matches an address target on that node only', () => {
    const target = parsePlacementTarget('actor-ts://app@10.0.0.1:7700');
    expect(targetMatches(target, nodeWith(undefined))).toBe(true);
    expect(targetMatches(target, { address: NodeAddress.parse('app@10.0.0.2:7700') })).toBe(false);
  });

  it('requires every term: attributes by value, role=NAME by role (array or set)', () => {
    const selector = parsePlacementTarget('zone=b,role=web');
    expect(targetMatches(selector, nodeWith({ zone: 'b' }, ['web', 'api']))).toBe(true);
    expect(targetMatches(selector, nodeWith({ zone: 'b' }, new Set(['web'])))).toBe(true);
    expect(targetMatches(selector, nodeWith({ zone: 'b' }, ['api']))).toBe(false);
    expect(targetMatches(selector, nodeWith({ zone: 'a' }, ['web']))).toBe(false);
    expect(targetMatches(selector, nodeWith(undefined, ['web']))).toBe(false);
    // An attribute named role does not stand in for a role.
    expect(targetMatches(parsePlacementTarget('role=web'), nodeWith({ role: 'web' }))).toBe(false);
    expect(targetMatches(parsePlacementTarget('role=api,role=web'), nodeWith({}, ['web']))).toBe(false);
    // Inherited properties are not attributes.
    expect(targetMatches(parsePlacementTarget('constructor=x'), nodeWith({}))).toBe(false);
  });

  it('agrees with a direct reading of the terms for random nodes', () => {
    const key = fc.constantFrom('zone', 'rack', 'tier');
    const value = fc.constantFrom('a', 'b', 'c');
    fc.assert(
      fc.property(
        fc.dictionary(key, value),
        fc.uniqueArray(fc.tuple(key, value), { minLength: 1, selector: ([k]) => k }),
        (attributes, terms) => {
          const target = parsePlacementTarget(terms.map(([k, v]) => `${k}=${v}`).join(','));
          const expected = terms.every(([k, v]) => attributes[k] === v);
          expect(targetMatches(target, nodeWith(attributes))).toBe(expected);
        },
      ),
      { numRuns: 200 },
    );
  });
});
