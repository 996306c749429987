// Test helper for external allocation: in-process nodes (MemoryNetwork + ClusterSharding + a membership) each
// running the Counter type under externalAllocationStrategy(least-shard fallback), with its controller and
// the warnings its strategy emitted. Reuses the sharding harness's fake-time helpers and counter entity.
import { afterEach, beforeEach, vi } from 'vitest';
import { NodeAddress } from '../../src/cluster/address.js';
import type { Membership } from '../../src/cluster/member.js';
import { MemoryNetwork } from '../../src/cluster/memory-transport.js';
import type { Transport } from '../../src/cluster/transport.js';
import { PlacementStore } from '../../crdt/index.js';
import { PlacementReplication } from '../../src/placement-replication/placement-replication.js';
import { ClusterSharding } from '../../src/sharding/cluster-sharding.js';
import type { ShardingConfig } from '../../src/sharding/config.js';
import {
  ExternalAllocationController,
  placementRecords,
  type PlacementRecord,
} from '../../src/sharding/external-allocation-controller.js';
import { LeastShardAllocationStrategy, externalAllocationStrategy } from '../../src/sharding/strategies/index.js';
import { TEST_CONFIG, counter, entityInShard, eventually, hostedShards, type EntityEvent } from '../sharding/harness.js';
import { FakeCluster, type MemberSpec } from '../sharding/fake-membership.js';

export const TYPE = 'Counter';

export interface Warning {
  readonly message: string;
  readonly details: { readonly shardId?: number; readonly target?: string; readonly reason?: string; readonly [key: string]: unknown };
}

export interface ExtNode {
  readonly address: NodeAddress;
  readonly key: string;
  readonly transport: Transport;
  readonly membership: Membership;
  readonly sharding: ClusterSharding;
  readonly placements: PlacementReplication;
  readonly controller: ExternalAllocationController;
  /** What this node's strategy reported (only the coordinator's strategy runs). */
  readonly warnings: Warning[];
}

export interface NodeOptions {
  /** Wall clock of the node's placement store (to skew it). */
  readonly now?: () => number;
  readonly antiEntropyIntervalMs?: number;
  /** Fallback options beyond `cluster`. */
  readonly relativeLimit?: number;
}

/** Anti-entropy far beyond any test's fake time (and below setTimeout's 2^31 - 1 ms limit). */
export const NO_ANTI_ENTROPY = 1_000_000_000;

export function addressOf(port: number): NodeAddress {
  return NodeAddress.parse(`test@127.0.0.1:${port}`);
}

/** Builds one node's sharding runtime on a given membership and starts the external-allocation type. */
export function startExternalNode(
  net: MemoryNetwork,
  membership: Membership,
  options: NodeOptions & {
    config?: Partial<ShardingConfig>;
    numberOfShards: number;
    events?: EntityEvent[];
    /** The node's transport when something else (a real Cluster) already attached it. */
    transport?: Transport;
  },
): ExtNode {
  const address = membership.self;
  const key = address.toString();
  const transport = options.transport ?? net.transport(address);
  const store = new PlacementStore({ node: key, ...(options.now === undefined ? {} : { now: options.now }) });
  const placements = new PlacementReplication(store, transport, membership, {
    ...(options.antiEntropyIntervalMs === undefined ? {} : { antiEntropyIntervalMs: options.antiEntropyIntervalMs }),
  });
  const sharding = new ClusterSharding({ transport, membership, placements, config: { ...TEST_CONFIG, ...options.config } });
  const controller = new ExternalAllocationController(sharding, TYPE);
  const warnings: Warning[] = [];
  sharding.init({
    typeName: TYPE,
    behavior: counter(options.events),
    numberOfShards: options.numberOfShards,
    allocationStrategy: externalAllocationStrategy(
      new LeastShardAllocationStrategy({
        cluster: membership,
        ...(options.relativeLimit === undefined ? {} : { relativeLimit: options.relativeLimit }),
      }),
      controller.getState,
      { cluster: membership, onWarning: (message, details) => void warnings.push({ message, details: details as Warning['details'] }) },
    ),
  });
  return { address, key, transport, membership, sharding, placements, controller, warnings };
}

/** Several external-allocation nodes over one MemoryNetwork and one FakeCluster. */
/** Fake timers for each test, and every ExternalCluster the test created shut down after it. */
export function useExternalClusters(): void {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(async () => {
    for (const cluster of ExternalCluster.created.splice(0)) await cluster.shutdown();
    vi.useRealTimers();
  });
}

/**
 * The membership with node attributes added to each member, as the cluster will gossip them: a stand-in
 * until MemberInfo carries `attributes` itself.
 */
export function withAttributes(membership: Membership, attributesOf: (key: string) => Readonly<Record<string, string>> | undefined): Membership {
  return {
    self: membership.self,
    members: () =>
      membership.members().map((member) => {
        const attributes = attributesOf(member.address.toString());
        return attributes === undefined ? member : { ...member, attributes };
      }),
    onChange: (listener) => membership.onChange(listener),
    onLeaving: (task) => membership.onLeaving(task),
  };
}

