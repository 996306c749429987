// Test harness: clusters of nodes over one MemoryNetwork, driven by vitest's fake timers; a scheduler
// that can be paused stands in for a stopped process (SIGSTOP).
import { vi } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import { Cluster } from '../../src/cluster/cluster.js';
import type { ClusterConfigInput } from '../../src/cluster/config.js';
import type { MemberStatus } from '../../src/cluster/member.js';
import { MemoryNetwork } from '../../src/cluster/memory-transport.js';
import { seededRandom } from '../../src/cluster/random.js';
import { systemScheduler, type Cancellable, type Scheduler } from '../../src/cluster/scheduler.js';
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
  scheduler?: Scheduler,
): TestNode {
  const transport = network.transport(address(i));
  const cluster = new Cluster({
    transport,
    incarnation,
    ...(scheduler ? { scheduler } : {}),
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

/**
 * The process clock and timers, with a pause: while paused no timer runs, and on resume each timer that
 * came due runs once, late, as in a process continued after SIGSTOP (the clock kept going meanwhile).
 */
export class PausableScheduler implements Scheduler {
  private paused = false;
  private readonly due = new Map<object, () => void>();

  now(): number {
    return systemScheduler.now();
  }

  setTimeout(fn: () => void, delayMs: number): Cancellable {
    return this.wrap(fn, (run) => systemScheduler.setTimeout(run, delayMs));
  }

  setInterval(fn: () => void, intervalMs: number): Cancellable {
    return this.wrap(fn, (run) => systemScheduler.setInterval(run, intervalMs));
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    const due = [...this.due.values()];
    this.due.clear();
    for (const fn of due) fn();
  }

  private wrap(fn: () => void, start: (run: () => void) => Cancellable): Cancellable {
    const token = {};
    const timer = start(() => {
      if (this.paused) this.due.set(token, fn);
      else fn();
    });
    return {
      cancel: () => {
        timer.cancel();
        this.due.delete(token);
      },
    };
  }
}
