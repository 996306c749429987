// An in-process cluster of the real membership protocol (`Cluster`) on simulated time: N nodes on one
// MemoryNetwork whose deliveries and timers all run on one VirtualClock, every send counted by family and
// type at the transport (a wrapper, src/cluster is not touched), nodes started at seeded offsets within
// the first second so their ticks are spread as in a real rollout. Also what S8 observes: whether every
// node sees every other Up, and which member each node saw unreachable or down, when, and with which stamp.
import { NodeAddress } from '../../src/cluster/address.js';
import { Cluster } from '../../src/cluster/membership/cluster.js';
import {
  resolveClusterConfig,
  type ClusterConfig,
  type ClusterConfigInput,
} from '../../src/cluster/membership/config.js';
import { MemoryNetwork } from '../../src/cluster/transport/memory-transport.js';
import type { SelfDownCause } from '../../src/cluster/membership/self-lifecycle.js';
import { silentLogger } from '../../src/logging.js';
import { FamilyCountingTransport, FamilyTraffic } from './family-traffic.js';
import { seededRandom } from './seeded-random.js';
import { EPOCH_MS } from './sim-cluster.js';
import { virtualScheduler } from './virtual-scheduler.js';
import { VirtualClock } from './virtual-clock.js';

/** `bench@127.0.0.1:<30000 + i>`: five-digit ports, so address order is index order. */
export function memberAddress(i: number): NodeAddress {
  return new NodeAddress('bench', '127.0.0.1', 30_000 + i);
}

/**
 * The one place S8's cluster config is made (every node gets the same). Only the seeds are set: every
 * timing is the runtime's default, so the figures are those of a default deployment, and a setting a newer
 * runtime adds (the heartbeat ring's `monitoredByNrOfMembers`) applies with its default without a change here.
 */
export function scaleClusterConfig(seeds: ReadonlyArray<NodeAddress>): ClusterConfigInput {
  return { seedNodes: seeds };
}

/** The resolved config of an S8 cluster of `nodes` with `seeds` seeds: what every node runs with. */
export function resolvedScaleConfig(nodes: number, seeds: number): ClusterConfig {
  return resolveClusterConfig(scaleClusterConfig(seedAddresses(nodes, seeds)));
}

function seedAddresses(nodes: number, seeds: number): NodeAddress[] {
  return Array.from({ length: Math.min(seeds, nodes) }, (_, i) => memberAddress(i));
}

export interface SimMember {
  readonly index: number;
  readonly address: NodeAddress;
  readonly key: string;
  readonly cluster: Cluster;
  /** Set when this node downed itself or learnt it was downed. */
  selfDown: { readonly cause: SelfDownCause; readonly atMs: number } | undefined;
  killed: boolean;
}

export interface MembershipSim {
  readonly clock: VirtualClock;
  readonly network: MemoryNetwork;
  readonly traffic: FamilyTraffic;
  readonly members: readonly SimMember[];
  /** The resolved config every node runs with. */
  readonly config: ClusterConfig;
  /** SIGKILL stand-in: nothing reaches or leaves the node any more, and it stops (no leave, no goodbye). */
  kill(index: number): void;
  close(): void;
}

export interface MembershipSimOptions {
  readonly nodes: number;
  readonly seeds: number;
  readonly seed: number;
  readonly delayMs: number;
}

export function buildMembershipSim(options: MembershipSimOptions): MembershipSim {
  const clock = new VirtualClock();
  const network = new MemoryNetwork({
    seed: options.seed,
    delayMs: options.delayMs,
    schedule: (fn, ms) => clock.schedule(fn, ms, true),
  });
  const traffic = new FamilyTraffic();
  const scheduler = virtualScheduler(clock, EPOCH_MS);
  const configInput = scaleClusterConfig(seedAddresses(options.nodes, options.seeds));
  const logger = silentLogger();
  const startAt = seededRandom(options.seed * 7_919 + options.nodes);
  const members: SimMember[] = [];
  for (let i = 0; i < options.nodes; i++) {
    const address = memberAddress(i);
    const transport = new FamilyCountingTransport(network.transport(address), traffic);
    const incarnation = `i${i}`;
    const cluster = new Cluster({
      transport,
      config: configInput,
      scheduler,
      logger,
      random: seededRandom(options.seed * 1_000 + i + 1),
      incarnation,
    });
    const member: SimMember = {
      index: i,
      address,
      key: address.toString(),
      cluster,
      selfDown: undefined,
      killed: false,
    };
    cluster.onSelfDown((cause) => {
      member.selfDown ??= { cause, atMs: clock.now() };
    });
    members.push(member);
    clock.schedule(() => cluster.start(), Math.floor(startAt() * 1_000));
  }
  return {
    clock,
    network,
    traffic,
    members,
    config: resolveClusterConfig(configInput),
    kill(index) {
      const member = members[index];
      if (member === undefined || member.killed) return;
      member.killed = true;
      network.isolate(member.address);
      member.cluster.shutdown();
    },
    close() {
      for (const member of members) member.cluster.shutdown();
    },
  };
}

