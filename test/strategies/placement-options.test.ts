// A pin's options: the validators the controller, the HTTP layer and the CLI share, and the rule's round
// trip through the slot meta the store replicates.
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PLACEMENT_RULE,
  MAX_REASON_LENGTH,
  isExpired,
  ruleOf,
  ruleToMeta,
  validatePlacementOptions,
} from '../../src/sharding/placements/placement-options.js';
import { PlacementRuleError } from '../../src/sharding/placements/placement-rule-error.js';

const NOW = Date.parse('2030-01-01T00:00:00Z');

function rejected(options: unknown): string {
  try {
    validatePlacementOptions(options, NOW);
  } catch (error) {
    expect(error).toBeInstanceOf(PlacementRuleError);
    expect((error as PlacementRuleError).code).toBe('invalid_placement');
    return (error as Error).message;
  }
  throw new Error(`${JSON.stringify(options)} was accepted`);
}

describe('validatePlacementOptions', () => {
  it('defaults to prefer, no expiry, no provenance', () => {
    expect(validatePlacementOptions(undefined, NOW)).toEqual(DEFAULT_PLACEMENT_RULE);
    expect(validatePlacementOptions({}, NOW)).toEqual({ mode: 'prefer', expiresAt: null, reason: null, by: null });
  });

  it('turns ttlMs and expiresAt into an absolute expiry on the given clock', () => {
    expect(validatePlacementOptions({ ttlMs: 60_000 }, NOW).expiresAt).toBe(NOW + 60_000);
    expect(validatePlacementOptions({ expiresAt: '2030-01-01T01:00:00Z' }, NOW).expiresAt).toBe(NOW + 3_600_000);
    expect(validatePlacementOptions({ expiresAt: '2030-01-01T02:00:00.250+01:00' }, NOW).expiresAt).toBe(
      NOW + 3_600_250,
    );
    expect(validatePlacementOptions({ expiresAt: new Date(NOW + 5) }, NOW).expiresAt).toBe(NOW + 5);
    expect(
      validatePlacementOptions({ mode: 'require', reason: 'r'.repeat(MAX_REASON_LENGTH), by: 'ops' }, NOW),
    ).toMatchObject({
      mode: 'require',
      by: 'ops',
    });
  });

  it.each<[string, unknown, RegExp]>([
    ['a mode other than prefer or require', { mode: 'force' }, /mode must be "prefer" or "require"/],
    ['a negative ttlMs', { ttlMs: -1 }, /ttlMs must be a positive integer/],
    ['a zero ttlMs', { ttlMs: 0 }, /ttlMs must be a positive integer/],
    ['a non-integer ttlMs', { ttlMs: 1.5 }, /ttlMs must be a positive integer/],
    ['a ttlMs string', { ttlMs: '60000' }, /ttlMs must be a positive integer/],
    ['both ttlMs and expiresAt', { ttlMs: 1_000, expiresAt: '2031-01-01T00:00:00Z' }, /not both/],
    ['an expiresAt in the past', { expiresAt: '2029-12-31T23:59:59Z' }, /not in the future/],
    ['an expiresAt of now', { expiresAt: new Date(NOW) }, /not in the future/],
    ['an unparsable expiresAt', { expiresAt: 'tomorrow' }, /ISO-8601/],
    ['an expiresAt without a zone', { expiresAt: '2031-01-01T00:00:00' }, /ISO-8601/],
    ['an impossible date', { expiresAt: '2031-02-30T25:00:00Z' }, /not a valid date-time/],
    ['an expiresAt beyond the store range', { expiresAt: '2300-01-01T00:00:00Z' }, /must be before/],
    ['a reason over the limit', { reason: 'r'.repeat(MAX_REASON_LENGTH + 1) }, /at most 500/],
    ['a reason with a newline', { reason: 'a\nb' }, /control characters/],
    ['an empty by', { by: '' }, /by must not be empty/],
    ['a by that is not a string', { by: 7 }, /by must be a string/],
    ['an unknown option', { mdoe: 'require' }, /unknown placement option "mdoe"/],
    ['options that are not an object', 'require', /must be an object/],
  ])('rejects %s', (_, options, message) => {
    expect(rejected(options)).toMatch(message);
  });
});

describe('the rule as slot meta', () => {
  it('stores nothing for the default rule, so a plain pin is a version-2 value', () => {
    expect(ruleToMeta(DEFAULT_PLACEMENT_RULE)).toBeUndefined();
    expect(ruleOf({})).toEqual(DEFAULT_PLACEMENT_RULE);
  });

  it('round-trips every field', () => {
    const rule = validatePlacementOptions({ mode: 'require', ttlMs: 10, reason: 'drain', by: 'alice' }, NOW);
    expect(ruleOf({ meta: ruleToMeta(rule) as Record<string, string | number> })).toEqual(rule);
  });

  it('reads what a newer or foreign writer stored without failing: unknown mode is prefer, bad fields absent', () => {
    expect(
      ruleOf({
        meta: { mode: 'pin-hard', expiresAt: 'soon', reason: 7, by: 'x' } as unknown as Record<string, string>,
      }),
    ).toEqual({
      mode: 'prefer',
      expiresAt: null,
      reason: null,
      by: 'x',
    });
  });

  it('is expired from its expiry on, never without one', () => {
    expect(isExpired({ expiresAt: NOW }, NOW - 1)).toBe(false);
    expect(isExpired({ expiresAt: NOW }, NOW)).toBe(true);
    expect(isExpired({ expiresAt: null }, Number.MAX_SAFE_INTEGER)).toBe(false);
  });
});
