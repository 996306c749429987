// Test helper for external allocation: in-process nodes (the shared in-process cluster of test/support/) each
// running the Counter type under externalAllocationStrategy(least-shard fallback), with its controller and
// the warnings its strategy emitted. Reuses the sharding harness's counter entity.
import type { NodeAddress } from '../../src/cluster/address.js';
import type { Membership } from '../../src/cluster/member.js';
import type { MemoryNetwork } from '../../src/cluster/transport/memory-transport.js';
import type { Transport } from '../../src/cluster/transport/transport.js';
import type { ShardingConfig } from '../../src/sharding/core/config.js';
import {
  ExternalAllocationController,
  pinRecords,
  type PinRecord,
} from '../../src/sharding/api/external-allocation-controller.js';
import { LeastShardAllocationStrategy, externalAllocationStrategy } from '../../src/sharding/strategies/index.js';
import { advanceUntil } from '../support/fake-time.js';
import {
  InProcessCluster,
  startShardingNode,
  useInProcessClusters,
  type ShardingNode,
  type ShardingNodeOptions,
} from '../support/in-process-cluster.js';
import { testAddress } from '../support/members.js';
import type { MemberSpec } from '../support/fake-membership.js';
import { counter, entityInShard, hostedShards, run, type EntityEvent } from '../sharding/harness.js';

export const TYPE = 'Counter';

export interface Warning {
  readonly message: string;
  readonly details: {
    readonly shardId?: number;
    readonly target?: string;
    readonly reason?: string;
    readonly [key: string]: unknown;
  };
}

export interface ExtNode extends ShardingNode {
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

export const addressOf: (port: number) => NodeAddress = testAddress;

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
  const { relativeLimit, numberOfShards, events, ...nodeOptions } = options;
  const node = startShardingNode(net, membership, nodeOptions satisfies ShardingNodeOptions);
  const controller = new ExternalAllocationController(node.sharding, TYPE);
  const warnings: Warning[] = [];
  node.sharding.init({
    typeName: TYPE,
    behavior: counter(events),
    numberOfShards,
    allocationStrategy: externalAllocationStrategy(
      new LeastShardAllocationStrategy({
        cluster: membership,
        ...(relativeLimit === undefined ? {} : { relativeLimit }),
      }),
      controller.getState,
      {
        cluster: membership,
        onWarning: (message, details) => void warnings.push({ message, details: details as Warning['details'] }),
      },
    ),
  });
  return { ...node, controller, warnings };
}

/** Fake timers for each test, and every ExternalCluster the test created shut down after it. */
export function useExternalClusters(): void {
  useInProcessClusters();
}

/**
 * The membership with node attributes added to each member, as the cluster gossips them, so a test can change
 * a node's attributes without restarting it.
 */
export function withAttributes(
  membership: Membership,
  attributesOf: (key: string) => Readonly<Record<string, string>> | undefined,
): Membership {
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

/** Several external-allocation nodes over one MemoryNetwork and one FakeCluster. */
export class ExternalCluster extends InProcessCluster<ExtNode, NodeOptions> {
  readonly events: EntityEvent[] = [];
  /** Node attributes by address key, shown in every node's membership view. */
  readonly attributes = new Map<string, Readonly<Record<string, string>>>();

  constructor(
    readonly options: {
      seed?: number;
      delayMs?: number;
      numberOfShards?: number;
      antiEntropyIntervalMs?: number;
      config?: Partial<ShardingConfig>;
    } = {},
  ) {
    super(options);
  }

  get numberOfShards(): number {
    return this.options.numberOfShards ?? 100;
  }

  /** Adds an Up member (unless `spec.status` says otherwise) with the given attributes, and starts its node. */
  override addNode(
    port: number,
    spec: MemberSpec & { readonly attributes?: Readonly<Record<string, string>> } = {},
    options: Partial<NodeOptions> = {},
  ): ExtNode {
    const { attributes, ...member } = spec;
    if (attributes !== undefined) this.attributes.set(testAddress(port).toString(), attributes);
    return super.addNode(port, member, options);
  }

  protected startMember(address: NodeAddress, options: NodeOptions): ExtNode {
    const antiEntropyIntervalMs = options.antiEntropyIntervalMs ?? this.options.antiEntropyIntervalMs;
    const membership = withAttributes(this.members.membership(address), (key) => this.attributes.get(key));
    return startExternalNode(this.net, membership, {
      ...options,
      ...(antiEntropyIntervalMs === undefined ? {} : { antiEntropyIntervalMs }),
      ...(this.options.config === undefined ? {} : { config: this.options.config }),
      numberOfShards: this.numberOfShards,
      events: this.events,
    });
  }

  /** Up members on `ports` (the first the oldest, so the coordinator), warmed up: registered and synced. */
  async started<const Ports extends readonly number[]>(
    ...ports: Ports
  ): Promise<{ -readonly [K in keyof Ports]: ExtNode }> {
    const nodes = this.addNodes(...ports);
    await run(600);
    return nodes;
  }

  /** Where each shard actually runs (regions' own view) across the live nodes. */
  hosted(): Map<number, string[]> {
    return hostedShards(this.live(), TYPE);
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
      await advanceUntil(() => this.hostOf(shardId) !== undefined, `shard ${shardId} allocated`);
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
}

/** Every placement of the node's replica with its HLC and writer, by ascending shard id. */
export function recordsOf(node: ExtNode): PinRecord[] {
  return pinRecords(node.sharding.placementStore, TYPE);
}

/** Pins as plain `shardId -> address string` entries, for equality across nodes. */
export function pinsOf(node: ExtNode): Array<[number, string]> {
  return [...node.controller.getState().explicitPlacements]
    .map(([shardId, target]): [number, string] => [shardId, target.toString()])
    .sort((a, b) => a[0] - b[0]);
}

/**
 * Three nodes warmed up: a (zone=a, which runs the coordinator), b and c (zone=b). The cluster the
 * placement-rule, explain and dry-run tests start from.
 */
export async function zonedCluster(
  options: ExternalCluster['options'] = {},
): Promise<[ExternalCluster, [ExtNode, ExtNode, ExtNode]]> {
  const cluster = new ExternalCluster(options);
  const a = cluster.addNode(7001, { attributes: { zone: 'a' } });
  const b = cluster.addNode(7002, { attributes: { zone: 'b' } });
  const c = cluster.addNode(7003, { attributes: { zone: 'b' } });
  await run(600);
  if (cluster.coordinatorKey() !== a.key)
    throw new Error(`expected the coordinator on ${a.key}, found ${String(cluster.coordinatorKey())}`);
  return [cluster, [a, b, c]];
}