/** Whether `member` lists exactly `n` members, all Up and reachable (itself included). */
export function seesAllUp(member: SimMember, n: number): boolean {
  if (member.cluster.gossipSize().records !== n) return false;
  const view = member.cluster.members();
  return view.length === n && view.every((m) => m.status === 'up' && m.reachable);
}

/**
 * Steps the clock by `stepMs` until every node sees every other Up; a node that did stays counted (checking
 * it again costs O(N) per step). Returns the simulated ms it took from `startMs`, or undefined at `limitMs`.
 */
export function runUntilAllUp(
  sim: MembershipSim,
  stepMs: number,
  limitMs: number,
  progress?: (simMs: number, pending: number) => void,
): number | undefined {
  const n = sim.members.length;
  const pending = new Set(sim.members);
  const startMs = sim.clock.now();
  while (sim.clock.now() - startMs < limitMs) {
    sim.clock.advanceTo(sim.clock.now() + stepMs);
    if (progress !== undefined && (sim.clock.now() - startMs) % 5_000 < stepMs)
      progress(sim.clock.now() - startMs, pending.size);
    for (const member of pending) if (seesAllUp(member, n)) pending.delete(member);
    if (pending.size === 0) {
      // Stays true only if none regressed meanwhile.
      if (sim.members.every((m) => seesAllUp(m, n))) return sim.clock.now() - startMs;
      for (const member of sim.members) pending.add(member);
    }
  }
  return undefined;
}

/**
 * Steps the clock until every live node's state has been seen by every member (`isConverged`), checked every
 * `checkMs`; returns the simulated ms it took, or undefined at `limitMs`.
 */
export function runUntilConverged(sim: MembershipSim, checkMs: number, limitMs: number): number | undefined {
  const startMs = sim.clock.now();
  while (sim.clock.now() - startMs < limitMs) {
    if (sim.members.every((m) => m.killed || m.cluster.isConverged())) return sim.clock.now() - startMs;
    sim.clock.advanceTo(sim.clock.now() + checkMs);
  }
  return undefined;
}

export interface Observation {
  readonly observer: number;
  /** Simulated ms (the clock's, not EPOCH-based). */
  readonly atMs: number;
  /** The decision's stamp as this observer first saw it (EPOCH-based wall-clock ms of the decider). */
  readonly downedAtMs: number | undefined;
}

/**
 * Records, from the moment it is made, the first time each live node's view shows a member unreachable and
 * the first time it shows it down or removed (or no longer lists it). Observers are scanned on their own
 * change events only, so it is cheap once the cluster is stable; do not attach it during a join.
 */
export class ViewWatcher {
  readonly unreachable = new Map<string, Map<number, number>>();
  readonly down = new Map<string, Map<number, Observation>>();
  private readonly unsubscribes: Array<() => void> = [];

  constructor(private readonly sim: MembershipSim) {
    const known = sim.members.map((m) => m.key);
    for (const member of sim.members) {
      if (member.killed) continue;
      const scan = (): void => this.scan(member, known);
      this.unsubscribes.push(member.cluster.onChange(scan));
      scan();
    }
  }

  /** Live observers (not killed, not downed) that have not yet seen `subject` down. */
  notYetDown(subject: string): SimMember[] {
    const seen = this.down.get(subject);
    return this.sim.members.filter(
      (m) => !m.killed && m.selfDown === undefined && m.key !== subject && !seen?.has(m.index),
    );
  }

  stop(): void {
    for (const unsubscribe of this.unsubscribes) unsubscribe();
    this.unsubscribes.length = 0;
  }

  private scan(member: SimMember, known: readonly string[]): void {
    if (member.killed) return;
    const now = this.sim.clock.now();
    const listed = new Set<string>();
    for (const m of member.cluster.members()) {
      const key = m.address.toString();
      listed.add(key);
      if (!m.reachable)
        first(this.unreachable, key).has(member.index) || first(this.unreachable, key).set(member.index, now);
      if (m.status === 'down' || m.status === 'removed') {
        const seen = first(this.down, key);
        if (!seen.has(member.index))
          seen.set(member.index, { observer: member.index, atMs: now, downedAtMs: m.downedAtMs });
      }
    }
    for (const key of known) {
      if (listed.has(key) || key === member.key) continue;
      const seen = first(this.down, key);
      if (!seen.has(member.index)) seen.set(member.index, { observer: member.index, atMs: now, downedAtMs: undefined });
    }
  }
}

function first<V>(map: Map<string, Map<number, V>>, key: string): Map<number, V> {
  let inner = map.get(key);
  if (inner === undefined) map.set(key, (inner = new Map()));
  return inner;
}
