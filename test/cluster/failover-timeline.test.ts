// The failover timeline (issue 26): each phase of an incident once, as seconds since the failed member's last
// sign of life on the monotonic clock; phases of members without an incident ignored; incidents bounded. And
// end to end in memory: a crashed member's incident on a survivor records detected, suspected-confirmed and
// decided in that order; the metric actor_ts_failover_phase_seconds{phase} counts what the timeline reports.
import { describe, expect, it } from 'vitest';
import { FailoverTimeline, MAX_INCIDENTS, type FailoverPhase } from '../../src/cluster/membership/failover-timeline.js';
import { MemoryNetwork } from '../../src/cluster/transport/memory-transport.js';
import { MetricsEventHub, NodeMetrics, type MetricsSource } from '../../src/management/metrics.js';
import { startClusterMember } from '../support/in-process-cluster.js';
import { address, advanceUntil, allUp, statusOf, type TestNode } from './cluster-harness.js';
import { useFakeTime } from '../support/fake-time.js';

let nodes: TestNode[] = [];
useFakeTime(() => {
  for (const n of nodes) n.cluster.shutdown();
  nodes = [];
});

function manualTimeline() {
  let now = 10_000;
  const timeline = new FailoverTimeline({ now: () => now });
  const seen: Array<[FailoverPhase, number, string]> = [];
  timeline.onPhase((phase, seconds, member) => seen.push([phase, seconds, member]));
  return { timeline, seen, advance: (ms: number) => void (now += ms) };
}

describe('FailoverTimeline', () => {
  it('records each phase once, in seconds since the last sign of life', () => {
    const { timeline, seen, advance } = manualTimeline();
    timeline.open('a', 4_000);
    timeline.reached('a', 'detected');
    advance(1_500);
    timeline.reached('a', 'decided');
    timeline.reached('a', 'decided');
    timeline.reached('b', 'decided');
    expect(seen).toEqual([
      ['detected', 4, 'a'],
      ['decided', 5.5, 'a'],
    ]);
  });

  it('keeps an open incident anchored where it opened, and keeps at most MAX_INCIDENTS', () => {
    const { timeline, seen, advance } = manualTimeline();
    timeline.open('a', 1_000);
    advance(500);
    timeline.open('a', 0);
    timeline.reached('a', 'removed');
    expect(seen).toEqual([['removed', 1.5, 'a']]);
    // Back (or a new process at its address): the next failure is a new incident.
    timeline.close('a');
    timeline.open('a');
    timeline.reached('a', 'removed');
    expect(seen).toEqual([
      ['removed', 1.5, 'a'],
      ['removed', 0, 'a'],
    ]);
    for (let i = 0; i < MAX_INCIDENTS + 10; i++) timeline.open(`m${i}`);
    expect(timeline.isOpen('a')).toBe(false);
    expect(timeline.isOpen(`m${MAX_INCIDENTS + 9}`)).toBe(true);
  });

  it('on a survivor of a crash, records detected, suspected-confirmed and decided in order', async () => {
    const network = new MemoryNetwork();
    const timeline = new FailoverTimeline();
    const phases: FailoverPhase[] = [];
    timeline.onPhase((phase, _seconds, member) => {
      if (member === address(3).toString()) phases.push(phase);
    });
    nodes = [1, 2, 3].map((i) =>
      startClusterMember(network, address(i), {
        config: { seedNodes: [address(1)] },
        incarnation: `inc-${i}`,
        seed: i,
        ...(i === 1 ? { failoverTimeline: timeline } : {}),
      }),
    );
    for (const node of nodes) node.cluster.start();
    await advanceUntil(() => allUp(nodes), 'all up');
    const [n1, , n3] = nodes as [TestNode, TestNode, TestNode];
    n3.cluster.shutdown();
    await n3.transport.close();
    await advanceUntil(() => statusOf(n1.cluster, address(3)) !== 'up', 'downed');
    expect(phases).toEqual(['detected', 'suspected-confirmed', 'decided']);
  });

  it('exports actor_ts_failover_phase_seconds per phase', async () => {
    const hub = new MetricsEventHub();
    const source: MetricsSource = {
      shardsHosted: () => [],
      placements: () => [],
      members: () => [],
      placementStore: () => ({ generation: 0, items: 0 }),
      durable: false,
      subscribe: hub.subscribe,
    };
    const metrics = new NodeMetrics(source, { processMetrics: false });
    hub.subscribe(metrics.events);
    hub.onFailoverPhase('detected', 2.2);
    hub.onFailoverPhase('re-homed', 4.1);
    const text = await metrics.registry.metrics();
    expect(text).toContain('actor_ts_failover_phase_seconds_count{phase="detected"} 1');
    expect(text).toContain('actor_ts_failover_phase_seconds_bucket{le="3",phase="detected"} 1');
    expect(text).toContain('actor_ts_failover_phase_seconds_sum{phase="re-homed"} 4.1');
  });
});
