// One node process of S10 (forked by lib/delivery-cluster.ts, driven over IPC): a ClusterSharding node on its own
// TcpTransport with a fixed membership, hosting three entity types whose shards go where the parent says
// (`homes`): Remote and Local for throughput and latency, Stateful / Plain for the hand-off. Each entity counts
// the tells and sends it processed and, for paced messages, how long after `sentAt` (epoch ms, the same clock
// in every process of this machine) it processed them. Operations run here so their clock is the sender's.
import { once } from 'node:events';
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { NodeAddress } from '../../src/cluster/address.js';
import { TcpTransport } from '../../src/cluster/transport/tcp-transport.js';
import { loadTlsMaterial } from '../../src/tls/tls-files.js';
import { PlacementStore } from '../../crdt/index.js';
import { PlacementReplication } from '../../src/placement-replication/placement-replication.js';
import { ClusterSharding } from '../../src/sharding/cluster-sharding.js';
import type { EntityBehavior } from '../../src/sharding/core/entity-api.js';
import type { AllocationStrategy } from '../../src/sharding/strategies/index.js';
import type { EntityStoreConfig } from '../../src/entity-store/entity-store.js';
import { GroupCommit } from '../../src/entity-store/group-commit.js';
import { openEntityStore } from '../../src/entity-store/open-entity-store.js';
import { z } from 'zod';
import { staticMembership } from './static-membership.js';
import { windowed } from './windowed.js';

export const TYPES = ['Remote', 'Local', 'Stateful', 'Plain', 'Durable', 'Typed'] as const;

/** The Typed type's messages (S15's validation cost): a small schema, as an application's would be. */
const PROBE = z.object({ sentAt: z.number().optional() });
export const SHARDS = 10;
export const STATE_BYTES = 1024;

/** A message to an entity: `sentAt` (epoch ms) asks the entity to record its processing latency. */
export interface Probe {
  readonly sentAt?: number;
}

/** The operations the parent calls; each answers with the value shown. */
export interface DeliveryOps {
  /** Starts the transport; with `tls`, mutual TLS from those files (S14). */
  start(tls?: { cert: string; key: string; ca: string }): string;
  /** Joins; with `store`, the Durable type commits to it (S16), else it is an in-memory type like Remote. */
  join(all: readonly string[], store?: EntityStoreConfig): void;
  regions(): number;
  setHomes(homes: Readonly<Record<string, string>>): void;
  resetCounts(): void;
  processed(): { count: number; latenciesMs: number[] };
  waitProcessed(count: number): number;
  tell(type: string, total: number, ids: number): void;
  windowedSend(type: string, total: number, ids: number, window: number): number[];
  windowedAsk(type: string, total: number, ids: number, window: number): number[];
  paced(kind: 'tell' | 'send', type: string, total: number, intervalMs: number): number[];
  warm(type: string, entities: readonly string[]): void;
  move(type: string, shardId: number, probe: string, toPort: number): number;
  /** Listens for raw byte transfers (the hand-off's floor): each is a u32 length then that many bytes, acked by one byte. */
  sink(): number;
  /** Sends `bytes` raw bytes `trials` times over one TCP connection to a sink; ms from the write to the ack, each. */
  rawTransfer(port: number, bytes: number, trials: number): number[];
}

const epochNow = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const counts = { processed: 0, latenciesMs: [] as number[] };
const homes = new Map<string, string>();
let transport: TcpTransport | undefined;
let sharding: ClusterSharding | undefined;

const behavior =
  (stateful: boolean): EntityBehavior =>
  (ctx) => {
    const state = typeof ctx.restored === 'string' ? ctx.restored : 'x'.repeat(STATE_BYTES);
    return {
      receive: (message: unknown) => {
        counts.processed++;
        const sentAt = (message as Probe | undefined)?.sentAt;
        if (typeof sentAt === 'number') counts.latenciesMs.push(epochNow() - sentAt);
        return ctx.node.port;
      },
      ...(stateful ? { snapshot: () => state } : {}),
    };
  };

/** The sink's side of rawTransfer: counts each transfer's bytes and acks it with one byte once all arrived. */
function countAndAck(socket: Socket): void {
  let expected: number | undefined;
  let received = 0;
  let header = Buffer.alloc(0);
  socket.setNoDelay(true);
  socket.on('data', (data: Buffer) => {
    let chunk = data;
    if (expected === undefined) {
      header = Buffer.concat([header, chunk]);
      if (header.length < 4) return;
      expected = header.readUInt32BE(0);
      chunk = header.subarray(4);
      header = Buffer.alloc(0);
    }
    received += chunk.length;
    if (received < expected) return;
    expected = undefined;
    received = 0;
    socket.write(Buffer.from([1]));
  });
}

const running = (): ClusterSharding => {
  if (sharding === undefined) throw new Error('join first');
  return sharding;
};
const ref = (type: string, i: number, ids: number) => running().entityRefFor(type, `m${i % ids}`);

