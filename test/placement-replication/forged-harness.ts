// In-process replicas behind PlacementReplication on one MemoryNetwork whose deliveries the test runs
// (`drain`), plus a forger: a transport at any address that sends placement sync messages of its own
// making through the real wire encoding. For replaying the attacks of issue 27 without processes.
import { PlacementStore, type PlacementLog, type PlacementStoreOptions } from '../../crdt/index.js';
import type { LogThrottleOptions } from '../../src/logging.js';
import type { NodeAddress } from '../../src/cluster/address.js';
import type { MemberInfo } from '../../src/cluster/member.js';
import { MemoryNetwork, type MemoryTransport } from '../../src/cluster/transport/memory-transport.js';
import { PlacementReplication } from '../../src/placement-replication/placement-replication.js';
import { PLACEMENT_SYNC_MESSAGES, type PlacementSyncMessage } from '../../src/placement-replication/sync-messages.js';
import { ManualTimers } from '../crdt/helpers.js';
import { memberInfo, staticMembership, testAddress } from '../support/members.js';

export interface ForgedCluster {
  readonly addresses: readonly NodeAddress[];
  readonly stores: readonly PlacementStore[];
  readonly replications: readonly PlacementReplication[];
  readonly timers: ManualTimers;
  /** Runs every scheduled delivery (and those they cause) until none is left. */
  drain(): void;
  /** Anti-entropy rounds with deliveries in between. */
  settle(rounds?: number): void;
  /** A transport at `address` (a member's or not) that sends whatever placement message it is given. */
  forger(address: NodeAddress): (to: NodeAddress, message: PlacementSyncMessage) => void;
  close(): void;
}

export function forgedCluster(
  size: number,
  options: {
    readonly basePort?: number;
    readonly store?: Omit<PlacementStoreOptions, 'node'>;
    readonly entityTypes?: ReadonlyMap<string, { readonly numberOfShards: number }>;
    readonly log?: PlacementLog;
    readonly peerLog?: LogThrottleOptions;
    /** Each replica's wall clock, by index (default the store option's, or Date.now). */
    readonly clocks?: ReadonlyArray<() => number>;
  } = {},
): ForgedCluster {
  const queue: Array<() => void> = [];
  const network = new MemoryNetwork({ schedule: (fn) => queue.push(fn) });
  const addresses = Array.from({ length: size }, (_, i) => testAddress((options.basePort ?? 41_000) + i));
  const members: MemberInfo[] = addresses.map((address) => memberInfo({ address }));
  const timers = new ManualTimers();
  const stores = addresses.map((address, i) => {
    const now = options.clocks?.[i];
    return new PlacementStore({ ...options.store, ...(now === undefined ? {} : { now }), node: address.toString() });
  });
  const transports = new Map(addresses.map((address) => [address.toString(), network.transport(address)]));
  const replications = addresses.map(
    (address, i) =>
      new PlacementReplication(
        stores[i] as PlacementStore,
        transports.get(address.toString()) as MemoryTransport,
        staticMembership(address, () => members),
        {
          setInterval: timers.setInterval,
          clearInterval: timers.clearInterval,
          ...(options.log === undefined ? {} : { log: options.log }),
          ...(options.peerLog === undefined ? {} : { peerLog: options.peerLog }),
          ...(options.entityTypes === undefined
            ? {}
            : { entityTypes: () => options.entityTypes as ReadonlyMap<string, { readonly numberOfShards: number }> }),
        },
      ),
  );
  const drain = (): void => {
    for (let n = 0; n < 1_000_000 && queue.length > 0; n++) (queue.shift() as () => void)();
  };
  const forgers = new Map<string, MemoryTransport>();
  drain();
  return {
    addresses,
    stores,
    replications,
    timers,
    drain,
    settle: (rounds = 20) => {
      for (let i = 0; i < rounds; i++) {
        timers.fire();
        drain();
      }
    },
    forger: (address) => {
      if (transports.has(address.toString())) {
        // A member's address is taken by its own transport: the message is handed to the receiver as if it came from there.
        return (to, message) => {
          transports.get(to.toString())?.deliver(address, message);
          drain();
        };
      }
      const transport = forgers.get(address.toString()) ?? network.transport(address);
      if (!forgers.has(address.toString())) transport.register(PLACEMENT_SYNC_MESSAGES);
      forgers.set(address.toString(), transport);
      return (to, message) => {
        transport.send(to, message);
        drain();
      };
    },
    close: () => {
      for (const replication of replications) replication.close();
      for (const transport of forgers.values()) void transport.close();
    },
  };
}
