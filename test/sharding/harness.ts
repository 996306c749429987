// Sharding test harness: several ClusterSharding nodes over one MemoryNetwork and a FakeCluster, driven by
// fake timers (the in-process cluster and fake-time waiting of test/support/), plus the counter entity and the
// shard-location readings the sharding tests share.
import type { EntityStore } from '../../src/entity-store/entity-store.js';
import { GroupCommit } from '../../src/entity-store/group-commit.js';
import { pino } from 'pino';
import type { Logger } from '../../src/logging.js';
import type { ShardedTypeOptions } from '../../src/sharding/cluster-sharding.js';
import type { ShardingConfig } from '../../src/sharding/core/config.js';
import type { CoordinatorEvents } from '../../src/sharding/coordinator/shard-coordinator.js';
import type { EntityBehavior } from '../../src/sharding/core/entity-api.js';
import { shardIdFor } from '../../src/sharding/core/shard-id.js';
import type { AllocationStrategy } from '../../src/sharding/strategies/index.js';
import { advanceUntil, runFor, settleInFakeTime } from '../support/fake-time.js';
import {
  FAST_SHARDING_CONFIG,
  InProcessCluster,
  startShardingNode,
  useInProcessClusters,
  type ShardingNode,
} from '../support/in-process-cluster.js';
import type { NodeAddress } from '../../src/cluster/address.js';
import { counterBehavior } from '../../src/node/counter.js';

/** Fast protocol timers; no periodic rebalance unless a test asks for it. */
export const TEST_CONFIG: Partial<ShardingConfig> = FAST_SHARDING_CONFIG;

export type TestNode = ShardingNode;

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

export class TestCluster extends InProcessCluster<TestNode> {
  constructor(
    private readonly options: {
      config?: Partial<ShardingConfig>;
      seed?: number;
      logger?: Logger;
      delayMs?: number;
      /** Each node's event listener, by its address. */
      events?: (address: NodeAddress) => CoordinatorEvents;
      /** The store durable types commit to, shared by every node (each its own group commit, as a host). */
      entityStore?: EntityStore;
    } = {},
  ) {
    super(options);
  }

  protected startMember(address: NodeAddress): TestNode {
    return startShardingNode(this.net, this.members.membership(address), {
      ...(this.options.config === undefined ? {} : { config: this.options.config }),
      ...(this.options.logger === undefined ? {} : { logger: this.options.logger }),
      ...(this.options.events === undefined ? {} : { events: this.options.events(address) }),
      ...(this.options.entityStore === undefined
        ? {}
        : { entityStore: { commit: new GroupCommit(this.options.entityStore) } }),
    });
  }

  initAll(options: ShardedTypeOptions | ((node: TestNode) => ShardedTypeOptions)): void {
    for (const node of this.nodes) node.sharding.init(typeof options === 'function' ? options(node) : options);
  }

  /** A crash: the process is gone (sharding stopped, transport closed) but the membership still lists it. */
  async crash(node: TestNode): Promise<void> {
    await this.stopNode(node);
  }

  /** A crash after which the membership drops the node at once (as when the leader removes it). */
  async crashAndRemove(node: TestNode): Promise<void> {
    await this.crash(node);
    this.members.remove(node.address);
  }
}

/**
 * The lifecycle of a sharding test file: fake timers and a fresh cluster from `create` before each test;
 * after it, every cluster the test made (it may replace the fresh one with its own options) is shut down.
 */
export function useTestClusters(create: () => TestCluster): void {
  useInProcessClusters(() => void create());
}

/** Advances fake time in small steps until `condition` holds; fails after `maxMs` of fake time. */
export async function eventually(condition: () => boolean, what: string, maxMs = 30_000): Promise<void> {
  await advanceUntil(condition, what, { maxMs });
}

/** Advances fake time until every promise has resolved; fails after `maxMs` of fake time (a rejection never counts). */
export async function everyResolved(
  promises: ReadonlyArray<Promise<unknown>>,
  what: string,
  maxMs: number,
): Promise<void> {
  let resolved = 0;
  for (const promise of promises) void promise.then(() => resolved++);
  await eventually(() => resolved === promises.length, what, maxMs);
}