const ops: { [K in keyof DeliveryOps]: (...args: Parameters<DeliveryOps[K]>) => Promise<ReturnType<DeliveryOps[K]>> } =
  {
    async start(tls) {
      // IPC sends a missing argument as null.
      const material = tls === undefined || tls === null ? undefined : loadTlsMaterial(tls);
      transport = await TcpTransport.start({
        system: 'bench',
        ...(material === undefined ? {} : { tls: { current: () => material } }),
      });
      return transport.self.toString();
    },
    async join(all, store) {
      if (transport === undefined) throw new Error('start first');
      // IPC sends a missing argument as null.
      const entityStore = store === undefined || store === null ? undefined : await openEntityStore(store);
      const membership = staticMembership(transport.self, all.map(NodeAddress.parse));
      const replica = new PlacementReplication(
        new PlacementStore({ node: transport.self.toString() }),
        transport,
        membership,
      );
      sharding = new ClusterSharding({
        transport,
        membership,
        placements: replica,
        config: { coordinatorWarmupMs: 0, retryIntervalMs: 200 },
        ...(entityStore === undefined ? {} : { entityStore: { commit: new GroupCommit(entityStore) } }),
      });
      for (const type of TYPES) {
        const strategy: AllocationStrategy = {
          allocate: (_shardId, candidates) =>
            candidates.find((c) => c.toString() === homes.get(type)) ?? (candidates[0] as NodeAddress),
          rebalance: () => new Set(),
        };
        sharding.init({
          typeName: type,
          behavior: behavior(type === 'Stateful' || type === 'Durable'),
          numberOfShards: SHARDS,
          durable: type === 'Durable' && entityStore !== undefined,
          ...(type === 'Typed' ? { message: PROBE } : {}),
          allocationStrategy: strategy,
        });
      }
    },
    async regions() {
      const types = running().stats().types;
      return Math.min(...TYPES.map((type) => types[type]?.coordinator?.regions ?? 0));
    },
    async setHomes(next) {
      for (const [type, home] of Object.entries(next)) homes.set(type, home);
    },
    async resetCounts() {
      counts.processed = 0;
      counts.latenciesMs = [];
    },
    async processed() {
      return { count: counts.processed, latenciesMs: counts.latenciesMs };
    },
    async waitProcessed(count) {
      while (counts.processed < count) await new Promise((resolve) => setImmediate(resolve));
      return epochNow();
    },
    async tell(type, total, ids) {
      for (let i = 0; i < total; i++) ref(type, i, ids).tell({});
    },
    async windowedSend(type, total, ids, window) {
      return windowed(total, window, (i) => ref(type, i, ids).send({}));
    },
    async windowedAsk(type, total, ids, window) {
      return windowed(total, window, (i) =>
        ref(type, i, ids)
          .ask({})
          .then(() => undefined),
      );
    },
    async paced(kind, type, total, intervalMs) {
      const resolved: Array<Promise<number>> = [];
      for (let i = 0; i < total; i++) {
        const sentAt = epochNow();
        if (kind === 'tell') ref(type, i, 50).tell({ sentAt } satisfies Probe);
        else
          resolved.push(
            ref(type, i, 50)
              .send({ sentAt } satisfies Probe)
              .then(() => epochNow() - sentAt),
          );
        await sleep(intervalMs);
      }
      return Promise.all(resolved);
    },
    async warm(type, entities) {
      await windowed(entities.length, 64, (i) =>
        running()
          .entityRefFor(type, entities[i] as string)
          .send({}),
      );
    },
    async sink() {
      const server = createServer(countAndAck);
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      return (server.address() as AddressInfo).port;
    },
    async rawTransfer(port, bytes, trials) {
      const socket = createConnection({ port, host: '127.0.0.1', noDelay: true });
      await once(socket, 'connect');
      const payload = Buffer.alloc(4 + bytes, 0x78);
      payload.writeUInt32BE(bytes, 0);
      const durations: number[] = [];
      try {
        for (let trial = 0; trial < trials; trial++) {
          const start = performance.now();
          const acked = once(socket, 'data');
          socket.write(payload);
          await acked;
          durations.push(performance.now() - start);
        }
      } finally {
        socket.destroy();
      }
      return durations;
    },
    async move(type, shardId, probe, toPort) {
      const start = performance.now();
      await running().rebalanceNow(type, [shardId]);
      // Moved when the new home answers: every entity restored before its first message there.
      while ((await running().entityRefFor(type, probe).ask<number>({})) !== toPort) await sleep(1);
      return performance.now() - start;
    },
  };

interface Call {
  readonly id: number;
  readonly op: keyof DeliveryOps;
  readonly args: unknown[];
}

process.on('message', (call: Call) => {
  const run = ops[call.op] as (...args: unknown[]) => Promise<unknown>;
  run(...call.args).then(
    (result) => process.send?.({ id: call.id, result }),
    (error: unknown) => process.send?.({ id: call.id, error: error instanceof Error ? error.message : String(error) }),
  );
});
// The parent's channel keeps this process alive; it ends when the parent disconnects or kills it.
process.on('disconnect', () => process.exit(0));
