// The coordinator's part of a failover's timeline: a removed region is reported `removed`, and the first of
// its shards started on another region `re-homed`, once per removal; each step is recorded in the dispatch's
// Effects, like every other report, and nothing is kept when no one listens.
import { describe, expect, it } from 'vitest';
import { Effects } from '../../src/sharding/coordinator/effects.js';
import { FailoverReport } from '../../src/sharding/coordinator/membership.js';
import { stateWith } from './coordinator-fakes.js';

function steps(fx: Effects): string[] {
  return fx.reports.flatMap((r) => (r.kind === 'failover-step' ? [`${r.member} ${r.phase}`] : []));
}

describe('FailoverReport', () => {
  it('reports removed, then re-homed once when the first orphaned shard starts elsewhere', () => {
    const fx = new Effects(stateWith([]));
    const report = new FailoverReport(true);
    report.shardStarted(fx, 'b', 1);
    report.regionRemoved(fx, 'c', [1, 2]);
    report.shardStarted(fx, 'c', 1);
    report.shardStarted(fx, 'b', 7);
    expect(steps(fx)).toEqual(['c removed']);
    report.shardStarted(fx, 'b', 2);
    report.shardStarted(fx, 'a', 1);
    expect(steps(fx)).toEqual(['c removed', 'c re-homed']);
  });

  it('records nothing when no one listens for failover steps', () => {
    const fx = new Effects(stateWith([]));
    const report = new FailoverReport(false);
    report.regionRemoved(fx, 'c', [1]);
    report.shardStarted(fx, 'b', 1);
    expect(fx.reports).toEqual([]);
  });
});
