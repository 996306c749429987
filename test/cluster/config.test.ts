// The split-brain and heartbeat-ring settings of the cluster config: their defaults and their validation.
import { describe, expect, it } from 'vitest';
import { resolveClusterConfig } from '../../src/cluster/membership/config.js';

describe('cluster config: stable-after and the heartbeat ring', () => {
  it('defaults stableAfterMs to downAfterMs, the minority delay to 75% of it, and the ring to 9 monitors', () => {
    const d = resolveClusterConfig();
    expect([d.downAfterMs, d.stableAfterMs, d.minorityDownAfterMs, d.monitoredByNrOfMembers]).toEqual([
      10_000, 10_000, 7_500, 9,
    ]);
    const short = resolveClusterConfig({ downAfterMs: 3_000 });
    expect([short.stableAfterMs, short.minorityDownAfterMs]).toEqual([3_000, 2_250]);
    const explicit = resolveClusterConfig({ stableAfterMs: 20_000, monitoredByNrOfMembers: 5 });
    expect([explicit.stableAfterMs, explicit.minorityDownAfterMs, explicit.monitoredByNrOfMembers]).toEqual([
      20_000, 15_000, 5,
    ]);
  });

  it.each([
    [{ stableAfterMs: 0 }, /stableAfterMs must be a finite number > 0/],
    [{ stableAfterMs: Number.NaN }, /stableAfterMs must be a finite number > 0/],
    [{ stableAfterMs: 5_000, minorityDownAfterMs: 6_000 }, /minorityDownAfterMs must not exceed stableAfterMs/],
    [{ monitoredByNrOfMembers: 0 }, /monitoredByNrOfMembers must be an integer >= 1/],
    [{ monitoredByNrOfMembers: 2.5 }, /monitoredByNrOfMembers must be an integer >= 1/],
  ])('rejects %j', (input, message) => {
    expect(() => resolveClusterConfig(input)).toThrow(message);
  });
});
