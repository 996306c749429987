// The one way tests build in-process nodes: transports on one MemoryNetwork, a membership (the controllable
// FakeCluster, or the real Cluster protocol), and on top each node's placement replica, its replication and
// its sharding runtime, wired as src/node/node.ts wires them. Harnesses extend InProcessCluster with what
// their nodes run; every cluster made is stopped by useInProcessClusters after its test.
import type { EntityStoreContext } from '../../src/sharding/core/sharding-context.js';
import type { FailoverTimeline } from '../../src/cluster/membership/failover-timeline.js';
import type { NodeAddress } from '../../src/cluster/address.js';
import { Cluster } from '../../src/cluster/membership/cluster.js';
import type { ClusterConfigInput } from '../../src/cluster/membership/config.js';
import type { Membership } from '../../src/cluster/member.js';
import { MemoryNetwork } from '../../src/cluster/transport/memory-transport.js';
import { seededRandom } from '../../src/cluster/random.js';
import type { Scheduler } from '../../src/cluster/scheduler.js';
import type { Transport } from '../../src/cluster/transport/transport.js';
import type { Logger } from '../../src/logging.js';
import { PlacementStore } from '../../crdt/index.js';
import { PlacementReplication } from '../../src/placement-replication/placement-replication.js';
import { ClusterSharding } from '../../src/sharding/cluster-sharding.js';
import type { ShardingConfig } from '../../src/sharding/core/config.js';
import type { CoordinatorEvents } from '../../src/sharding/coordinator/shard-coordinator.js';
import { FakeCluster, type MemberSpec } from './fake-membership.js';
import { useFakeTime } from './fake-time.js';
import { testAddress } from './members.js';

/** Fast protocol timers; no periodic rebalance unless a test asks for it. */
export const FAST_SHARDING_CONFIG: Partial<ShardingConfig> = {
  retryIntervalMs: 100,
  coordinatorWarmupMs: 500,
  rebalanceIntervalMs: 1_000_000,
  handOffTimeoutMs: 5_000,
  requestTimeoutMs: 5_000,
  askTimeoutMs: 3_000,
  // Most tests check what happens once a member is down; the margin before that has tests of its own.
  downRemovalMarginMs: 0,
};

// ---------------------------------------------------------------------------------------------- membership layer

export interface ClusterMemberOptions {
  readonly config?: ClusterConfigInput;
  readonly incarnation?: string;
  readonly scheduler?: Scheduler;
  /** Seed of the member's gossip peer choice. */
  readonly seed: number;
  readonly failoverTimeline?: FailoverTimeline;
  /** The member's wall clock, to skew it against the others'. */
  readonly wallClock?: () => number;
}

export interface ClusterMember {
  readonly address: NodeAddress;
  readonly cluster: Cluster;
  readonly transport: Transport;
}

/** A node of the real membership protocol on the network (not started: call `cluster.start()`). */
export function startClusterMember(
  network: MemoryNetwork,
  address: NodeAddress,
  options: ClusterMemberOptions,
): ClusterMember {
  const transport = network.transport(address);
  const cluster = new Cluster({
    transport,
    ...(options.incarnation === undefined ? {} : { incarnation: options.incarnation }),
    ...(options.scheduler === undefined ? {} : { scheduler: options.scheduler }),
    random: seededRandom(options.seed),
    ...(options.config === undefined ? {} : { config: options.config }),
    ...(options.failoverTimeline === undefined ? {} : { failoverTimeline: options.failoverTimeline }),
    ...(options.wallClock === undefined ? {} : { wallClock: options.wallClock }),
  });
  return { address, cluster, transport };
}

// ---------------------------------------------------------------------------------------------- sharding layer

export interface ShardingNodeOptions {
  /** The node's transport when something else (a real Cluster) already attached it. */
  readonly transport?: Transport;
  /** Overrides of FAST_SHARDING_CONFIG. */
  readonly config?: Partial<ShardingConfig>;
  readonly logger?: Logger;
  /** Wall clock of the node's placement store (to skew it). */
  readonly now?: () => number;
  readonly antiEntropyIntervalMs?: number;
  /** What the node's sharding reports (coordinator and region events). */
  readonly events?: CoordinatorEvents;
  /** The node's entity store, for durable types (each node its own group commit over a shared store). */
  readonly entityStore?: EntityStoreContext;
}

export interface ShardingNode {
  readonly address: NodeAddress;
  readonly key: string;
  readonly transport: Transport;
  readonly membership: Membership;
  /** The node's placement replica with its replication (owned by the node, closed after sharding). */
  readonly placements: PlacementReplication;
  readonly sharding: ClusterSharding;
}

