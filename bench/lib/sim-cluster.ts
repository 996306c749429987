// Builds an in-process cluster of one protocol on a MemoryNetwork whose deliveries run on a virtual clock:
// N nodes, every one preloaded with the same placements, all traffic counted at the transport boundary.
import { NodeAddress } from '../../src/cluster/address.js';
import { MemoryNetwork } from '../../src/cluster/transport/memory-transport.js';
import type { Protocol, SimNode } from '../protocols/types.js';
import { seededRandom } from './seeded-random.js';
import { CountingTransport, TrafficCounter } from './traffic.js';
import { VirtualClock } from './virtual-clock.js';

/** Simulated wall clocks start here, so HLC timestamps look like real ones. */
export const EPOCH_MS = 1_750_000_000_000;

export interface SimClusterOptions {
  readonly nodes: number;
  /** One-way delay of every message; default 1 ms. */
  readonly delayMs?: number;
  readonly seed: number;
  readonly preload?: ReadonlyArray<readonly [number, string]>;
  /** Each node's wall clock is off by a uniform amount in [-skewMs, +skewMs]; default 0. */
  readonly skewMs?: number;
}

export interface SimCluster {
  readonly clock: VirtualClock;
  readonly network: MemoryNetwork;
  readonly traffic: TrafficCounter;
  readonly addresses: readonly NodeAddress[];
  readonly nodes: readonly SimNode[];
  readonly random: () => number;
  /** Called with (node index, shards) whenever a node's visible placements change. */
  onNodeChange: (node: number, shardIds: readonly number[]) => void;
  close(): void;
}

export function simAddress(i: number): NodeAddress {
  return new NodeAddress('bench', '127.0.0.1', 20_000 + i);
}

export function buildSimCluster(protocol: Protocol, options: SimClusterOptions): SimCluster {
  const clock = new VirtualClock();
  const random = seededRandom(options.seed);
  const network = new MemoryNetwork({
    seed: options.seed,
    delayMs: options.delayMs ?? 1,
    schedule: (fn, ms) => clock.schedule(fn, ms, true),
  });
  const traffic = new TrafficCounter();
  const addresses = Array.from({ length: options.nodes }, (_, i) => simAddress(i));
  const preloaded =
    options.preload === undefined ? undefined : protocol.preload(options.preload, () => EPOCH_MS + clock.now());
  const skew = options.skewMs ?? 0;
  const nodes: SimNode[] = [];
  const cluster: SimCluster = {
    clock,
    network,
    traffic,
    addresses,
    nodes,
    random,
    onNodeChange: () => undefined,
    close() {
      for (const node of nodes) node.close();
    },
  };
  addresses.forEach((self, i) => {
    const offset = skew === 0 ? 0 : Math.round((random() * 2 - 1) * skew);
    const node = protocol.create(
      {
        clock,
        transport: new CountingTransport(network.transport(self), traffic),
        self,
        all: addresses,
        random: seededRandom(options.seed * 1000 + i + 1),
        now: () => EPOCH_MS + clock.now() + offset,
      },
      preloaded,
    );
    node.onChange((shardIds) => cluster.onNodeChange(i, shardIds));
    nodes.push(node);
  });
  return cluster;
}

/** Preloaded placements: shards 0..count-1 pinned to random nodes of the cluster. */
export function preloadEntries(count: number, nodes: number, random: () => number): Array<[number, string]> {
  return Array.from({ length: count }, (_, shardId): [number, string] => [
    shardId,
    simAddress(Math.floor(random() * nodes)).toString(),
  ]);
}
