// The sharding configuration: every setting's default is the one its doc comment in config.ts states, a
// partial object overrides only what it names, and a bad or unknown setting is refused naming it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SHARDING_CONFIG, resolveShardingConfig } from '../../src/sharding/core/config.js';

const CONFIG_SOURCE = readFileSync(new URL('../../src/sharding/core/config.ts', import.meta.url), 'utf8');

/** The "Default ..." sentence of a setting's doc comment in config.ts, or undefined. */
function documentedDefault(setting: string): string | undefined {
  const before = CONFIG_SOURCE.slice(0, CONFIG_SOURCE.indexOf(`readonly ${setting}:`));
  const doc = before.slice(before.lastIndexOf('/**')).replace(/\s*\*\s*/g, ' ');
  return /Default (.+?)\.(\s|$)/.exec(doc)?.[1];
}

/** Each setting, the default it must have, and that default as the doc comment writes it. */
const DEFAULTS: ReadonlyArray<readonly [string, number, string]> = [
  ['rebalanceIntervalMs', 10_000, '10_000'],
  ['handOffTimeoutMs', 60_000, '60_000'],
  ['bufferSize', 100_000, '100_000'],
  ['retryIntervalMs', 2_000, '2_000'],
  ['coordinatorWarmupMs', 5_000, '5_000'],
  ['requestTimeoutMs', 10_000, '10_000'],
  ['askTimeoutMs', 5_000, '5_000'],
  ['maxForwardHops', 4, '4'],
  ['downRemovalMarginMs', 2_000, '2_000 (two gossip rounds)'],
  ['maxEntitySnapshotBytes', 1024 * 1024, '1 MiB'],
  ['stateChunkBytes', 256 * 1024, '256 KiB'],
  ['maxHandOffStateBytes', 64 * 1024 * 1024, '64 MiB'],
  ['sendTimeoutMs', 60_000, '60_000'],
  ['maxOutstandingSends', 100_000, '100_000'],
  ['maxOutstandingSendsPerShard', 10_000, '10_000'],
];

describe('sharding config', () => {
  it('fills in the documented defaults', () => {
    expect(resolveShardingConfig()).toEqual(Object.fromEntries(DEFAULTS.map(([setting, value]) => [setting, value])));
    expect(resolveShardingConfig({ bufferSize: 0, rebalanceIntervalMs: 500 })).toMatchObject({
      bufferSize: 0,
      rebalanceIntervalMs: 500,
    });
    expect(Object.isFrozen(DEFAULT_SHARDING_CONFIG)).toBe(true);
  });

  it.each(DEFAULTS)('documents the default of %s as it is (%d)', (setting, _value, documented) => {
    expect(documentedDefault(setting)).toBe(documented);
  });

  it.each([
    [{ rebalanceIntervalMs: 0 }],
    [{ handOffTimeoutMs: -1 }],
    [{ bufferSize: 1.5 }],
    [{ retryIntervalMs: 2 ** 31 }],
    [{ maxForwardHops: 256 }],
    [{ askTimeoutMs: Number.NaN }],
    [{ rebalanceInterval: 5 }],
  ])('rejects %j naming the setting', (partial) => {
    const key = Object.keys(partial)[0] ?? '';
    expect(() => resolveShardingConfig(partial as never)).toThrow(
      expect.objectContaining({ code: 'invalid_argument', message: expect.stringContaining(key) }),
    );
  });
});