/** One node's placement store, replication and sharding runtime on `membership` (types are registered by the caller). */
export function startShardingNode(
  network: MemoryNetwork,
  membership: Membership,
  options: ShardingNodeOptions = {},
): ShardingNode {
  const address = membership.self;
  const key = address.toString();
  const transport = options.transport ?? network.transport(address);
  const store = new PlacementStore({ node: key, ...(options.now === undefined ? {} : { now: options.now }) });
  let sharding: ClusterSharding | undefined;
  const placements = new PlacementReplication(store, transport, membership, {
    ...(options.antiEntropyIntervalMs === undefined ? {} : { antiEntropyIntervalMs: options.antiEntropyIntervalMs }),
    entityTypes: () => sharding?.entityTypes() ?? new Map(),
  });
  sharding = new ClusterSharding({
    transport,
    membership,
    placements,
    config: { ...FAST_SHARDING_CONFIG, ...options.config },
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.events === undefined ? {} : { events: options.events }),
    ...(options.entityStore === undefined ? {} : { entityStore: options.entityStore }),
  });
  return { address, key, transport, membership, placements, sharding: sharding as ClusterSharding };
}

/** A crash: the process is gone (sharding stopped, replication and transport closed); the membership may still list it. */
export async function stopShardingNode(node: ShardingNode): Promise<void> {
  await node.sharding.shutdown();
  node.placements.close();
  await node.transport.close();
}

// ---------------------------------------------------------------------------------------------- clusters

export interface InProcessClusterOptions {
  /** Seed of the network's fault decisions; default 7. */
  readonly seed?: number;
  /** One-way network delay in ms; default 0. */
  readonly delayMs?: number;
}

/** Clusters not yet shut down; useInProcessClusters stops them after each test. */
const live: Array<InProcessCluster<ShardingNode, never>> = [];

/**
 * Sharding nodes over one MemoryNetwork and one FakeCluster. `startMember` says what a node runs on top of
 * `startShardingNode` (which types, which extras); `NodeOptions` is what a test may vary per node.
 */
export abstract class InProcessCluster<N extends ShardingNode, NodeOptions = Record<string, never>> {
  /** Every cluster made and not yet shut down (the same list for every subclass). */
  static readonly created: ReadonlyArray<InProcessCluster<ShardingNode, never>> = live;
  readonly net: MemoryNetwork;
  readonly members = new FakeCluster();
  readonly nodes: N[] = [];
  private readonly stopped = new Set<N>();

  constructor(options: InProcessClusterOptions = {}) {
    this.net = new MemoryNetwork({ seed: options.seed ?? 7, delayMs: options.delayMs ?? 0 });
    live.push(this as unknown as InProcessCluster<ShardingNode, never>);
  }

  protected abstract startMember(address: NodeAddress, options: Partial<NodeOptions>): N;

  /** Adds an Up member (unless `spec.status` says otherwise) at `test@127.0.0.1:<port>` and starts its node. */
  addNode(port: number, spec: MemberSpec = {}, options: Partial<NodeOptions> = {}): N {
    const address = testAddress(port);
    this.members.add(address, spec);
    return this.startNode(address, options);
  }

  /** `addNode` for each port in turn, in that order (so the first is the oldest member, the coordinator). */
  addNodes<const Ports extends readonly number[]>(...ports: Ports): { -readonly [K in keyof Ports]: N } {
    return ports.map((port) => this.addNode(port)) as { -readonly [K in keyof Ports]: N };
  }

  /** Starts a node whose membership record is managed separately (e.g. added later). */
  startNode(address: NodeAddress, options: Partial<NodeOptions> = {}): N {
    const node = this.startMember(address, options);
    this.nodes.push(node);
    return node;
  }

  node(key: string): N {
    const node = this.nodes.find((n) => n.key === key);
    if (node === undefined) throw new Error(`no node ${key}`);
    return node;
  }

  /** Nodes not stopped. */
  live(): N[] {
    return this.nodes.filter((node) => !this.stopped.has(node));
  }

  /** A crash: the process is gone but the membership still lists it. Stopping a stopped node does nothing. */
  async stopNode(node: N): Promise<void> {
    if (this.stopped.has(node)) return;
    this.stopped.add(node);
    await stopShardingNode(node);
  }

  async shutdown(): Promise<void> {
    const at = live.indexOf(this as unknown as InProcessCluster<ShardingNode, never>);
    if (at >= 0) live.splice(at, 1);
    for (const node of this.nodes) await this.stopNode(node);
  }
}

/**
 * The lifecycle of an in-process cluster test file: fake timers and `create()` before each test; after it,
 * every cluster the test made (it may replace the fresh one with its own) is shut down, even after a failure.
 */
export function useInProcessClusters(create: () => void = () => undefined): void {
  useFakeTime(async () => {
    for (const cluster of live.splice(0)) await cluster.shutdown();
  }, create);
}
