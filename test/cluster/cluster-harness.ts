// Test harness: clusters of nodes over one MemoryNetwork, driven by vitest's fake timers.
import { vi } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import { Cluster } from '../../src/cluster/cluster.js';
import type { ClusterConfigInput } from '../../src/cluster/config.js';
import type { MemberStatus } from '../../src/cluster/member.js';
import { MemoryNetwork } from '../../src/cluster/memory-transport.js';
import { seededRandom } from '../../src/cluster/random.js';
import type { Transport } from '../../src/cluster/transport.js';

export function address(i: number): NodeAddress {
  return new NodeAddress('sys', '127.0.0.1', 2550 + i);
}

export interface TestNode {
  readonly address: NodeAddress;
  readonly cluster: Cluster;
  readonly transport: Transport;
}

export function createNode(
  network: MemoryNetwork,
  i: number,
  config: ClusterConfigInput = {},
  incarnation = `inc-${i}`,
): TestNode {
  const transport = network.transport(address(i));
  const cluster = new Cluster({
    transport,
    incarnation,
    random: seededRandom(i),
    config: { seedNodes: [address(1)], ...config },
  });
  return { address: address(i), cluster, transport };
}

/** Advances fake time in steps until `condition` holds; fails after `maxMs` of fake time. */
export async function advanceUntil(condition: () => boolean, what: string, maxMs = 60_000, stepMs = 100): Promise<number> {
  let elapsed = 0;
  while (!condition()) {
    if (elapsed >= maxMs) throw new Error(`not reached within ${maxMs} ms of fake time: ${what}`);
    await vi.advanceTimersByTimeAsync(stepMs);
    elapsed += stepMs;
  }
  return elapsed;
}

export function statusOf(observer: Cluster, subject: NodeAddress): MemberStatus | undefined {
  return observer.members().find((m) => m.address.equals(subject))?.status;
}

export function allUp(nodes: ReadonlyArray<TestNode>): boolean {
  return nodes.every(
    (n) => n.cluster.members().length === nodes.length && n.cluster.members().every((m) => m.status === 'up' && m.reachable),
  );
}

export function upNumbers(observer: Cluster): Record<string, number> {
  return Object.fromEntries(observer.members().map((m) => [m.address.port - 2550, m.upNumber]));
}