/** Advances fake time until the promise settles, then returns its outcome. */
export const settle: <T>(promise: Promise<T>, maxMs?: number) => Promise<T> = settleInFakeTime;

/** Lets queued deliveries and retries run for `ms` of fake time. */
export const run: (ms: number) => Promise<void> = runFor;

/**
 * A graceful move of a shard of `Counter`: `retarget` points the test's strategy at `to`, `via` asks for the
 * rebalance, and it waits until the shard runs on `to` and no longer on `from`.
 */
export async function moveShard(
  move: { readonly via: TestNode; readonly shardId: number; readonly from: TestNode; readonly to: TestNode },
  retarget: (to: TestNode) => void,
): Promise<void> {
  const { via, shardId, from, to } = move;
  retarget(to);
  await settle(via.sharding.rebalanceNow('Counter', [shardId]));
  await eventually(
    () =>
      to.sharding.localShards('Counter').includes(shardId) && !from.sharding.localShards('Counter').includes(shardId),
    `shard ${shardId} on ${to.key}`,
  );
}

/** The first entity id `${prefix}N` that falls into `shardId`. */
export function entityInShard(shardId: number, numberOfShards: number, prefix = 'e'): string {
  for (let i = 0; i < 1_000_000; i++) {
    const id = `${prefix}${i}`;
    if (shardIdFor(id, numberOfShards) === shardId) return id;
  }
  throw new Error(`no entity id for shard ${shardId}`);
}

/**
 * A strategy that homes shards on the node `target()` names at the time, when it is a candidate: every shard,
 * or only `onlyShard` when given. Any other shard goes to the lowest address. It never moves shards itself.
 */
/**
 * A new cluster of three nodes (a, the coordinator; b; c) running Counter over `numberOfShards` shards, each shard
 * allocated where `target` says when it is (the hand-off tests move shards by changing what it says).
 */
export function counterNodes(
  numberOfShards: number,
  target: () => string,
): { readonly cluster: TestCluster; readonly nodes: readonly [TestNode, TestNode, TestNode] } {
  const cluster = new TestCluster();
  const nodes = cluster.addNodes(7001, 7002, 7003);
  cluster.initAll({
    typeName: 'Counter',
    behavior: counterBehavior,
    numberOfShards,
    allocationStrategy: pinTo(target),
  });
  return { cluster, nodes };
}

export function pinTo(target: () => NodeAddress | string, onlyShard?: number): AllocationStrategy {
  return {
    allocate(shardId, candidates) {
      const wanted = onlyShard === undefined || shardId === onlyShard ? target().toString() : undefined;
      return (
        candidates.find((c) => c.toString() === wanted) ??
        ([...candidates].sort((x, y) => (x.toString() < y.toString() ? -1 : 1))[0] as NodeAddress)
      );
    },
    rebalance: () => new Set(),
  };
}

/** Asks `entityId` to count up via `node` without waiting (20 s timeout); `answer()` is its reply once there is one. */
export function askLater(node: TestNode, entityId: string): { answer(): CounterReply | undefined } {
  let reply: CounterReply | undefined;
  void node.sharding
    .entityRefFor('Counter', entityId)
    .ask<CounterReply>({ op: 'inc' }, { timeoutMs: 20_000 })
    .then((value) => (reply = value));
  return { answer: () => reply };
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
    const node = ctx.node.toString();
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
export function hostedShards(
  nodes: ReadonlyArray<Pick<TestNode, 'key' | 'sharding'>>,
  typeName: string,
): Map<number, string[]> {
  const hosts = new Map<number, string[]>();
  for (const node of nodes) {
    for (const shardId of node.sharding.localShards(typeName))
      hosts.set(shardId, [...(hosts.get(shardId) ?? []), node.key]);
  }
  return hosts;
}
