// Test helper: several ClusterSharding nodes over one MemoryNetwork and a FakeCluster, driven by fake timers.
// `eventually` and `settle` poll in fake time with a deadline, so no test sleeps on the wall clock.
import { afterEach, beforeEach, vi } from 'vitest';
import { pino } from 'pino';
import { NodeAddress } from '../../src/cluster/address.js';
import { MemoryNetwork } from '../../src/cluster/memory-transport.js';
import type { Transport } from '../../src/cluster/transport.js';
import type { Logger } from '../../src/logging.js';
import { PlacementStore } from '../../crdt/index.js';
import { PlacementReplication } from '../../src/placement-replication/placement-replication.js';
import { ClusterSharding, type ShardedTypeOptions } from '../../src/sharding/cluster-sharding.js';
import type { ShardingConfig } from '../../src/sharding/config.js';
import type { EntityBehavior } from '../../src/sharding/entity.js';
import { shardIdFor } from '../../src/sharding/shard-id.js';
import { FakeCluster, type MemberSpec } from './fake-membership.js';

/** Fast protocol timers; no periodic rebalance unless a test asks for it. */
export const TEST_CONFIG: Partial<ShardingConfig> = {
  retryIntervalMs: 100,
  coordinatorWarmupMs: 500,
  rebalanceIntervalMs: 1_000_000,
  handOffTimeoutMs: 5_000,
  requestTimeoutMs: 5_000,
  askTimeoutMs: 3_000,
  // Most tests check what happens once a member is down; the margin before that has tests of its own.
  downRemovalMarginMs: 0,
};

export interface TestNode {
  readonly address: NodeAddress;
  readonly key: string;
  readonly sharding: ClusterSharding;
  readonly transport: Transport;
  /** The node's placement replica with its replication (owned by the node, closed after sharding). */
  readonly placements?: PlacementReplication;
}

export interface LogLine {
  readonly level: number;
  readonly msg?: string;
  readonly [key: string]: unknown;
}

/** A pino logger whose lines are collected for assertions. */
export function captureLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  return { logger, lines };
}

export class TestCluster {
  /** Every cluster made since the last `useTestClusters` clean-up, so none outlives its test. */
  static readonly created: TestCluster[] = [];
  readonly net: MemoryNetwork;
  readonly members = new FakeCluster();
  readonly nodes: TestNode[] = [];

  constructor(
    private readonly options: { config?: Partial<ShardingConfig>; seed?: number; logger?: Logger; delayMs?: number } = {},
  ) {
    this.net = new MemoryNetwork({ seed: options.seed ?? 7, delayMs: options.delayMs ?? 0 });
    TestCluster.created.push(this);
  }

  /** Adds an Up member (unless `spec.status` says otherwise) and starts its sharding runtime. */
  addNode(port: number, spec: MemberSpec = {}): TestNode {
    const address = NodeAddress.parse(`test@127.0.0.1:${port}`);
    this.members.add(address, spec);
    const transport = this.net.transport(address);
    const membership = this.members.membership(address);
    const placements = new PlacementReplication(new PlacementStore({ node: address.toString() }), transport, membership);
    const sharding = new ClusterSharding({
      transport,
      membership,
      placements,
      config: { ...TEST_CONFIG, ...this.options.config },
      ...(this.options.logger ? { logger: this.options.logger } : {}),
    });
    const node = { address, key: address.toString(), sharding, transport, placements };
    this.nodes.push(node);
    return node;
  }

  node(key: string): TestNode {
    const node = this.nodes.find((n) => n.key === key);
    if (node === undefined) throw new Error(`no node ${key}`);
    return node;
  }

  initAll(options: ShardedTypeOptions | ((node: TestNode) => ShardedTypeOptions)): void {
    for (const node of this.nodes) node.sharding.init(typeof options === 'function' ? options(node) : options);
  }

  /** A crash: the process is gone (sharding stopped, transport closed) but the membership still lists it. */
  async crash(node: TestNode): Promise<void> {
    await node.sharding.shutdown();
    node.placements?.close();
    await node.transport.close();
  }

  async shutdown(): Promise<void> {
    for (const node of this.nodes) await this.crash(node);
  }
}

/**
 * The lifecycle of a sharding test file: fake timers and a fresh cluster from `create` before each test;
 * after it, every cluster the test made (it may replace the fresh one with its own options) is shut down.
 */
export function useTestClusters(create: () => TestCluster): void {
  beforeEach(() => {
    vi.useFakeTimers();
    create();
  });
  afterEach(async () => {
    for (const cluster of TestCluster.created.splice(0)) await cluster.shutdown();
    vi.useRealTimers();
  });
}

/** Advances fake time in small steps until `condition` holds; fails after `maxMs` of fake time. */
export async function eventually(condition: () => boolean, what: string, maxMs = 30_000): Promise<void> {
  for (let elapsed = 0; !condition(); elapsed += 10) {
    if (elapsed > maxMs) throw new Error(`not true after ${maxMs} ms of fake time: ${what}`);
    await vi.advanceTimersByTimeAsync(10);
  }
}

/** Advances fake time until the promise settles, then returns its outcome. */
export async function settle<T>(promise: Promise<T>, maxMs = 30_000): Promise<T> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  await eventually(() => done, 'promise to settle', maxMs);
  return promise;
}

/** Lets queued deliveries and retries run for `ms` of fake time. */
export async function run(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
}

/** The first entity id `${prefix}N` that falls into `shardId`. */
export function entityInShard(shardId: number, numberOfShards: number, prefix = 'e'): string {
  for (let i = 0; i < 1_000_000; i++) {
    const id = `${prefix}${i}`;
    if (shardIdFor(id, numberOfShards) === shardId) return id;
  }
  throw new Error(`no entity id for shard ${shardId}`);
}

export interface CounterReply {
  readonly count: number;
  readonly node: string;
  readonly entityId: string;
}

export interface EntityEvent {
  readonly kind: 'start' | 'stop' | 'message';
  readonly entityId: string;
  readonly node: string;
  readonly message?: unknown;
}

/**
 * A counter entity: `{ op: 'inc' }` adds one, `{ op: 'get' }` reads, `{ op: 'fail' }` throws. Every answer
 * names the node, so tests see where the entity lives and whether its state survived.
 */
export function counter(events: EntityEvent[] = []): EntityBehavior {
  return (ctx) => {
    let count = 0;
    const node = ctx.self.toString();
    events.push({ kind: 'start', entityId: ctx.entityId, node });
    return {
      receive(message: unknown): CounterReply {
        events.push({ kind: 'message', entityId: ctx.entityId, node, message });
        const op = (message as { op?: unknown } | null)?.op;
        if (op === 'fail') throw new Error(`entity ${ctx.entityId} refused`);
        if (op === 'inc') count++;
        return { count, node, entityId: ctx.entityId };
      },
      stop(): void {
        events.push({ kind: 'stop', entityId: ctx.entityId, node });
      },
    };
  };
}

/** Where each shard lives according to the nodes' own regions (what actually runs, not what is believed). */
export function hostedShards(nodes: ReadonlyArray<TestNode>, typeName: string): Map<number, string[]> {
  const hosts = new Map<number, string[]>();
  for (const node of nodes) {
    for (const shardId of node.sharding.localShards(typeName)) hosts.set(shardId, [...(hosts.get(shardId) ?? []), node.key]);
  }
  return hosts;
}
