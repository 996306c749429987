// The coordinator's part of a failover's timeline: a removed region is reported `removed`, and the first of
// its shards started on another region `re-homed`, once per removal.
import { describe, expect, it } from 'vitest';
import { FailoverReport } from '../../src/sharding/coordinator/membership.js';

describe('FailoverReport', () => {
  it('reports removed, then re-homed once when the first orphaned shard starts elsewhere', () => {
    const steps: string[] = [];
    const report = new FailoverReport({ onFailoverStep: (member, phase) => void steps.push(`${member} ${phase}`) });
    report.shardStarted('b', 1);
    report.regionRemoved('c', [1, 2]);
    report.shardStarted('c', 1);
    report.shardStarted('b', 7);
    expect(steps).toEqual(['c removed']);
    report.shardStarted('b', 2);
    report.shardStarted('a', 1);
    expect(steps).toEqual(['c removed', 'c re-homed']);
  });
});
