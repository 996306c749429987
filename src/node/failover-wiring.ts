// A node's failover timeline wired up (issue 26): the cluster records detection, confirmation and its own
// downing decisions in it; this adds what the member list shows (a member seen unreachable opens its incident
// on nodes that do not monitor it, one seen down marks `decided`, one Up and reachable again closes it) and
// what the coordinators report (removed, re-homed), and hands every phase to the metrics
// (actor_ts_failover_phase_seconds{phase}).
import type { Cluster } from '../cluster/membership/cluster.js';
import { FailoverTimeline } from '../cluster/membership/failover-timeline.js';
import type { Logger } from '../logging.js';
import type { MetricsEventHub } from '../management/metrics.js';
import type { CoordinatorEvents } from '../sharding/coordinator/shard-coordinator.js';

export function failoverTimeline(logger: Logger): FailoverTimeline {
  return new FailoverTimeline({ logger: logger.child({ component: 'failover' }) });
}

/** Follows `cluster` into `timeline` and `timeline` into `hub`; returns the coordinators' events and a stop function. */
export function followFailovers(
  cluster: Cluster,
  timeline: FailoverTimeline,
  hub: MetricsEventHub,
): { events: CoordinatorEvents; stop: () => void } {
  const stopPhases = timeline.onPhase((phase, seconds) => hub.onFailoverPhase(phase, seconds));
  const stopMembers = cluster.onChange(() => {
    for (const member of cluster.members()) {
      const address = member.address.toString();
      if (member.reachable && member.status === 'up') timeline.close(address);
      else if (!member.reachable && member.status !== 'removed') timeline.open(address);
      if (member.status === 'down') timeline.reached(address, 'decided');
    }
  });
  const events: CoordinatorEvents = {
    onHandOffCompleted: (type, seconds) => hub.onHandOffCompleted(type, seconds),
    onRebalanceRound: (type) => hub.onRebalanceRound(type),
    onFailoverStep: (member, phase) => timeline.reached(member, phase),
  };
  return {
    events,
    stop: () => {
      stopPhases();
      stopMembers();
    },
  };
}