export class ExternalCluster {
  /** Clusters not yet shut down by useExternalClusters. */
  static readonly created: ExternalCluster[] = [];
  readonly net: MemoryNetwork;
  readonly members = new FakeCluster();
  /** Node attributes by address key, shown in every node's membership view. */
  readonly attributes = new Map<string, Readonly<Record<string, string>>>();
  readonly nodes: ExtNode[] = [];
  readonly events: EntityEvent[] = [];
  private readonly stopped = new Set<ExtNode>();

  constructor(
    readonly options: {
      seed?: number;
      delayMs?: number;
      numberOfShards?: number;
      antiEntropyIntervalMs?: number;
      config?: Partial<ShardingConfig>;
    } = {},
  ) {
    this.net = new MemoryNetwork({ seed: options.seed ?? 7, delayMs: options.delayMs ?? 0 });
    ExternalCluster.created.push(this);
  }

  get numberOfShards(): number {
    return this.options.numberOfShards ?? 100;
  }

  /** Adds an Up member (unless `spec.status` says otherwise) with the given attributes, and starts its node. */
  addNode(port: number, spec: MemberSpec & { readonly attributes?: Readonly<Record<string, string>> } = {}, options: NodeOptions = {}): ExtNode {
    const address = addressOf(port);
    if (spec.attributes !== undefined) this.attributes.set(address.toString(), spec.attributes);
    this.members.add(address, spec);
    return this.startNode(address, options);
  }

  /** Starts a node whose membership record is managed separately (e.g. added later). */
  startNode(address: NodeAddress, options: NodeOptions = {}): ExtNode {
    const antiEntropyIntervalMs = options.antiEntropyIntervalMs ?? this.options.antiEntropyIntervalMs;
    const membership = withAttributes(this.members.membership(address), (key) => this.attributes.get(key));
    const node = startExternalNode(this.net, membership, {
      ...options,
      ...(antiEntropyIntervalMs === undefined ? {} : { antiEntropyIntervalMs }),
      ...(this.options.config === undefined ? {} : { config: this.options.config }),
      numberOfShards: this.numberOfShards,
      events: this.events,
    });
    this.nodes.push(node);
    return node;
  }

  /** Nodes still running. */
  live(): ExtNode[] {
    return this.nodes.filter((node) => !this.stopped.has(node));
  }

  /** Where each shard actually runs (regions' own view) across the live nodes. */
  hosted(): Map<number, string[]> {
    return hostedShards(
      this.live().map((n) => ({ address: n.address, key: n.key, sharding: n.sharding, transport: n.transport })),
      TYPE,
    );
  }

  hostOf(shardId: number): string | undefined {
    const hosts = this.hosted().get(shardId);
    return hosts?.length === 1 ? hosts[0] : undefined;
  }

  /** Sends one message into `shardId` from `from` (allocating the shard if it has no home). */
  touch(from: ExtNode, shardId: number): void {
    from.sharding.entityRefFor(TYPE, entityInShard(shardId, this.numberOfShards)).tell({ op: 'inc' });
  }

  /** Touches each shard from `from` and waits (fake time) until it has a home. */
  async allocated(shardIds: ReadonlyArray<number>, from: ExtNode): Promise<void> {
    for (const shardId of shardIds) {
      this.touch(from, shardId);
      await eventually(() => this.hostOf(shardId) !== undefined, `shard ${shardId} allocated`);
    }
  }

  /** The coordinator's view of where the type's coordinator runs, from any node. */
  coordinatorKey(): string | undefined {
    return this.live()[0]?.sharding.coordinatorFor(TYPE)?.toString();
  }

  coordinatorNode(): ExtNode | undefined {
    const key = this.coordinatorKey();
    return this.live().find((n) => n.key === key);
  }

  async stopNode(node: ExtNode): Promise<void> {
    if (this.stopped.has(node)) return;
    this.stopped.add(node);
    await node.sharding.shutdown();
    node.placements.close();
    await node.transport.close();
  }

  async shutdown(): Promise<void> {
    const at = ExternalCluster.created.indexOf(this);
    if (at >= 0) ExternalCluster.created.splice(at, 1);
    for (const node of this.nodes) await this.stopNode(node);
  }
}

/** Every placement of the node's replica with its HLC and writer, by ascending shard id. */
export function recordsOf(node: ExtNode): PlacementRecord[] {
  return placementRecords(node.sharding.placementStore, TYPE);
}

/** Pins as plain `shardId -> address string` entries, for equality across nodes. */
export function pinsOf(node: ExtNode): Array<[number, string]> {
  return [...node.controller.getState().explicitPlacements]
    .map(([shardId, target]): [number, string] => [shardId, target.toString()])
    .sort((a, b) => a[0] - b[0]);
}
