// Membership test harness: nodes of the real Cluster protocol over one MemoryNetwork (built by the shared
// in-process cluster of test/support/), numbered from port 2550, driven by vitest's fake timers; a scheduler
// that can be paused stands in for a stopped process (SIGSTOP).
import { NodeAddress } from '../../src/cluster/address.js';
import type { Cluster } from '../../src/cluster/membership/cluster.js';
import type { ClusterConfigInput } from '../../src/cluster/membership/config.js';
import type { MemberStatus } from '../../src/cluster/member.js';
import type { MemoryNetwork } from '../../src/cluster/transport/memory-transport.js';
import type { Scheduler } from '../../src/cluster/scheduler.js';
import { advanceUntil as advanceInFakeTime } from '../support/fake-time.js';
import { startClusterMember, type ClusterMember } from '../support/in-process-cluster.js';
import { PausableScheduler } from '../support/schedulers.js';

export function address(i: number): NodeAddress {
  return new NodeAddress('sys', '127.0.0.1', 2550 + i);
}

export type TestNode = ClusterMember;

export function createNode(
  network: MemoryNetwork,
  i: number,
  config: ClusterConfigInput = {},
  incarnation = `inc-${i}`,
  scheduler?: Scheduler,
): TestNode {
  return startClusterMember(network, address(i), {
    config: { seedNodes: [address(1)], ...config },
    incarnation,
    seed: i,
    ...(scheduler ? { scheduler } : {}),
  });
}

/** Advances fake time in steps until `condition` holds; fails after `maxMs` of fake time. */
export async function advanceUntil(
  condition: () => boolean,
  what: string,
  maxMs = 60_000,
  stepMs = 100,
): Promise<number> {
  return advanceInFakeTime(condition, what, { maxMs, stepMs });
}

export function statusOf(observer: Cluster, subject: NodeAddress): MemberStatus | undefined {
  return observer.members().find((m) => m.address.equals(subject))?.status;
}

export function allUp(nodes: ReadonlyArray<TestNode>): boolean {
  return nodes.every(
    (n) =>
      n.cluster.members().length === nodes.length && n.cluster.members().every((m) => m.status === 'up' && m.reachable),
  );
}

export function upNumbers(observer: Cluster): Record<string, number> {
  return Object.fromEntries(observer.members().map((m) => [m.address.port - 2550, m.upNumber]));
}

export { PausableScheduler };

/**
 * Cluster settings for clusters over real TCP in tests: short intervals keep them quick; the pause tolerance stays
 * generous so a busy CI machine's event-loop stalls are not mistaken for a dead node.
 */
export const FAST_TCP_CLUSTER = {
  heartbeatIntervalMs: 100,
  gossipIntervalMs: 50,
  retryJoinIntervalMs: 50,
  downAfterMs: 2_000,
  failureDetector: { acceptableHeartbeatPauseMs: 1_500, firstHeartbeatEstimateMs: 100, minStdDeviationMs: 50 },
} as const;
