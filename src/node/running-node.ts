// A running node as startNode returns it, and how it stopped: apart from node.ts so that what an application
// brings (its routes take the running node) can name it without importing the wiring.
import type { FastifyInstance } from 'fastify';
import type { Cluster } from '../cluster/membership/cluster.js';
import type { NodeAddress } from '../cluster/address.js';
import type { TcpTransport } from '../cluster/transport/tcp-transport.js';
import type { ClusterSharding } from '../sharding/cluster-sharding.js';
import type { ExternalAllocationController } from '../sharding/api/external-allocation-controller.js';
import type { NodeConfig } from './config.js';

/** A node started by startNode: its parts, the management API's URL, and how to stop it. */
export interface RunningNode {
  readonly address: NodeAddress;
  /** Base URL of the management API, e.g. http://127.0.0.1:8551. */
  readonly httpUrl: string;
  readonly config: NodeConfig;
  readonly transport: TcpTransport;
  readonly cluster: Cluster;
  readonly sharding: ClusterSharding;
  readonly http: FastifyInstance;
  /** The explicit placements of one of this node's entity types; `unknown_type` for any other name. */
  placements(typeName: string): ExternalAllocationController;
  /** The demo Counter's placements (`placements('Counter')`); `unknown_type` when the node runs application types. */
  readonly counterPlacements: ExternalAllocationController;
  /**
   * Reads the tokens file and the TLS files (cluster and management) again now, as the CLI's node does on SIGHUP;
   * they are also followed on disk. A file that does not check out leaves the earlier material in force and is said
   * in health.
   */
  reloadFiles(): void;
  /** Graceful stop: hands this node's shards off, leaves the cluster, then closes everything. Idempotent. */
  stop(): Promise<void>;
  /** Resolves when the node stopped: by stop(), or because the cluster downed or removed it. */
  readonly stopped: Promise<StopReason>;
}

/** How a node stopped: a graceful leave, or the cluster put it out (downed, or removed by the other members). */
export type StopReason = 'left' | 'downed' | 'removed';
